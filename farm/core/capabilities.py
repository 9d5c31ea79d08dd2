"""Capability key resolution and the merge of a capability rendering with authored properties
(seed 000, sections 3, 4 and 6)."""

from __future__ import annotations

import math
from typing import Any

from farm.core.errors import CapabilityError

MISSING_CAPABILITY = "oam: capability key not found in ClusterProfile"


def capability_keys(trait_type: str, properties: dict[str, Any]) -> list[str]:
    """The keys looked up for a trait, in order: ``<type>.<scope>`` then ``<type>``."""
    scope = properties.get("scope")
    if isinstance(scope, str) and scope:
        return [f"{trait_type}.{scope}", trait_type]
    return [trait_type]


def resolve_capability(
    capabilities: dict[str, dict[str, Any]], trait_type: str, properties: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    """The first capability binding found for the trait, as ``(key, rendering)``, or None.
    ``capabilities`` maps each key to its evaluated rendering."""
    for key in capability_keys(trait_type, properties):
        if key in capabilities:
            return key, capabilities[key]
    return None


def merge_rendering(rendering: dict[str, Any], authored: dict[str, Any]) -> dict[str, Any]:
    """rendering ∪ authored: authored wins; maps merge recursively; lists and scalars replace
    whole; a null on either side is absent."""
    merged: dict[str, Any] = {k: _copy(v) for k, v in rendering.items() if v is not None}
    for key, value in authored.items():
        if value is None:
            continue
        current = merged.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            merged[key] = merge_rendering(current, value)
        else:
            merged[key] = _copy(value)
    return merged


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def check_rendering_values(key: str, rendering: dict[str, Any], profile_name: str) -> None:
    """Refuse a rendering holding a nested null, NaN, ±Inf or a non-JSON value (top-level nulls
    are absent and allowed)."""
    for name, value in rendering.items():
        if value is not None:
            _check_value(value, f"rendering.{name}", key, profile_name)


def _check_value(value: Any, path: str, key: str, profile_name: str) -> None:
    where = f'ClusterProfile "{profile_name}": capability "{key}": {path}'
    if value is None:
        raise CapabilityError(f"{where}: null is not allowed below the top level of a rendering")
    if isinstance(value, (bool, int, str)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CapabilityError(f"{where}: {value!r} is not a finite number")
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            _check_value(item, f"{path}[{index}]", key, profile_name)
        return
    if isinstance(value, dict):
        for name, item in value.items():
            if not isinstance(name, str):
                raise CapabilityError(f"{where}: key {name!r} is not a string")
            _check_value(item, f"{path}.{name}", key, profile_name)
        return
    raise CapabilityError(f"{where}: value of type {type(value).__name__} is not a JSON value")


def missing_capability_error(
    component: str, trait_type: str, properties: dict[str, Any], profile_name: str
) -> CapabilityError:
    key = capability_keys(trait_type, properties)[0]
    return CapabilityError(
        f'component "{component}" trait "{trait_type}": capability "{key}" not found in '
        f'ClusterProfile "{profile_name}": {MISSING_CAPABILITY}'
    )
