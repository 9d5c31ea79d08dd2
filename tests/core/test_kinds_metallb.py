"""MetalLB kind components: the seed's refusals with exact messages and inputs no shared case shows."""

from __future__ import annotations

from farm.core.errors import PolicyRefusal
from farm.core.policy import REFUSAL_EXPLICIT_SECRET, Policy

from .kindbuild import build, message, refusal

FORBID_SECRETS = Policy(explicit_secrets_allowed=False)


def test_ipaddresspool_requires_addresses_but_takes_an_empty_list() -> None:
    assert message("metallb-ipaddresspool", {"autoAssign": True}) == (
        'component "c": addresses: required (the MetalLB API requires this field)'
    )
    assert build("metallb-ipaddresspool", {"addresses": []})["spec"] == {"addresses": []}


def test_ipaddresspool_keeps_pointer_false_and_drops_omitted_zeros() -> None:
    spec = build(
        "metallb-ipaddresspool",
        {
            "addresses": ["10.0.0.0/24"],
            "autoAssign": False,
            "avoidBuggyIPs": False,
            "serviceAllocation": {"priority": 0},
        },
    )["spec"]
    assert spec == {"addresses": ["10.0.0.0/24"], "autoAssign": False, "serviceAllocation": {}}


def test_selector_expressions_need_key_and_operator() -> None:
    props = {"nodeSelectors": [{}, {"matchExpressions": [{"operator": "Exists"}]}]}
    assert message("metallb-l2advertisement", props) == (
        'component "c": nodeSelectors[1].matchExpressions[0].key: required (the MetalLB API requires this field)'
    )


def test_unknown_nested_key_is_refused_with_its_path() -> None:
    props = {"addresses": [], "serviceAllocation": {"priorty": 1}}
    assert (
        message("metallb-ipaddresspool", props) == 'component "c": unknown field "serviceAllocation.priorty"'
    )


def test_bgpadvertisement_service_selectors_need_one_route_per_address() -> None:
    selectors = [{"matchLabels": {"a": "b"}}]
    assert message("metallb-bgpadvertisement", {"serviceSelectors": selectors, "aggregationLength": 24}) == (
        'component "c": serviceSelectors: not allowed with aggregationLength 24: the API takes service '
        "selectors only with one route per address (aggregationLength 32)"
    )
    assert "aggregationLengthV6 64" in message(
        "metallb-bgpadvertisement", {"serviceSelectors": selectors, "aggregationLengthV6": 64}
    )
    kept = build("metallb-bgpadvertisement", {"serviceSelectors": selectors, "aggregationLength": 32})
    assert kept["spec"]["aggregationLength"] == 32
    # an empty list of selectors keeps the rule; localPref 0 and [] are omitted
    spec = build(
        "metallb-bgpadvertisement",
        {"serviceSelectors": [], "aggregationLength": 24, "localPref": 0, "peers": []},
    )["spec"]
    assert spec == {"aggregationLength": 24}


def test_bgppeer_requires_myasn_and_writes_zero() -> None:
    assert message("metallb-bgppeer", {"peerASN": 1}) == (
        'component "c": myASN: required (the MetalLB API requires this field)'
    )
    spec = build("metallb-bgppeer", {"myASN": 0, "holdTime": "0s", "ebgpMultiHop": False, "localASN": 0})[
        "spec"
    ]
    assert spec == {"myASN": 0, "holdTime": "0s", "passwordSecret": {}}


def test_bgppeer_refuses_port_zero() -> None:
    assert message("metallb-bgppeer", {"myASN": 1, "peerPort": 0}) == (
        'component "c": peerPort: 0 cannot be carried by the MetalLB API types (the field is omitted when '
        "zero, so the API server would apply its default 179)"
    )


def test_bgppeer_connect_time_rules() -> None:
    assert message("metallb-bgppeer", {"myASN": 1, "connectTime": "1.5s"}) == (
        'component "c": connectTime: 1.5s is not a whole number of seconds, which the API requires'
    )
    assert message("metallb-bgppeer", {"myASN": 1, "connectTime": "65535.5s"}).endswith(
        "is not a whole number of seconds, which the API requires"
    )
    assert message("metallb-bgppeer", {"myASN": 1, "connectTime": "0s"}) == (
        'component "c": connectTime: 0s is not from 1 to 65535 seconds, which the API requires'
    )
    assert "from 1 to 65535" in message("metallb-bgppeer", {"myASN": 1, "connectTime": "20h"})
    # a part below a millisecond is seen by neither rule
    spec = build("metallb-bgppeer", {"myASN": 1, "connectTime": "2m0.0000001s"})["spec"]
    assert spec["connectTime"] == "2m0.0000001s"


def test_bgppeer_password_under_a_policy_forbidding_explicit_secrets() -> None:
    error = refusal("metallb-bgppeer", {"myASN": 1, "password": "s3cret"}, policy=FORBID_SECRETS)
    assert isinstance(error, PolicyRefusal)
    assert error.refusal_class == REFUSAL_EXPLICIT_SECRET
    assert error.message == (
        'component "c": password: holds the BGP session password in the object, and the environment '
        "policy forbids explicit secrets; name a Secret created out of band in passwordSecret instead"
    )
    assert "s3cret" not in error.message
    # an empty password is none; without the policy the password is written as authored
    assert (
        "password"
        not in build("metallb-bgppeer", {"myASN": 1, "password": ""}, policy=FORBID_SECRETS)["spec"]
    )
    assert build("metallb-bgppeer", {"myASN": 1, "password": "s3cret"})["spec"]["password"] == "s3cret"


def test_bgppeer_is_emitted_at_v1beta2_others_at_v1beta1() -> None:
    assert build("metallb-bgppeer", {"myASN": 1})["apiVersion"] == "metallb.io/v1beta2"
    assert build("metallb-community", {})["apiVersion"] == "metallb.io/v1beta1"


def test_labels_annotations_and_build_namespace() -> None:
    obj = build(
        "metallb-community",
        {
            "objectName": "aliases",
            "labels": {"team": "net"},
            "annotations": {"note": "x"},
            "communities": [{}],
        },
        namespace="metallb-system",
    )
    assert obj["metadata"] == {
        "name": "aliases",
        "namespace": "metallb-system",
        "labels": {"team": "net", "launcher.gokure.dev/component": "c"},
        "annotations": {"note": "x"},
    }
    assert obj["spec"] == {"communities": [{}]}


def test_bfdprofile_rejects_a_wrong_type() -> None:
    assert message("metallb-bfdprofile", {"echoMode": "false"}) == (
        'component "c": echoMode: must be a boolean, got string'
    )
