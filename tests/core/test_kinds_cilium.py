"""Cilium kind components: structural refusals of the policy kinds, required paths, the selector
typo check, the ICMP panic, the BGP expression rules and the LRP one-matcher rule (seed 002)."""

from __future__ import annotations

import pytest

from .kinds_support import build, refusal

REQ = "required (the Cilium API requires this field)"
RULE = {"endpointSelector": {}, "ingress": [{}]}


def test_networkpolicy_refuses_no_rule_and_accepts_empty_specs_beside_a_spec() -> None:
    assert refusal("cilium-networkpolicy", {}) == (
        'component "c": spec or specs: required (the policy holds no rule: author spec or an entry of specs)'
    )
    assert refusal("cilium-networkpolicy", {"specs": []}).startswith('component "c": spec or specs: required')
    obj = build("cilium-networkpolicy", {"spec": RULE, "specs": []})
    assert "specs" not in obj and obj["spec"] == {"endpointSelector": {}, "ingress": [{}]}


def test_networkpolicy_rule_needs_an_endpoint_selector_and_no_node_selector() -> None:
    assert (
        refusal("cilium-networkpolicy", {"spec": {"ingress": [{}]}})
        == f'component "c": spec.endpointSelector: {REQ}'
    )
    assert refusal("cilium-networkpolicy", {"spec": {**RULE, "nodeSelector": {}}}) == (
        'component "c": spec.nodeSelector: not allowed in a CiliumNetworkPolicy (a node selector belongs to a '
        "CiliumClusterwideNetworkPolicy)"
    )


def test_networkpolicy_rule_needs_an_entry_in_one_of_the_four_lists() -> None:
    message = refusal("cilium-networkpolicy", {"specs": [RULE, {"endpointSelector": {}, "egress": []}]})
    assert message == (
        'component "c": specs[1]: a rule needs at least one entry in ingress, ingressDeny, egress or egressDeny'
    )
    assert build("cilium-networkpolicy", {"spec": {"endpointSelector": {}, "egressDeny": [{}]}})


def test_networkpolicy_null_elements_are_refused() -> None:
    assert refusal("cilium-networkpolicy", {"specs": [None]}) == (
        'component "c": specs[0]: null is not a valid array element'
    )
    assert refusal("cilium-networkpolicy", {"spec": {"endpointSelector": {}, "ingress": [None]}}) == (
        'component "c": spec.ingress[0]: null is not a valid array element'
    )


def test_selector_typo_is_refused_by_path() -> None:
    rule = {"endpointSelector": {}, "ingress": [{"fromEndpoints": [{}, {"matchLabel": {"a": "b"}}]}]}
    assert refusal("cilium-networkpolicy", {"spec": rule}) == (
        'component "c": spec.ingress[0].fromEndpoints[1].matchLabel: unknown field'
    )


@pytest.mark.parametrize(
    ("ingress", "path"),
    [
        ({"authentication": {}}, "spec.ingress[0].authentication.mode"),
        ({"toPorts": [{"terminatingTLS": {}}]}, "spec.ingress[0].toPorts[0].terminatingTLS.secret"),
        (
            {"toPorts": [{"originatingTLS": {"secret": {}}}]},
            "spec.ingress[0].toPorts[0].originatingTLS.secret.name",
        ),
        (
            {"toPorts": [{"listener": {"name": "l", "priority": 1}}]},
            "spec.ingress[0].toPorts[0].listener.envoyConfig",
        ),
        (
            {"toPorts": [{"listener": {"name": "l", "envoyConfig": {"name": "e"}, "priority": 1}}]},
            "spec.ingress[0].toPorts[0].listener.envoyConfig.kind",
        ),
        (
            {
                "toPorts": [
                    {"listener": {"name": "l", "envoyConfig": {"kind": "CiliumEnvoyConfig", "name": "e"}}}
                ]
            },
            "spec.ingress[0].toPorts[0].listener.priority",
        ),
        (
            {"toPorts": [{"rules": {"http": [{"headerMatches": [{"value": "v"}]}]}}]},
            "spec.ingress[0].toPorts[0].rules.http[0].headerMatches[0].name",
        ),
        (
            {"fromEndpoints": [{"matchExpressions": [{"key": "a"}]}]},
            "spec.ingress[0].fromEndpoints[0].matchExpressions[0].operator",
        ),
    ],
)
def test_required_fields_under_an_authored_parent(ingress: dict, path: str) -> None:
    assert refusal("cilium-networkpolicy", {"spec": {"endpointSelector": {}, "ingress": [ingress]}}) == (
        f'component "c": {path}: {REQ}'
    )


def test_icmp_field_without_type_names_the_panic() -> None:
    rule = {"endpointSelector": {}, "ingress": [{"icmps": [{"fields": [{"family": "IPv6"}]}]}]}
    assert refusal("cilium-networkpolicy", {"spec": rule}) == (
        'component "c": the decoder of api.ICMPField panicked on this value: {"family": "IPv6"} '
        "(runtime error: invalid memory address or nil pointer dereference)"
    )


def test_icmp_family_empty_is_left_out_and_rule_label_forms() -> None:
    rule = {
        "endpointSelector": {},
        "ingress": [{"icmps": [{"fields": [{"family": "", "type": "EchoRequest"}]}]}],
        "labels": ["k8s:team=a", {"key": "tier"}],
    }
    spec = build("cilium-networkpolicy", {"spec": rule})["spec"]
    assert spec["ingress"] == [{"icmps": [{"fields": [{"type": "EchoRequest"}]}]}]
    assert spec["labels"] == [{"key": "team", "source": "k8s", "value": "a"}, {"key": "tier", "source": ""}]


def test_clusterwide_policy_takes_exactly_one_selector_and_no_namespace() -> None:
    both = {"endpointSelector": {}, "nodeSelector": {}, "ingress": [{}]}
    assert refusal("cilium-clusterwidenetworkpolicy", {"spec": both}) == (
        'component "c": spec: endpointSelector and nodeSelector are both set; the API takes exactly one'
    )
    assert refusal("cilium-clusterwidenetworkpolicy", {"specs": [{"ingress": [{}]}]}) == (
        'component "c": specs[0]: one of endpointSelector and nodeSelector is required'
    )
    obj = build(
        "cilium-clusterwidenetworkpolicy", {"spec": {"nodeSelector": {}, "ingress": [{}]}}, name="hosts"
    )
    assert obj["metadata"] == {"name": "hosts", "labels": {"launcher.gokure.dev/component": "hosts"}}
    assert refusal("cilium-clusterwidenetworkpolicy", {"specs": []}).startswith(
        'component "c": spec or specs'
    )


def test_bgp_advertisement_sibling_rules() -> None:
    assert refusal("cilium-bgpadvertisement", {"advertisements": [{"advertisementType": "Service"}]}) == (
        'component "c": advertisements[0].service: required with advertisementType "Service"'
    )
    entry = {"advertisementType": "CiliumPodIPPool", "service": {"addresses": ["ClusterIP"]}}
    assert refusal(
        "cilium-bgpadvertisement", {"advertisements": [{"advertisementType": "PodCIDR"}, entry]}
    ) == (
        'component "c": advertisements[1].service: not allowed with advertisementType "CiliumPodIPPool", only with "Service"'
    )
    assert refusal(
        "cilium-bgpadvertisement", {"advertisements": [{"advertisementType": "PodCIDR", "selector": {}}]}
    ) == ('component "c": advertisements[0].selector: not allowed with advertisementType "PodCIDR"')


def test_bgp_advertisement_omitted_required_fields() -> None:
    service = {"advertisementType": "Service", "service": {"addresses": []}}
    assert refusal("cilium-bgpadvertisement", {"advertisements": [service]}) == (
        f'component "c": advertisements[0].service.addresses: {REQ}'
    )
    interface = {"advertisementType": "Interface", "interface": {}}
    assert refusal("cilium-bgpadvertisement", {"advertisements": [interface]}) == (
        f'component "c": advertisements[0].interface.name: {REQ}'
    )
    assert refusal("cilium-bgpadvertisement", {}) == f'component "c": advertisements: {REQ}'


def test_bgp_clusterconfig_required_paths_and_kept_zero() -> None:
    instance = {"name": "i", "peers": [{"name": "a", "peerASN": 0}, {"peerAddress": "192.0.2.1"}]}
    assert refusal("cilium-bgpclusterconfig", {"bgpInstances": [instance]}) == (
        f'component "c": bgpInstances[0].peers[1].name: {REQ}'
    )
    instance = {"name": "i", "peers": [{"name": "a", "peerASN": 0}]}
    spec = build("cilium-bgpclusterconfig", {"bgpInstances": [instance]})["spec"]
    assert spec["bgpInstances"][0]["peers"][0] == {"name": "a", "peerASN": 0}
    auto = {
        "name": "i",
        "peers": [{"name": "a", "autoDiscovery": {"mode": "DefaultGateway", "defaultGateway": {}}}],
    }
    assert refusal("cilium-bgpclusterconfig", {"bgpInstances": [auto]}) == (
        f'component "c": bgpInstances[0].peers[0].autoDiscovery.defaultGateway.addressFamily: {REQ}'
    )


def test_bgp_nodeconfigoverride_requires_instances() -> None:
    assert refusal("cilium-bgpnodeconfigoverride", {}) == f'component "c": bgpInstances: {REQ}'


@pytest.mark.parametrize(
    ("timers", "message"),
    [
        (
            {"holdTimeSeconds": 30, "keepAliveTimeSeconds": 90},
            "timers.keepAliveTimeSeconds: 90 is larger than timers.holdTimeSeconds (30)",
        ),
        (
            {"keepAliveTimeSeconds": 100},
            "timers.keepAliveTimeSeconds: 100 is larger than the hold time the API fills where "
            "timers.holdTimeSeconds is not set (90)",
        ),
        (
            {"holdTimeSeconds": 20},
            "timers.holdTimeSeconds: 20 is smaller than the keepalive time the API fills where "
            "timers.keepAliveTimeSeconds is not set (30)",
        ),
    ],
)
def test_bgp_peerconfig_timers_rule(timers: dict, message: str) -> None:
    assert refusal("cilium-bgppeerconfig", {"timers": timers}) == f'component "c": {message}'


def test_bgp_peerconfig_graceful_restart_and_families() -> None:
    assert (
        refusal("cilium-bgppeerconfig", {"gracefulRestart": {}})
        == f'component "c": gracefulRestart.enabled: {REQ}'
    )
    spec = build(
        "cilium-bgppeerconfig",
        {"gracefulRestart": {"enabled": False}, "timers": {"keepAliveTimeSeconds": 90}},
    )
    assert spec["spec"] == {"gracefulRestart": {"enabled": False}, "timers": {"keepAliveTimeSeconds": 90}}
    assert (
        refusal("cilium-bgppeerconfig", {"families": [{"afi": "ipv4"}]})
        == f'component "c": families[0].safi: {REQ}'
    )


def test_localredirectpolicy_one_matcher_rule() -> None:
    backend = {"localEndpointSelector": {}, "toPorts": []}
    assert refusal("cilium-localredirectpolicy", {"redirectFrontend": {}, "redirectBackend": backend}) == (
        'component "c": redirectFrontend: one of addressMatcher and serviceMatcher is required'
    )
    both = {
        "addressMatcher": {"ip": "169.254.169.254", "toPorts": []},
        "serviceMatcher": {"serviceName": "a", "namespace": "b"},
    }
    assert refusal("cilium-localredirectpolicy", {"redirectFrontend": both, "redirectBackend": backend}) == (
        'component "c": redirectFrontend: addressMatcher and serviceMatcher are both set; the API takes exactly one'
    )
    front = {"addressMatcher": {"ip": "169.254.169.254", "toPorts": [{"port": "80"}]}}
    assert refusal("cilium-localredirectpolicy", {"redirectFrontend": front, "redirectBackend": backend}) == (
        f'component "c": redirectFrontend.addressMatcher.toPorts[0].protocol: {REQ}'
    )


def test_loadbalancerippool_drops_disabled_false_and_needs_nothing() -> None:
    obj = build("cilium-loadbalancerippool", {"disabled": False}, name="pool")
    assert obj["spec"] == {} and "namespace" not in obj["metadata"]


def test_cidrgroup_requires_external_cidrs_and_accepts_empty() -> None:
    assert refusal("cilium-cidrgroup", {}) == f'component "c": externalCIDRs: {REQ}'
    assert build("cilium-cidrgroup", {"externalCIDRs": []})["spec"] == {"externalCIDRs": []}


def test_egressgatewaypolicy_required_paths() -> None:
    spec = {"selectors": [], "destinationCIDRs": ["0.0.0.0/0"], "egressGateway": {"nodeSelector": {}}}
    assert build("cilium-egressgatewaypolicy", spec)["spec"] == spec
    assert refusal(
        "cilium-egressgatewaypolicy",
        {**spec, "egressGateways": [{"nodeSelector": {}}, {"egressIP": "192.0.2.1"}]},
    ) == (f'component "c": egressGateways[1].nodeSelector: {REQ}')
    assert refusal("cilium-egressgatewaypolicy", {"selectors": [], "destinationCIDRs": []}) == (
        f'component "c": egressGateway: {REQ}'
    )
    assert build("cilium-egressgatewaypolicy", {**spec, "egressGateways": []})["spec"] == spec


def test_nodeconfig_is_namespaced_and_requires_both_fields() -> None:
    assert refusal("cilium-nodeconfig", {"defaults": {}}) == f'component "c": nodeSelector: {REQ}'
    obj = build("cilium-nodeconfig", {"defaults": {"a": "b"}, "nodeSelector": {}, "objectName": "n"})
    assert obj["metadata"]["namespace"] == "shop" and obj["metadata"]["name"] == "n"
