"""The cilium-networkpolicy trait: a cilium.io/v2 CiliumNetworkPolicy named by ``name`` holding one
rule (endpointSelector, ingress, egress) as authored, with no labels of its own (seed 002 l.1116)."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_object_field
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import (
    COMMON_KEYS,
    check_known_keys,
    check_rendering_keys,
    metadata,
    required_string,
    without_nulls,
)

KEYS = COMMON_KEYS | {"name", "endpointSelector", "ingress", "egress"}


def validate_rendering(rendering: dict[str, Any], key: str) -> dict[str, Any]:
    """The cilium-networkpolicy capability takes no rendering keys."""
    check_rendering_keys(rendering, (), "cilium-networkpolicy")
    return rendering


def _rules(props: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = props.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(f"{key}: must be a list, got {go_type_name(value)}")
    for index, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise FieldError(f"{key}[{index}]: must be an object, got {go_type_name(entry)}")
    return without_nulls(value)


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    props = app.properties
    check_known_keys(props, KEYS)
    name = required_string(props, "name")
    selector, present = parse_object_field(props, "endpointSelector")
    if not present:
        raise FieldError("endpointSelector is required ({} selects every endpoint of the namespace)")
    if "nodeSelector" in selector:
        raise FieldError("endpointSelector.nodeSelector: belongs to a CiliumClusterwideNetworkPolicy")
    spec: dict[str, Any] = {"endpointSelector": without_nulls(selector)}
    for key in ("ingress", "egress"):
        rules = _rules(props, key)
        if rules:
            spec[key] = rules
    if "ingress" not in spec and "egress" not in spec:
        raise FieldError("a rule needs at least one entry in ingress or egress")
    policy = {
        "apiVersion": "cilium.io/v2",
        "kind": "CiliumNetworkPolicy",
        "metadata": metadata(name, app.ctx.namespace),
        "spec": spec,
    }
    return [policy]


HANDLER = TraitType(
    name="cilium-networkpolicy",
    apply=apply,
    capability="none",
    validate_rendering=validate_rendering,
    emits=("cilium.io/v2 CiliumNetworkPolicy",),
)
