"""Gateway API kind components: required paths, refused omissions, defaulted zeros, the Service
backend port rule and the infrastructure label check (seed 002, the Gateway API entries)."""

from __future__ import annotations

import pytest

from .kinds_support import build, build_yaml, refusal

REQ = "required (the Gateway API requires this field)"
LISTENER = {"name": "http", "port": 80, "protocol": "HTTP"}


def test_gatewayclass_is_cluster_scoped_and_requires_its_controller() -> None:
    obj = build("gatewayclass", {"controllerName": "example.net/gc"}, name="edge")
    assert obj["metadata"] == {"name": "edge", "labels": {"launcher.gokure.dev/component": "edge"}}
    assert refusal("gatewayclass", {"description": "x"}) == f'component "c": controllerName: {REQ}'
    assert refusal("gatewayclass", {"controllerName": "x", "parametersRef": {"group": "g", "kind": "K"}}) == (
        f'component "c": parametersRef.name: {REQ}'
    )


def test_gateway_requires_class_listeners_and_listener_fields() -> None:
    assert refusal("gateway", {"listeners": []}) == f'component "c": gatewayClassName: {REQ}'
    assert refusal("gateway", {"gatewayClassName": "x"}) == f'component "c": listeners: {REQ}'
    listeners = [LISTENER, {"name": "b", "protocol": "HTTP"}]
    assert refusal("gateway", {"gatewayClassName": "x", "listeners": listeners}) == (
        f'component "c": listeners[1].port: {REQ}'
    )


def test_gateway_accepts_an_empty_listener_list_and_writes_no_defaults() -> None:
    obj = build("gateway", {"gatewayClassName": "x", "listeners": []})
    assert obj["spec"] == {"gatewayClassName": "x", "listeners": []}


def test_gateway_frontend_validation_mode_empty_is_a_defaulted_zero() -> None:
    tls = {"frontend": {"default": {"validation": {"caCertificateRefs": [], "mode": ""}}}}
    message = refusal("gateway", {"gatewayClassName": "x", "listeners": [LISTENER], "tls": tls})
    assert message == (
        'component "c": tls.frontend.default.validation.mode: "" cannot be carried by the Gateway API '
        'types (the field is omitted when zero, so the API server would apply its default "AllowValidOnly")'
    )


def test_gateway_frontend_requires_default_and_validation_refs() -> None:
    spec = {"gatewayClassName": "x", "listeners": [LISTENER]}
    assert (
        refusal("gateway", {**spec, "tls": {"frontend": {}}}) == f'component "c": tls.frontend.default: {REQ}'
    )
    tls = {"frontend": {"default": {}, "perPort": [{"port": 443, "tls": {"validation": {}}}]}}
    assert refusal("gateway", {**spec, "tls": tls}) == (
        f'component "c": tls.frontend.perPort[0].tls.validation.caCertificateRefs: {REQ}'
    )


def test_gateway_namespace_selector_expression_needs_key_and_operator() -> None:
    listener = {
        **LISTENER,
        "allowedRoutes": {
            "namespaces": {"from": "Selector", "selector": {"matchExpressions": [{"key": "a"}]}}
        },
    }
    assert refusal("gateway", {"gatewayClassName": "x", "listeners": [listener]}) == (
        f'component "c": listeners[0].allowedRoutes.namespaces.selector.matchExpressions[0].operator: {REQ}'
    )


def test_gateway_infrastructure_component_label_must_hold_the_component() -> None:
    spec = {"gatewayClassName": "x", "listeners": [LISTENER]}
    infra = {"labels": {"launcher.gokure.dev/component": "db"}}
    assert refusal("gateway", {**spec, "infrastructure": infra}, name="web") == (
        'component "web": Gateway "web": spec.infrastructure.labels["launcher.gokure.dev/component"]: '
        '"db" is not the component label of component "web"'
    )
    infra = {"labels": {"launcher.gokure.dev/component": "web", "team": "a"}}
    assert build("gateway", {**spec, "infrastructure": infra}, name="web")["spec"]["infrastructure"] == infra


def test_listenerset_refuses_missing_or_empty_listeners_and_zero_port() -> None:
    parent = {"name": "gw"}
    assert refusal("listenerset", {"parentRef": parent}) == f'component "c": listeners: {REQ}'
    assert (
        refusal("listenerset", {"parentRef": parent, "listeners": []}) == f'component "c": listeners: {REQ}'
    )
    bad = {"name": "a", "port": 0, "protocol": "HTTP"}
    assert refusal("listenerset", {"parentRef": parent, "listeners": [LISTENER, bad]}) == (
        f'component "c": listeners[1].port: {REQ}'
    )
    assert refusal("listenerset", {"listeners": [LISTENER]}) == f'component "c": parentRef: {REQ}'
    assert (
        refusal("listenerset", {"parentRef": {}, "listeners": [LISTENER]})
        == f'component "c": parentRef.name: {REQ}'
    )


def test_referencegrant_requires_sources_and_targets_fields() -> None:
    assert refusal("referencegrant", {"to": []}) == f'component "c": from: {REQ}'
    grant = {"from": [{"group": "", "kind": "HTTPRoute"}], "to": []}
    assert refusal("referencegrant", grant) == f'component "c": from[0].namespace: {REQ}'
    grant = {"from": [], "to": [{"group": ""}]}
    assert refusal("referencegrant", grant) == f'component "c": to[0].kind: {REQ}'
    obj = build("referencegrant", {"from": [], "to": [{"group": "", "kind": "Service"}]})
    assert obj["spec"] == {"from": [], "to": [{"group": "", "kind": "Service"}]}


def test_backendtlspolicy_refuses_missing_targets_and_hostname() -> None:
    validation = {"hostname": "a.example.com"}
    assert refusal("backendtlspolicy", {"validation": validation}) == f'component "c": targetRefs: {REQ}'
    assert refusal("backendtlspolicy", {"targetRefs": [], "validation": validation}) == (
        f'component "c": targetRefs: {REQ}'
    )
    target = [{"group": "", "kind": "Service", "name": "s"}]
    assert refusal("backendtlspolicy", {"targetRefs": target, "validation": {}}) == (
        f'component "c": validation.hostname: {REQ}'
    )
    sans = {**validation, "subjectAltNames": [{"hostname": "x"}]}
    assert refusal("backendtlspolicy", {"targetRefs": target, "validation": sans}) == (
        f'component "c": validation.subjectAltNames[0].type: {REQ}'
    )


def test_httproute_requires_nothing_and_writes_no_parent() -> None:
    assert build("httproute", {})["spec"] == {}
    assert build("httproute", {"rules": [{"backendRefs": [{"port": 80}]}]})["spec"] == {
        "rules": [{"backendRefs": [{"name": "", "port": 80}]}]
    }
    assert refusal("httproute", {"rules": [{"matches": [{"paht": {}}]}]}) == (
        'component "c": unknown field "rules[0].matches[0].paht"'
    )


def test_grpcroute_honours_object_name_and_refuses_null_elements() -> None:
    obj = build("grpcroute", {"objectName": "orders-v2", "hostnames": ["a.example.com"]})
    assert obj["metadata"]["name"] == "orders-v2"
    assert (
        refusal("grpcroute", {"rules": [None]})
        == 'component "c": rules[0]: null is not a valid array element'
    )


@pytest.mark.parametrize("kind", ["tcproute", "udproute", "tlsroute"])
def test_l4_routes_refuse_missing_rules_and_backends(kind: str) -> None:
    base = {"hostnames": ["a.example.com"]} if kind == "tlsroute" else {}
    assert refusal(kind, base) == f'component "c": rules: {REQ}'
    assert refusal(kind, {**base, "rules": [{}]}) == f'component "c": rules[0].backendRefs: {REQ}'
    assert (
        refusal(kind, {**base, "rules": [{"backendRefs": []}]})
        == f'component "c": rules[0].backendRefs: {REQ}'
    )
    rules = [{"backendRefs": [{"port": 5432}]}]
    assert refusal(kind, {**base, "rules": rules}) == f'component "c": rules[0].backendRefs[0].name: {REQ}'
    assert (
        refusal(kind, {**base, "parentRefs": [{}], "rules": rules})
        == f'component "c": parentRefs[0].name: {REQ}'
    )


def test_tlsroute_requires_hostnames() -> None:
    rules = [{"backendRefs": [{"name": "a", "port": 443}]}]
    assert refusal("tlsroute", {"rules": rules}) == f'component "c": hostnames: {REQ}'
    assert refusal("tlsroute", {"hostnames": [], "rules": rules}) == f'component "c": hostnames: {REQ}'


@pytest.mark.parametrize(
    ("backend", "needs_port"),
    [
        ({}, True),
        ({"group": ""}, True),
        ({"kind": "Service"}, True),
        ({"group": "", "kind": "Service"}, True),
        ({"kind": "Pod"}, False),
        ({"group": "example.com"}, False),
        ({"group": "example.com", "kind": "Service"}, False),
    ],
)
def test_l4_service_backend_must_name_its_port(backend: dict, needs_port: bool) -> None:
    rules = [{"backendRefs": [{"name": "a", "port": 1}, {"name": "b", **backend}]}]
    if needs_port:
        assert refusal("tcproute", {"rules": rules}) == f'component "c": rules[0].backendRefs[1].port: {REQ}'
    else:
        assert build("tcproute", {"rules": rules})["spec"]["rules"][0]["backendRefs"][1] == {
            "name": "b",
            **backend,
        }


def test_tcproute_yaml_output() -> None:
    props = {
        "parentRefs": [{"name": "gw", "sectionName": "pg"}],
        "rules": [{"backendRefs": [{"name": "db", "port": 5432}]}],
    }
    assert build_yaml("tcproute", props, name="db") == (
        "apiVersion: gateway.networking.k8s.io/v1\n"
        "kind: TCPRoute\n"
        "metadata:\n"
        "  labels:\n"
        "    launcher.gokure.dev/component: db\n"
        "  name: db\n"
        "  namespace: shop\n"
        "spec:\n"
        "  parentRefs:\n"
        "  - name: gw\n"
        "    sectionName: pg\n"
        "  rules:\n"
        "  - backendRefs:\n"
        "    - name: db\n"
        "      port: 5432\n"
    )
