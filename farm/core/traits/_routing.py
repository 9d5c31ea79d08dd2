"""What the routing traits (ingress, httproute, and expose through them) share: the backend a
route resolves to, the platform-reserved ``networkPolicy`` key, and the inbound NetworkPolicy
synthesis (``<component>-allow-ingress-traffic``, launcher-pipeline §1.5 step 7)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from farm.core.errors import FieldError, TransformError
from farm.core.fields import go_type_name, parse_int32_field
from farm.core.model import COMPONENT_LABEL
from farm.core.registry import TraitApplication
from farm.core.traits._common import metadata, string_prop, without_nulls

RESERVED_KEYS = ("networkPolicy",)
# Generated.facts keys a component may set for the routing traits (documented in model.py).
FACT_SERVICE_PORTS = "service_ports"
FACT_SERVICE_SELECTOR = "service_selector"
_POLICY_FACT = "_allow_ingress_policy"
METADATA_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Backend:
    """The Service a route sends to by default, and whether it is the component's own."""

    name: str
    port: int
    port_name: str | None
    own: bool  # the component's own Service, whose first port is the only one a route may use
    local: bool  # the synthesized allow lands on this component's pods


def refuse_reserved(authored: dict[str, Any]) -> None:
    """``networkPolicy`` is platform-reserved: it can only come from the capability rendering."""
    for key in RESERVED_KEYS:
        if authored.get(key) is not None:
            raise FieldError(
                f"{key}: platform-reserved property: it is set by the ClusterProfile capability "
                "rendering and cannot be authored on the trait"
            )


def default_backend(app: TraitApplication) -> Backend:
    """The trait-level serviceName/servicePort, else the component's own Service and port."""
    props = app.properties
    service_name = string_prop(props, "serviceName")
    service_port, has_port = parse_int32_field(props, "servicePort")
    component = app.component.name
    if service_name and not has_port:
        raise FieldError("serviceName requires servicePort")
    if has_port:
        if not 1 <= service_port <= 65535:
            raise FieldError(f"servicePort: must be between 1 and 65535, got {service_port}")
        name = service_name or component
        generated = app.generated
        if name == generated.service_name:
            if generated.service_port is None:
                raise TransformError(f'component "{component}" has no service port')
            backend = Backend(name, generated.service_port, generated.service_port_name, True, True)
            check_implicit_port(backend, service_port, None)
            return backend
        return Backend(name, service_port, None, False, name == component)
    generated = app.generated
    if generated.service_port is None:
        raise TransformError(f'component "{component}" has no service port')
    name = generated.service_name or component
    return Backend(name, generated.service_port, generated.service_port_name, True, True)


def check_implicit_port(backend: Backend, port: int | None, port_name: str | None) -> None:
    """A route to the component's own Service may only use its first port."""
    if not backend.own:
        return
    if port is not None and port != backend.port:
        raise FieldError(f"cannot route implicit backend to port {port}")
    if port_name is not None and port_name != backend.port_name:
        raise FieldError(f'cannot route implicit backend to port "{port_name}"')


def port_number(value: Any, path: str) -> int | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (isinstance(value, float) and not value.is_integer())
    ):
        raise FieldError(f"{path}: must be an integer, got {go_type_name(value)}")
    number = int(value)
    if not 1 <= number <= 65535:
        raise FieldError(f"{path}: must be between 1 and 65535, got {number}")
    return number


def _traffic_sources(props: dict[str, Any]) -> list[dict[str, Any]]:
    policy = props.get("networkPolicy")
    if policy is None:
        return []
    if not isinstance(policy, dict):
        raise FieldError(f"networkPolicy: must be an object, got {go_type_name(policy)}")
    sources = policy.get("trafficSources")
    if sources is None:
        return []
    if not isinstance(sources, list):
        raise FieldError(f"networkPolicy.trafficSources: must be a list, got {go_type_name(sources)}")
    return [_peer(source, f"networkPolicy.trafficSources[{i}]") for i, source in enumerate(sources)]


def _peer(source: Any, path: str) -> dict[str, Any]:
    """A traffic source as a NetworkPolicyPeer. ``namespace`` and ``podLabels`` are shorthands for a
    namespaceSelector on the namespace name and a podSelector on labels."""
    if not isinstance(source, dict):
        raise FieldError(f"{path}: must be an object, got {go_type_name(source)}")
    allowed = {"namespace", "podLabels", "namespaceSelector", "podSelector", "ipBlock"}
    for key in sorted(source):
        if key not in allowed:
            raise FieldError(f"{path}.{key}: unknown property (allowed: {', '.join(sorted(allowed))})")
    peer: dict[str, Any] = {}
    namespace = string_prop(source, "namespace", f"{path}.namespace")
    if namespace:
        peer["namespaceSelector"] = {"matchLabels": {METADATA_NAME_LABEL: namespace}}
    pod_labels = source.get("podLabels")
    if pod_labels is not None:
        if not isinstance(pod_labels, dict):
            raise FieldError(f"{path}.podLabels: must be an object, got {go_type_name(pod_labels)}")
        peer["podSelector"] = {"matchLabels": {str(k): str(v) for k, v in pod_labels.items()}}
    for key in ("namespaceSelector", "podSelector", "ipBlock"):
        if source.get(key) is not None:
            peer[key] = without_nulls(source[key])
    if not peer:
        raise FieldError(
            f"{path}: a traffic source needs namespace, podLabels, namespaceSelector, podSelector or ipBlock"
        )
    return peer


def _opened_ports(app: TraitApplication, routed: list[int]) -> list[dict[str, Any]]:
    """The targetPort of every routed TCP port of the component's Service."""
    declared = app.generated.facts.get(FACT_SERVICE_PORTS)
    ports: list[dict[str, Any]] = []
    for number in routed:
        target: Any = number
        protocol = "TCP"
        for entry in declared or []:
            if entry.get("port") == number:
                target = entry.get("targetPort", number)
                protocol = entry.get("protocol") or "TCP"
                break
        item = {"port": target, "protocol": "TCP"}
        if protocol == "TCP" and item not in ports:
            ports.append(item)
    return ports


def synthesize_ingress_policy(app: TraitApplication, routed_ports: list[int]) -> None:
    """Append (or extend) ``<component>-allow-ingress-traffic`` at the end of the bundle when the
    capability rendering gives the trait traffic sources."""
    peers = _traffic_sources(app.properties)
    if not peers:
        return
    ports = _opened_ports(app, routed_ports)
    if not ports:
        return
    rule = {"from": peers, "ports": ports}
    existing = app.generated.facts.get(_POLICY_FACT)
    if existing is not None:
        if rule not in existing["spec"]["ingress"]:
            existing["spec"]["ingress"].append(rule)
        return
    component = app.component.name
    selector = app.generated.facts.get(FACT_SERVICE_SELECTOR) or {COMPONENT_LABEL: component}
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": metadata(f"{component}-allow-ingress-traffic", app.ctx.namespace),
        "spec": {
            "podSelector": {"matchLabels": dict(selector)},
            "policyTypes": ["Ingress"],
            "ingress": [rule],
        },
    }
    app.generated.facts[_POLICY_FACT] = policy
    app.bundle_tail.append(policy)
