"""Gateway API kind components: gateway, gatewayclass, listenerset, referencegrant, backendtlspolicy,
httproute, grpcroute, tcproute, udproute, tlsroute (seed 002, their entries)."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.kinds import gateway as types
from farm.core.kinds.engine import GATEWAY, KindContext, kind_component, required_error
from farm.core.model import COMPONENT_LABEL

V1 = "gateway.networking.k8s.io/v1"


def _is_service_backend(backend: dict[str, Any]) -> bool:
    """The CRD rule ``(size(self.group) == 0 && self.kind == 'Service')`` after the API's defaults
    (group "", kind Service) are filled."""
    return (backend.get("group") or "") == "" and backend.get("kind", "Service") == "Service"


def _check_service_backend_ports(kc: KindContext) -> None:
    for r_index, rule in enumerate(kc.decoded.get("rules") or []):
        for b_index, backend in enumerate(rule.get("backendRefs") or []):
            if _is_service_backend(backend) and backend.get("port") is None:
                raise required_error(f"rules[{r_index}].backendRefs[{b_index}].port", GATEWAY)


def _check_infrastructure_labels(kc: KindContext) -> None:
    """infrastructure.labels are held as a pod's: the component label's key must hold the
    component's value."""
    labels = (kc.decoded.get("infrastructure") or {}).get("labels") or {}
    value = labels.get(COMPONENT_LABEL)
    if value is not None and value != kc.component.name:
        name = kc.obj["metadata"]["name"]
        raise FieldError(
            f'Gateway "{name}": spec.infrastructure.labels["{COMPONENT_LABEL}"]: "{value}" is not the '
            f'component label of component "{kc.component.name}"'
        )


GATEWAY_CLASS = kind_component(
    "gatewayclass",
    V1,
    "GatewayClass",
    "gatewayv1.GatewayClassSpec",
    spec=types.GATEWAY_CLASS_SPEC,
    cluster_scoped=True,
    api=GATEWAY,
)
GATEWAY_KIND = kind_component(
    "gateway",
    V1,
    "Gateway",
    "gatewayv1.GatewaySpec",
    spec=types.GATEWAY_SPEC,
    api=GATEWAY,
    check=_check_infrastructure_labels,
)
LISTENER_SET = kind_component(
    "listenerset", V1, "ListenerSet", "gatewayv1.ListenerSetSpec", spec=types.LISTENER_SET_SPEC, api=GATEWAY
)
REFERENCE_GRANT = kind_component(
    "referencegrant",
    V1,
    "ReferenceGrant",
    "gatewayv1.ReferenceGrantSpec",
    spec=types.REFERENCE_GRANT_SPEC,
    api=GATEWAY,
)
BACKEND_TLS_POLICY = kind_component(
    "backendtlspolicy",
    V1,
    "BackendTLSPolicy",
    "gatewayv1.BackendTLSPolicySpec",
    spec=types.BACKEND_TLS_POLICY_SPEC,
    api=GATEWAY,
)
HTTP_ROUTE = kind_component(
    "httproute",
    V1,
    "HTTPRoute",
    "gatewayv1.HTTPRouteSpec",
    spec=types.HTTP_ROUTES.http_route_spec,
    api=GATEWAY,
)
GRPC_ROUTE = kind_component(
    "grpcroute",
    V1,
    "GRPCRoute",
    "gatewayv1.GRPCRouteSpec",
    spec=types.HTTP_ROUTES.grpc_route_spec,
    api=GATEWAY,
)
TCP_ROUTE = kind_component(
    "tcproute",
    V1,
    "TCPRoute",
    "gatewayv1.TCPRouteSpec",
    spec=types.TCP_ROUTE_SPEC,
    api=GATEWAY,
    check=_check_service_backend_ports,
)
UDP_ROUTE = kind_component(
    "udproute",
    V1,
    "UDPRoute",
    "gatewayv1.UDPRouteSpec",
    spec=types.UDP_ROUTE_SPEC,
    api=GATEWAY,
    check=_check_service_backend_ports,
)
TLS_ROUTE = kind_component(
    "tlsroute",
    V1,
    "TLSRoute",
    "gatewayv1.TLSRouteSpec",
    spec=types.TLS_ROUTE_SPEC,
    api=GATEWAY,
    check=_check_service_backend_ports,
)
