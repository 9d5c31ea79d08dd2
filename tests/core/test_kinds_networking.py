"""Networking kind components: ingress, ingressclass, networkpolicy, servicecidr, endpointslice
(seed 002, their entries): refusals with exact messages and inputs no shared case shows."""

from __future__ import annotations

from .kinds_support import build, build_yaml, refusal

REQ = "required (the Kubernetes API requires this field)"


def test_ingress_unknown_key_at_depth_and_null_rule() -> None:
    rules = [{"http": {"paths": [{"backend": {"service": {"name": "a", "prot": {}}}}]}}]
    assert refusal("ingress", {"rules": rules}) == (
        'component "c": unknown field "rules[0].http.paths[0].backend.service.prot"'
    )
    assert (
        refusal("ingress", {"rules": [None]}) == 'component "c": rules[0]: null is not a valid array element'
    )


def test_ingress_writes_what_the_go_type_writes_unauthored() -> None:
    rules = [{"http": {"paths": [{"backend": {"service": {"name": "api"}}}]}}]
    spec = build("ingress", {"rules": rules})["spec"]
    assert spec == {
        "rules": [
            {"http": {"paths": [{"backend": {"service": {"name": "api", "port": {}}}, "pathType": None}]}}
        ]
    }


def test_ingress_labels_annotations_and_object_name() -> None:
    props = {
        "objectName": "public",
        "labels": {"team": "web"},
        "annotations": {"nginx.ingress.kubernetes.io/rewrite-target": "/"},
        "ingressClassName": "",
    }
    assert build_yaml("ingress", props, name="web") == (
        "apiVersion: networking.k8s.io/v1\n"
        "kind: Ingress\n"
        "metadata:\n"
        "  annotations:\n"
        "    nginx.ingress.kubernetes.io/rewrite-target: /\n"
        "  labels:\n"
        "    launcher.gokure.dev/component: web\n"
        "    team: web\n"
        "  name: public\n"
        "  namespace: shop\n"
        "spec:\n"
        '  ingressClassName: ""\n'
    )


def test_ingress_two_spellings_of_one_field_are_refused() -> None:
    assert refusal("ingress", {"ingressClassName": "a", "IngressClassName": "b"}) == (
        'component "c": ingressClassName: sets the same field as IngressClassName (the decoder would keep only one)'
    )
    assert build("ingress", {"IngressClassName": "a"})["spec"] == {"ingressClassName": "a"}


def test_ingressclass_requires_a_controller_and_writes_scope_null() -> None:
    assert refusal("ingressclass", {}) == f'component "c": controller: {REQ}'
    assert refusal("ingressclass", {"controller": ""}) == f'component "c": controller: {REQ}'
    obj = build("ingressclass", {"controller": "x", "parameters": {"kind": "K", "name": "n"}}, name="nginx")
    assert obj["spec"]["parameters"] == {"kind": "K", "name": "n", "scope": None}
    assert "namespace" not in obj["metadata"]


def test_networkpolicy_empty_policy_types_is_refused() -> None:
    assert refusal("networkpolicy", {"policyTypes": []}) == (
        'component "c": policyTypes: [] cannot be carried by the Kubernetes API types (the field is omitted '
        "when empty, so the API server would apply its default (Ingress, and Egress when egress holds a rule))"
    )


def test_networkpolicy_null_rule_refused_allow_all_kept_empty_list_dropped() -> None:
    assert (
        refusal("networkpolicy", {"ingress": [None]})
        == 'component "c": ingress[0]: null is not a valid array element'
    )
    assert refusal("networkpolicy", {"ingress": [{"from": [None]}]}) == (
        'component "c": ingress[0].from[0]: null is not a valid array element'
    )
    assert build("networkpolicy", {"ingress": [{}], "egress": []})["spec"] == {
        "podSelector": {},
        "ingress": [{}],
    }


def test_networkpolicy_match_expressions_are_checked() -> None:
    selector = {"matchExpressions": [{"key": "a", "operator": "In"}]}
    assert refusal("networkpolicy", {"podSelector": selector}) == (
        'component "c": podSelector.matchExpressions[0].values: required with the operator In (at least one value)'
    )
    peer = {"namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "Is"}]}}
    assert refusal("networkpolicy", {"egress": [{"to": [peer]}]}) == (
        'component "c": egress[0].to[0].namespaceSelector.matchExpressions[0].operator: unsupported value "Is" '
        "(must be one of In, NotIn, Exists, DoesNotExist)"
    )
    assert refusal("networkpolicy", {"podSelector": {"matchExpressions": [{"operator": "Exists"}]}}) == (
        f'component "c": podSelector.matchExpressions[0].key: {REQ}'
    )


def test_networkpolicy_port_forms() -> None:
    ports = [{"port": "http"}, {"port": 8080, "endPort": 8090, "protocol": "TCP"}]
    assert build("networkpolicy", {"ingress": [{"ports": ports}]})["spec"]["ingress"] == [{"ports": ports}]


def test_servicecidr_requires_a_block_and_is_cluster_scoped() -> None:
    assert refusal("servicecidr", {}) == f'component "c": cidrs: {REQ}'
    assert refusal("servicecidr", {"cidrs": None}) == f'component "c": cidrs: {REQ}'
    assert refusal("servicecidr", {"cidrs": []}) == f'component "c": cidrs: {REQ}'
    obj = build("servicecidr", {"cidrs": ["bad"]}, name="extra")
    assert obj["spec"] == {"cidrs": ["bad"]} and "namespace" not in obj["metadata"]


def test_endpointslice_required_and_written_unauthored() -> None:
    assert refusal("endpointslice", {}) == f'component "c": addressType: {REQ}'
    assert refusal("endpointslice", {"addressType": "IPv4", "endpoints": [{}]}) == (
        f'component "c": endpoints[0].addresses: {REQ}'
    )
    obj = build("endpointslice", {"addressType": ""})
    assert (obj["addressType"], obj["endpoints"], obj["ports"]) == ("", None, None)
    assert "spec" not in obj


def test_endpointslice_conditions_and_hints() -> None:
    endpoints = [{"addresses": ["10.0.0.1"], "conditions": {"ready": False}}, {"addresses": []}]
    obj = build("endpointslice", {"addressType": "IPv4", "endpoints": endpoints, "ports": [{"port": 80}]})
    assert obj["endpoints"] == [
        {"addresses": ["10.0.0.1"], "conditions": {"ready": False}},
        {"addresses": [], "conditions": {}},
    ]
    assert obj["ports"] == [{"port": 80}]
    hints = [{"addresses": ["10.0.0.1"], "hints": {"forZones": [{}]}}]
    assert refusal("endpointslice", {"addressType": "IPv4", "endpoints": hints}) == (
        f'component "c": endpoints[0].hints.forZones[0].name: {REQ}'
    )


def test_endpointslice_refuses_object_keys() -> None:
    assert refusal("endpointslice", {"addressType": "IPv4", "apiVersion": "v1"}) == (
        'component "c": apiVersion: not authorable: launcher sets the object\'s kind, apiVersion and metadata '
        "(its name is the component's, or the one objectName gives it; its labels and annotations are the "
        "labels and annotations properties)"
    )
