"""The secret component: a v1 Secret named after the component, carrying the app label, with
every entry written base64-encoded under ``data`` (seed 002 l.921-928). Explicit secret material
is refused by a policy that forbids it (refusal class explicit-secret)."""

from __future__ import annotations

import base64
from typing import Any

from farm.core.components.configmap import check_keys, check_size, decode_base64, validate_key
from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_bool_field, parse_object_field
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.names import component_label_value, is_dns1123_subdomain
from farm.core.policy import REFUSAL_EXPLICIT_SECRET, Policy, refuse
from farm.core.registry import ComponentType

SECRET_KEYS = frozenset({"stringData", "data", "type", "immutable"})
EXPLICIT_SECRET_MESSAGE = (
    "secret: the environment policy forbids explicit secrets; reference a Secret created out of band instead"
)


def check_explicit_secret_policy(policy: Policy) -> None:
    if not policy.explicit_secrets_allowed:
        raise refuse(EXPLICIT_SECRET_MESSAGE, REFUSAL_EXPLICIT_SECRET)


def _string_data(props: dict[str, Any]) -> dict[str, str]:
    """stringData values are plain strings; no refusal carries a value."""
    values, _ = parse_object_field(props, "stringData")
    out = {}
    for name in sorted(values):
        validate_key("stringData", name)
        value = values[name]
        if value is None:
            continue
        if not isinstance(value, str):
            raise FieldError(f"stringData.{name}: must be a string, got {go_type_name(value)}")
        out[name] = value
    return out


def parse_secret_properties(props: dict[str, Any]) -> dict[str, Any]:
    """The Secret's fields: ``data`` (name -> decoded bytes), ``type``, ``immutable``."""
    plain = _string_data(props)
    encoded, _ = parse_object_field(props, "data")
    decoded: dict[str, bytes] = {name: value.encode("utf-8") for name, value in plain.items()}
    for name in sorted(encoded):
        if encoded[name] is None:
            continue
        validate_key("data", name)
        if name in plain:
            raise FieldError(f'data.{name}: key "{name}" is also in stringData')
        decoded[name] = decode_base64(f"data.{name}", encoded[name])
    check_size({}, decoded, "Secret")
    secret_type = props.get("type")
    if secret_type is not None and not isinstance(secret_type, str):
        raise FieldError(f"type: must be a string, got {go_type_name(secret_type)}")
    immutable, present = parse_bool_field(props, "immutable")
    return {"data": decoded, "type": secret_type or None, "immutable": immutable if present else None}


def generate_secret(
    config: dict[str, Any], name: str, namespace: str, labels: dict[str, str]
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"labels": dict(labels), "name": name, "namespace": namespace},
    }
    if config["data"]:
        obj["data"] = {k: base64.b64encode(v).decode("ascii") for k, v in config["data"].items()}
    if config["type"]:
        obj["type"] = config["type"]
    if config["immutable"] is not None:
        obj["immutable"] = config["immutable"]
    return obj


def _object_name(component: ComponentSpec) -> str:
    """The Secret is named after the component, or its objectName (seed 002, secret)."""
    name = component.properties.get("objectName")
    if name is None or name == "":
        return component.name
    if not isinstance(name, str):
        raise FieldError(f"objectName: must be a string, got {go_type_name(name)}")
    if not is_dns1123_subdomain(name):
        raise FieldError(f'objectName: "{name}" is not a valid DNS-1123 subdomain')
    return name


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    check_keys(component.properties, SECRET_KEYS | {"objectName"})
    name = _object_name(component)
    config = parse_secret_properties(component.properties)
    check_explicit_secret_policy(ctx.policy)
    labels = {"app": component_label_value(component.name)}
    return Generated(objects=[generate_secret(config, name, ctx.namespace, labels)])


HANDLER = ComponentType(name="secret", build=build, emits=("v1 Secret",), status="kind")
