"""The pvc trait: a v1 PersistentVolumeClaim named by the ``name`` property, the twin of the
persistentvolumeclaim component (same parser, policy and builder; only the ownership differs)."""

from __future__ import annotations

from typing import Any

from farm.core.components.persistentvolumeclaim import (
    apply_claim_policy,
    check_claim_keys,
    generate_claim,
    parse_claim_properties,
)
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import COMMON_KEYS, app_labels, check_rendering_keys, required_string

RENDERING_KEYS = ("storageClassName",)


def validate_rendering(rendering: dict[str, Any], key: str) -> dict[str, Any]:
    """Only the storage class may come from the platform."""
    check_rendering_keys(rendering, RENDERING_KEYS, "pvc")
    if rendering.get("storageClassName") is not None:
        required_string(rendering, "storageClassName")
    return rendering


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    props = app.properties
    check_claim_keys(props, COMMON_KEYS | {"name"})
    name = required_string(props, "name")
    claim = parse_claim_properties(props)
    # The capability's storageClassName already reached the properties through the merge.
    apply_claim_policy(claim, app.ctx.policy, None)
    return [generate_claim(claim, name, app.ctx.namespace, app_labels(app.component.name))]


HANDLER = TraitType(
    name="pvc",
    apply=apply,
    capability="optional",
    validate_rendering=validate_rendering,
    emits=("v1 PersistentVolumeClaim",),
)
