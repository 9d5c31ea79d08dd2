"""The configmap trait: a v1 ConfigMap named by ``name``, the twin of the configmap component, and
with ``mountPath`` a configMap volume plus a mount on the main container."""

from __future__ import annotations

from typing import Any

from farm.core.components.configmap import (
    CONFIGMAP_KEYS,
    check_keys,
    generate_configmap,
    parse_configmap_properties,
)
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import (
    COMMON_KEYS,
    add_mount,
    add_volume,
    app_labels,
    check_rendering_keys,
    required_string,
    string_prop,
)

KEYS = CONFIGMAP_KEYS | COMMON_KEYS | {"name", "mountPath"}


def validate_rendering(rendering: dict[str, Any], key: str) -> dict[str, Any]:
    """The configmap capability takes no rendering keys."""
    check_rendering_keys(rendering, (), "configmap")
    return rendering


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    props = app.properties
    check_keys(props, KEYS)
    name = required_string(props, "name")
    config = parse_configmap_properties(props)
    mount_path = string_prop(props, "mountPath")
    if mount_path:
        add_volume(app, {"configMap": {"name": name}, "name": name})
        add_mount(app, name, mount_path)
    return [generate_configmap(config, name, app.ctx.namespace, app_labels(app.component.name))]


HANDLER = TraitType(
    name="configmap",
    apply=apply,
    capability="none",
    validate_rendering=validate_rendering,
    emits=("v1 ConfigMap",),
)
