"""Cilium kind components (seed 002: cilium-networkpolicy, cilium-clusterwidenetworkpolicy, the four
BGP kinds, cilium-cidrgroup, -loadbalancerippool, -egressgatewaypolicy, -localredirectpolicy and
-nodeconfig). All emit cilium.io/v2 objects; each is the strict decode plus the kind's own checks."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.kinds import cilium as types
from farm.core.kinds.engine import CILIUM, KindContext, kind_component, required_error

V2 = "cilium.io/v2"
RULE_LISTS = ("ingress", "ingressDeny", "egress", "egressDeny")
HOLD_TIME_DEFAULT, KEEPALIVE_DEFAULT = 90, 30


def _rules(kc: KindContext) -> list[tuple[str, dict[str, Any]]]:
    """Every rule of a policy with its path; refused when there is none."""
    rules = []
    if kc.decoded.get("spec") is not None:
        rules.append(("spec", kc.decoded["spec"]))
    rules += [(f"specs[{i}]", rule) for i, rule in enumerate(kc.decoded.get("specs") or [])]
    if not rules:
        raise FieldError(
            "spec or specs: required (the policy holds no rule: author spec or an entry of specs)"
        )
    return rules


def _check_rule_entries(path: str, rule: dict[str, Any]) -> None:
    if not any(rule.get(key) for key in RULE_LISTS):
        raise FieldError(
            f"{path}: a rule needs at least one entry in ingress, ingressDeny, egress or egressDeny"
        )


def _check_network_policy(kc: KindContext) -> None:
    for path, rule in _rules(kc):
        if rule.get("endpointSelector") is None:
            raise required_error(f"{path}.endpointSelector", CILIUM)
        if rule.get("nodeSelector") is not None:
            raise FieldError(
                f"{path}.nodeSelector: not allowed in a CiliumNetworkPolicy (a node selector belongs to a "
                "CiliumClusterwideNetworkPolicy)"
            )
        _check_rule_entries(path, rule)


def _check_clusterwide_network_policy(kc: KindContext) -> None:
    for path, rule in _rules(kc):
        has_endpoints, has_nodes = (
            rule.get("endpointSelector") is not None,
            rule.get("nodeSelector") is not None,
        )
        if has_endpoints and has_nodes:
            raise FieldError(
                f"{path}: endpointSelector and nodeSelector are both set; the API takes exactly one"
            )
        if not (has_endpoints or has_nodes):
            raise FieldError(f"{path}: one of endpointSelector and nodeSelector is required")
        _check_rule_entries(path, rule)


# advertisementType -> the sibling it requires; the siblings refused with other types.
_ADVERTISEMENT_SIBLINGS = {"service": "Service", "interface": "Interface"}


def _check_advertisements(kc: KindContext) -> None:
    for index, entry in enumerate(kc.decoded.get("advertisements") or []):
        path, kind = f"advertisements[{index}]", entry.get("advertisementType", "")
        for sibling, wanted in _ADVERTISEMENT_SIBLINGS.items():
            present = entry.get(sibling) is not None
            if kind == wanted and not present:
                raise FieldError(f'{path}.{sibling}: required with advertisementType "{wanted}"')
            if kind != wanted and present:
                raise FieldError(
                    f'{path}.{sibling}: not allowed with advertisementType "{kind}", only with "{wanted}"'
                )
        if kind == "PodCIDR" and entry.get("selector") is not None:
            raise FieldError(f'{path}.selector: not allowed with advertisementType "PodCIDR"')


def _check_timers(kc: KindContext) -> None:
    """keepAliveTimeSeconds <= holdTimeSeconds, after the API fills the unset one's default."""
    timers = kc.decoded.get("timers") or {}
    hold, keepalive = timers.get("holdTimeSeconds"), timers.get("keepAliveTimeSeconds")
    if hold is not None and keepalive is not None:
        if keepalive > hold:
            raise FieldError(
                f"timers.keepAliveTimeSeconds: {keepalive} is larger than timers.holdTimeSeconds ({hold})"
            )
    elif keepalive is not None and keepalive > HOLD_TIME_DEFAULT:
        raise FieldError(
            f"timers.keepAliveTimeSeconds: {keepalive} is larger than the hold time the API fills where "
            f"timers.holdTimeSeconds is not set ({HOLD_TIME_DEFAULT})"
        )
    elif hold is not None and hold < KEEPALIVE_DEFAULT:
        raise FieldError(
            f"timers.holdTimeSeconds: {hold} is smaller than the keepalive time the API fills where "
            f"timers.keepAliveTimeSeconds is not set ({KEEPALIVE_DEFAULT})"
        )


def _check_one_matcher(kc: KindContext) -> None:
    frontend = kc.decoded.get("redirectFrontend") or {}
    address, service = frontend.get("addressMatcher") is not None, frontend.get("serviceMatcher") is not None
    if address and service:
        raise FieldError(
            "redirectFrontend: addressMatcher and serviceMatcher are both set; the API takes exactly one"
        )
    if not (address or service):
        raise FieldError("redirectFrontend: one of addressMatcher and serviceMatcher is required")


def _cilium(name: str, kind: str, **options: Any) -> Any:
    go_type = options.pop("go_type", f"ciliumv2.{kind}Spec")
    return kind_component(name, V2, kind, go_type, api=CILIUM, **options)


NETWORK_POLICY = _cilium(
    "cilium-networkpolicy",
    "CiliumNetworkPolicy",
    go_type="ciliumv2.CiliumNetworkPolicy (spec, specs: api.Rule)",
    body=types.NETWORK_POLICY,
    check=_check_network_policy,
)
CLUSTERWIDE_NETWORK_POLICY = _cilium(
    "cilium-clusterwidenetworkpolicy",
    "CiliumClusterwideNetworkPolicy",
    go_type="ciliumv2.CiliumClusterwideNetworkPolicy (spec, specs: api.Rule)",
    body=types.NETWORK_POLICY,
    cluster_scoped=True,
    check=_check_clusterwide_network_policy,
)
BGP_ADVERTISEMENT = _cilium(
    "cilium-bgpadvertisement",
    "CiliumBGPAdvertisement",
    spec=types.BGP_ADVERTISEMENT_SPEC,
    cluster_scoped=True,
    check=_check_advertisements,
)
BGP_CLUSTER_CONFIG = _cilium(
    "cilium-bgpclusterconfig",
    "CiliumBGPClusterConfig",
    spec=types.BGP_CLUSTER_CONFIG_SPEC,
    cluster_scoped=True,
)
BGP_NODE_CONFIG_OVERRIDE = _cilium(
    "cilium-bgpnodeconfigoverride",
    "CiliumBGPNodeConfigOverride",
    spec=types.BGP_NODE_CONFIG_OVERRIDE_SPEC,
    cluster_scoped=True,
)
BGP_PEER_CONFIG = _cilium(
    "cilium-bgppeerconfig",
    "CiliumBGPPeerConfig",
    spec=types.BGP_PEER_CONFIG_SPEC,
    cluster_scoped=True,
    check=_check_timers,
)
CIDR_GROUP = _cilium("cilium-cidrgroup", "CiliumCIDRGroup", spec=types.CIDR_GROUP_SPEC, cluster_scoped=True)
LOAD_BALANCER_IP_POOL = _cilium(
    "cilium-loadbalancerippool",
    "CiliumLoadBalancerIPPool",
    spec=types.LOAD_BALANCER_IP_POOL_SPEC,
    cluster_scoped=True,
)
EGRESS_GATEWAY_POLICY = _cilium(
    "cilium-egressgatewaypolicy",
    "CiliumEgressGatewayPolicy",
    spec=types.EGRESS_GATEWAY_POLICY_SPEC,
    cluster_scoped=True,
)
LOCAL_REDIRECT_POLICY = _cilium(
    "cilium-localredirectpolicy",
    "CiliumLocalRedirectPolicy",
    spec=types.LOCAL_REDIRECT_POLICY_SPEC,
    check=_check_one_matcher,
)
NODE_CONFIG = _cilium("cilium-nodeconfig", "CiliumNodeConfig", spec=types.NODE_CONFIG_SPEC)
