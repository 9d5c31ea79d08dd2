"""Networking kind components: ingress, ingressclass, networkpolicy, servicecidr, endpointslice
(seed 002, their entries). Each is the strict decode of its upstream type plus the kind's own checks."""

from __future__ import annotations

from farm.core.kinds import networking as types
from farm.core.kinds.engine import KindContext, kind_component
from farm.core.kinds.meta import check_match_expressions


def _check_network_policy(kc: KindContext) -> None:
    """Match expressions of podSelector and of each peer's podSelector / namespaceSelector."""
    spec = kc.decoded
    check_match_expressions(spec.get("podSelector"), "podSelector")
    for direction, peers_key in (("ingress", "from"), ("egress", "to")):
        for r_index, rule in enumerate(spec.get(direction) or []):
            for p_index, peer in enumerate(rule.get(peers_key) or []):
                where = f"{direction}[{r_index}].{peers_key}[{p_index}]"
                check_match_expressions(peer.get("podSelector"), f"{where}.podSelector")
                check_match_expressions(peer.get("namespaceSelector"), f"{where}.namespaceSelector")


INGRESS = kind_component(
    "ingress", "networking.k8s.io/v1", "Ingress", "networkingv1.IngressSpec", spec=types.INGRESS_SPEC
)

INGRESS_CLASS = kind_component(
    "ingressclass",
    "networking.k8s.io/v1",
    "IngressClass",
    "networkingv1.IngressClassSpec",
    spec=types.INGRESS_CLASS_SPEC,
    cluster_scoped=True,
)

NETWORK_POLICY = kind_component(
    "networkpolicy",
    "networking.k8s.io/v1",
    "NetworkPolicy",
    "networkingv1.NetworkPolicySpec",
    spec=types.NETWORK_POLICY_SPEC,
    check=_check_network_policy,
)

SERVICE_CIDR = kind_component(
    "servicecidr",
    "networking.k8s.io/v1",
    "ServiceCIDR",
    "networkingv1.ServiceCIDRSpec",
    spec=types.SERVICE_CIDR_SPEC,
    cluster_scoped=True,
)

ENDPOINT_SLICE = kind_component(
    "endpointslice",
    "discovery.k8s.io/v1",
    "EndpointSlice",
    "discoveryv1.EndpointSlice",
    body=types.ENDPOINT_SLICE,
)
