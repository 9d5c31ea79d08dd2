"""The configmap component (a v1 ConfigMap named after the component and carrying the component's
app label) and the parser and builder its twin, the configmap trait, shares.

Seed 002 l.901 (one object, named after the component, nothing else), l.919 (data, binaryData,
immutable; the size limit; key checks in sorted order; the trait is the kind's twin through
GenerateConfigMap(config, name, namespace, labels)), l.921 (secret is built "on the recipe of
configmap": named after the component and "carrying the component's app label") and l.1680 (the
trait's ConfigMaps are "labelled app: <label value>"). The transform adds the component label.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_bool_field, parse_object_field
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.names import component_label_value
from farm.core.registry import ComponentType

MAX_SIZE = 1_048_576
CONFIGMAP_KEYS = frozenset({"data", "binaryData", "immutable"})
_KEY = re.compile(r"^[-._a-zA-Z0-9]+\Z")


@dataclass
class ConfigMapConfig:
    data: dict[str, str] = field(default_factory=dict)
    binary_data: dict[str, str] = field(default_factory=dict)  # base64 as authored
    immutable: bool | None = None


def validate_key(where: str, key: str) -> None:
    """A ConfigMap or Secret key as the API server accepts it (IsConfigMapKey)."""
    if len(key) > 253:
        raise FieldError(f'{where}: key "{key}" must be no more than 253 characters')
    if not _KEY.match(key):
        raise FieldError(
            f'{where}: key "{key}" is invalid: a valid config key must consist of alphanumeric characters, '
            "'-', '_' or '.'"
        )
    if key in (".", "..") or key.startswith(".."):
        raise FieldError(f"{where}: key \"{key}\" is invalid: must not be '.' or '..' or start with '..'")


def decode_base64(where: str, value: Any) -> bytes:
    if not isinstance(value, str):
        raise FieldError(f"{where}: must be a string, got {go_type_name(value)}")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise FieldError(f"{where}: illegal base64 data") from None


def string_values(props: dict[str, Any], key: str) -> dict[str, str]:
    """A map whose values must be strings: a number or a boolean is refused, not stringified."""
    values, _ = parse_object_field(props, key)
    for name in sorted(values):
        validate_key(key, name)
        value = values[name]
        if value is not None and not isinstance(value, str):
            raise FieldError(f"{key}.{name}: must be a string, got {go_type_name(value)}")
    return {k: v for k, v in values.items() if v is not None}


def check_size(data: dict[str, str], binary: dict[str, bytes], what: str) -> None:
    total = sum(len(v.encode("utf-8")) for v in data.values()) + sum(len(v) for v in binary.values())
    if total > MAX_SIZE:
        raise FieldError(f"{what} is too large: {total} bytes exceeds the limit of {MAX_SIZE} bytes")


def parse_configmap_properties(props: dict[str, Any]) -> ConfigMapConfig:
    config = ConfigMapConfig(data=string_values(props, "data"))
    binary, _ = parse_object_field(props, "binaryData")
    decoded: dict[str, bytes] = {}
    for name in sorted(binary):
        if binary[name] is None:
            continue
        validate_key("binaryData", name)
        if name in config.data:
            raise FieldError(f'binaryData.{name}: key "{name}" is also in data')
        decoded[name] = decode_base64(f"binaryData.{name}", binary[name])
        config.binary_data[name] = binary[name]
    check_size(config.data, decoded, "ConfigMap")
    immutable, present = parse_bool_field(props, "immutable")
    config.immutable = immutable if present else None
    return config


def generate_configmap(
    config: ConfigMapConfig, name: str, namespace: str, labels: dict[str, str] | None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    if config.data:
        obj["data"] = dict(config.data)
    if config.binary_data:
        obj["binaryData"] = dict(config.binary_data)
    if config.immutable is not None:
        obj["immutable"] = config.immutable
    return obj


def check_keys(props: dict[str, Any], allowed: frozenset[str]) -> None:
    for key in sorted(props):
        if key not in allowed and props[key] is not None:
            raise FieldError(f"{key}: unknown property (allowed: {', '.join(sorted(allowed))})")


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    check_keys(component.properties, CONFIGMAP_KEYS)
    config = parse_configmap_properties(component.properties)
    labels = {"app": component_label_value(component.name)}
    return Generated(objects=[generate_configmap(config, component.name, ctx.namespace, labels)])


HANDLER = ComponentType(name="configmap", build=build, emits=("v1 ConfigMap",), status="kind")
