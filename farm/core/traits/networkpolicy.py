"""The networkpolicy trait: a networking.k8s.io/v1 NetworkPolicy ``<component>-allow`` selecting
the component's pods; a direction is listed in policyTypes when its key is present, so
``egress: []`` denies all egress (seed 002 l.1083-1086)."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import go_type_name
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import (
    COMMON_KEYS,
    app_labels,
    check_known_keys,
    check_rendering_keys,
    metadata,
    trait_object_name,
    without_nulls,
)

KEYS = COMMON_KEYS | {"name", "ingress", "egress"}
PEER_KEYS = ("podSelector", "namespaceSelector", "ipBlock")
PORT_KEYS = ("port", "endPort", "protocol")
PROTOCOLS = ("TCP", "UDP", "SCTP")


def validate_rendering(rendering: dict[str, Any], key: str) -> dict[str, Any]:
    """The networkpolicy capability takes no rendering keys."""
    check_rendering_keys(rendering, (), "networkpolicy")
    return rendering


def _entries(value: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise FieldError(f"{where}: must be a list, got {go_type_name(value)}")
    for index, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise FieldError(f"{where}[{index}]: must be an object, got {go_type_name(entry)}")
    return value


def _rule(rule: dict[str, Any], peers_key: str, where: str) -> dict[str, Any]:
    check_known_keys(rule, (peers_key, "ports"), where)
    out: dict[str, Any] = {}
    if rule.get(peers_key) is not None:
        peers = _entries(rule[peers_key], f"{where}.{peers_key}")
        for index, peer in enumerate(peers):
            check_known_keys(peer, PEER_KEYS, f"{where}.{peers_key}[{index}]")
        if peers:
            out[peers_key] = without_nulls(peers)
    if rule.get("ports") is not None:
        ports = _entries(rule["ports"], f"{where}.ports")
        for index, port in enumerate(ports):
            check_known_keys(port, PORT_KEYS, f"{where}.ports[{index}]")
            protocol = port.get("protocol")
            if protocol is not None and protocol not in PROTOCOLS:
                raise FieldError(
                    f'{where}.ports[{index}].protocol: must be one of {", ".join(PROTOCOLS)}, got "{protocol}"'
                )
        if ports:
            out["ports"] = without_nulls(ports)
    return out


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    props = app.properties
    check_known_keys(props, KEYS)
    component = app.component.name
    spec: dict[str, Any] = {"podSelector": {"matchLabels": app_labels(component)}}
    policy_types = []
    for key, peers_key, policy_type in (("ingress", "from", "Ingress"), ("egress", "to", "Egress")):
        if props.get(key) is None:
            continue
        rules = _entries(props[key], key)
        policy_types.append(policy_type)
        if rules:
            spec[key] = [_rule(rule, peers_key, f"{key}[{i}]") for i, rule in enumerate(rules)]
    if policy_types:
        spec["policyTypes"] = policy_types
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": metadata(trait_object_name(app, "allow"), app.ctx.namespace, app_labels(component)),
        "spec": spec,
    }
    return [policy]


HANDLER = TraitType(
    name="networkpolicy",
    apply=apply,
    capability="none",
    validate_rendering=validate_rendering,
    emits=("networking.k8s.io/v1 NetworkPolicy",),
)
