"""The volsync trait: a volsync.backube/v1alpha1 ReplicationSource ``<sourcePVC>-backup``, a Restic
backup of one of the component's claims on a schedule (launcher-pipeline §2 "volsync")."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import parse_int32_field, parse_object_field
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import (
    COMMON_KEYS,
    check_known_keys,
    check_rendering_keys,
    metadata,
    required_string,
    string_prop,
)

RENDERING_KEYS = ("storageClassName", "volumeSnapshotClassName")
KEYS = (
    COMMON_KEYS
    | {"sourcePVC", "schedule", "repository", "copyMethod", "pruneIntervalDays", "retain"}
    | set(RENDERING_KEYS)
)
COPY_METHODS = ("Direct", "Clone", "Snapshot")
DEFAULT_RETAIN = {"daily": 7, "weekly": 4, "monthly": 3}
DEFAULT_PRUNE_DAYS = 14


def validate_rendering(rendering: dict[str, Any], key: str) -> dict[str, Any]:
    """Only storage-class keys may come from the platform."""
    check_rendering_keys(rendering, RENDERING_KEYS, "volsync")
    return rendering


def _retain(props: dict[str, Any]) -> dict[str, Any]:
    retain, present = parse_object_field(props, "retain")
    if not present:
        return dict(DEFAULT_RETAIN)
    check_known_keys(retain, ("hourly", "daily", "weekly", "monthly", "yearly", "within"), "retain")
    out: dict[str, Any] = {}
    for key in ("hourly", "daily", "weekly", "monthly", "yearly"):
        value, has = parse_int32_field(retain, key, f"retain.{key}")
        if has:
            out[key] = value
    within = string_prop(retain, "within", "retain.within")
    if within:
        out["within"] = within
    return out


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    props = app.properties
    check_known_keys(props, KEYS)
    source = required_string(props, "sourcePVC")
    copy_method = string_prop(props, "copyMethod") or "Snapshot"
    if copy_method not in COPY_METHODS:
        raise FieldError(f'copyMethod: must be one of {", ".join(COPY_METHODS)}, got "{copy_method}"')
    prune, has_prune = parse_int32_field(props, "pruneIntervalDays")
    restic: dict[str, Any] = {
        "copyMethod": copy_method,
        "customCA": {},
        "pruneIntervalDays": prune if has_prune else DEFAULT_PRUNE_DAYS,
        "repository": string_prop(props, "repository") or f"{app.component.name}-volsync-secret",
        "retain": _retain(props),
    }
    for key in RENDERING_KEYS:
        value = string_prop(props, key)
        if value:
            restic[key] = value
    spec: dict[str, Any] = {"sourcePVC": source, "restic": restic}
    schedule = string_prop(props, "schedule")
    if schedule:
        spec["trigger"] = {"schedule": schedule}
    source_obj = {
        "apiVersion": "volsync.backube/v1alpha1",
        "kind": "ReplicationSource",
        "metadata": metadata(f"{source}-backup", app.ctx.namespace),
        "spec": spec,
    }
    return [source_obj]


HANDLER = TraitType(
    name="volsync",
    apply=apply,
    capability="optional",
    validate_rendering=validate_rendering,
    emits=("volsync.backube/v1alpha1 ReplicationSource",),
)
