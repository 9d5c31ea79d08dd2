"""Helpers the trait handlers share: closed property sets, object metadata, naming, rendering
checks and the pod-spec accessors decorator traits use."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from farm.core.errors import FieldError, TransformError
from farm.core.fields import go_type_name, go_value_repr
from farm.core.model import Generated
from farm.core.names import component_label_value
from farm.core.registry import TraitApplication

# Keys every trait accepts: ``scope`` selects the capability key (seed 000 §3).
COMMON_KEYS = frozenset({"scope"})


def check_known_keys(props: dict[str, Any], allowed: Iterable[str], path: str = "") -> None:
    """Refuse a property the trait does not declare (the authored-property check is closed)."""
    known = set(allowed)
    for key in sorted(props):
        if key not in known and props[key] is not None:
            where = f"{path}.{key}" if path else key
            raise FieldError(f"{where}: unknown property (allowed: {', '.join(sorted(known))})")


def check_rendering_keys(rendering: dict[str, Any], allowed: Iterable[str], trait: str) -> None:
    """A built-in capability rendering is closed: an unknown key is a build error (seed 000 §2)."""
    known = set(allowed)
    for key in sorted(rendering):
        if key not in known:
            if not known:
                raise FieldError(
                    f'rendering key "{key}" is not allowed: trait "{trait}" takes no rendering keys'
                )
            raise FieldError(
                f'unknown rendering key "{key}" for trait "{trait}" (allowed: {", ".join(sorted(known))})'
            )


def app_labels(component: str) -> dict[str, str]:
    return {"app": component_label_value(component)}


def metadata(name: str, namespace: str | None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    return meta


def trait_object_name(app: TraitApplication, suffix: str) -> str:
    """``<component>-<suffix>``; the ``name`` property overrides it and ``scope`` appends ``-<scope>``."""
    name = string_prop(app.properties, "name")
    if name:
        return name
    base = f"{app.component.name}-{suffix}"
    scope = string_prop(app.properties, "scope")
    return f"{base}-{scope}" if scope else base


def string_prop(props: dict[str, Any], key: str, path: str | None = None) -> str:
    value = props.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FieldError(f"{path or key}: must be a string, got {go_type_name(value)}")
    return value


def required_string(props: dict[str, Any], key: str, path: str | None = None) -> str:
    value = string_prop(props, key, path)
    if not value:
        raise FieldError(f"{path or key} is required")
    return value


def go_stringify(value: Any) -> str:
    """How Go's ``%v`` prints a scalar annotation value."""
    if isinstance(value, str):
        return value
    return go_value_repr(value)


def string_map(props: dict[str, Any], key: str, path: str | None = None) -> dict[str, str]:
    """A map of strings whose scalar values are stringified with ``%v`` (annotations)."""
    value = props.get(key)
    if value is None:
        return {}
    where = path or key
    if not isinstance(value, dict):
        raise FieldError(f"{where}: must be an object, got {go_type_name(value)}")
    out: dict[str, str] = {}
    for name, item in value.items():
        if item is None:
            continue
        if isinstance(item, (dict, list)):
            raise FieldError(f"{where}.{name}: must be a string, got {go_type_name(item)}")
        out[str(name)] = go_stringify(item)
    return out


def without_nulls(value: Any) -> Any:
    """A deep copy with null map entries dropped (null is absence at any depth)."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return copy.deepcopy(value)


def require_pod_spec(app: TraitApplication) -> dict[str, Any]:
    """The component's pod spec, for traits that decorate the workload."""
    pod = app.generated.pod_spec()
    if pod is None:
        raise TransformError(
            f'component "{app.component.name}" generates no workload the trait "{app.trait.type}" can act on'
        )
    return pod


def main_container(app: TraitApplication) -> dict[str, Any]:
    pod = require_pod_spec(app)
    containers = pod.get("containers") or []
    if not containers:
        raise TransformError(f'component "{app.component.name}" has no container')
    return containers[0]


def add_volume(app: TraitApplication, volume: dict[str, Any]) -> None:
    """Append a pod volume; refuse a name another volume or a device already uses."""
    pod = require_pod_spec(app)
    name = volume["name"]
    for existing in pod.get("volumes") or []:
        if existing.get("name") == name:
            raise FieldError(f'volume "{name}" already exists on component "{app.component.name}"')
    pod.setdefault("volumes", []).append(volume)


def add_mount(app: TraitApplication, name: str, mount_path: str, read_only: bool = False) -> None:
    container = main_container(app)
    for device in container.get("volumeDevices") or []:
        if device.get("devicePath") == mount_path:
            raise FieldError(
                f'mountPath "{mount_path}" collides with the device path of volume "{device.get("name")}"'
            )
    mount: dict[str, Any] = {"mountPath": mount_path, "name": name}
    if read_only:
        mount["readOnly"] = True
    container.setdefault("volumeMounts", []).append(mount)


def service_selector(generated: Generated, component: str) -> dict[str, str]:
    selector = generated.facts.get("service_selector")
    if isinstance(selector, dict) and selector:
        return dict(selector)
    return app_labels(component)
