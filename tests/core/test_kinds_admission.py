"""Admission kind components: apiservice and the webhook configurations."""

from __future__ import annotations

import pytest

from .kindbuild import build, message

API_SERVICE = {
    "group": "metrics.example.com",
    "version": "v1beta1",
    "groupPriorityMinimum": 100,
    "versionPriority": 10,
    "service": {"namespace": "monitoring", "name": "metrics", "port": 443},
    "caBundle": "Y2E=",
}

WEBHOOK = {
    "name": "w.example.com",
    "clientConfig": {"url": "https://w.example.com"},
    "sideEffects": "None",
    "admissionReviewVersions": ["v1"],
}


def test_apiservice_builds_under_its_required_name() -> None:
    obj = build("apiservice", API_SERVICE, name="v1beta1.metrics.example.com", namespace="shop")
    assert obj["apiVersion"] == "apiregistration.k8s.io/v1"
    assert obj["metadata"] == {
        "name": "v1beta1.metrics.example.com",
        "labels": {"launcher.gokure.dev/component": "v1beta1.metrics.example.com"},
    }
    assert obj["spec"]["service"] == {"namespace": "monitoring", "name": "metrics", "port": 443}


def test_apiservice_refuses_another_name() -> None:
    assert message("apiservice", API_SERVICE, name="metrics") == (
        'component "metrics": the APIService is named "metrics", and the API requires the name '
        '"v1beta1.metrics.example.com" (<version>.<group>): name the component so, or set objectName'
    )
    assert build("apiservice", {**API_SERVICE, "objectName": "v1beta1.metrics.example.com"}, name="m")


@pytest.mark.parametrize(
    ("drop", "expected"),
    [
        ("groupPriorityMinimum", "groupPriorityMinimum: required (the Kubernetes API requires this field)"),
        ("version", "version: required (the API server requires an APIService's version)"),
        ("group", "group: required (the API server requires an APIService's group)"),
    ],
)
def test_apiservice_required(drop: str, expected: str) -> None:
    props = {k: v for k, v in API_SERVICE.items() if k != drop}
    assert message("apiservice", props, name="x") == f'component "x": {expected}'


def test_apiservice_service_needs_namespace_and_name() -> None:
    props = {**API_SERVICE, "service": {"name": "metrics"}}
    assert message("apiservice", props, name="x") == (
        'component "x": service.namespace: required (the API server requires the Service\'s namespace)'
    )


def test_webhook_client_config_exactly_one() -> None:
    both = {**WEBHOOK, "clientConfig": {"url": "https://x", "service": {"namespace": "a", "name": "b"}}}
    expected = (
        'component "c": webhooks[0].clientConfig: exactly one of url and service is required (the API server '
        "calls a webhook at a URL or through a Service)"
    )
    assert message("validatingwebhookconfiguration", {"webhooks": [both]}) == expected
    neither = {**WEBHOOK, "clientConfig": {}}
    assert message("mutatingwebhookconfiguration", {"webhooks": [neither]}) == expected


def test_webhook_required_fields() -> None:
    no_side_effects = {k: v for k, v in WEBHOOK.items() if k != "sideEffects"}
    assert message("validatingwebhookconfiguration", {"webhooks": [no_side_effects]}) == (
        'component "c": webhooks[0].sideEffects: required (the Kubernetes API requires this field)'
    )
    assert message(
        "validatingwebhookconfiguration", {"webhooks": [{**WEBHOOK, "admissionReviewVersions": []}]}
    ) == ('component "c": webhooks[0].admissionReviewVersions: required (at least one version)')
    service = {**WEBHOOK, "clientConfig": {"service": {"name": "b"}}}
    assert message("validatingwebhookconfiguration", {"webhooks": [service]}) == (
        'component "c": webhooks[0].clientConfig.service.namespace: required (the Kubernetes API requires this field)'
    )


def test_webhook_rule_names_each_list() -> None:
    rule = {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"]}
    assert message("validatingwebhookconfiguration", {"webhooks": [{**WEBHOOK, "rules": [rule]}]}) == (
        'component "c": webhooks[0].rules[0].resources: required (a rule names at least one resource)'
    )


def test_webhook_object_keys_refused_and_empty_list() -> None:
    assert message("validatingwebhookconfiguration", {"kind": "X", "webhooks": []}).startswith(
        'component "c": kind: not authorable'
    )
    obj = build("mutatingwebhookconfiguration", {"webhooks": []})
    assert "webhooks" not in obj and "namespace" not in obj["metadata"]


def test_mutating_webhook_reinvocation_policy() -> None:
    obj = build("mutatingwebhookconfiguration", {"webhooks": [{**WEBHOOK, "reinvocationPolicy": "IfNeeded"}]})
    assert obj["webhooks"][0]["reinvocationPolicy"] == "IfNeeded"
    assert message(
        "validatingwebhookconfiguration", {"webhooks": [{**WEBHOOK, "reinvocationPolicy": "Never"}]}
    ) == ('component "c": unknown field "webhooks[0].reinvocationPolicy"')


def test_webhook_selector_expressions_checked() -> None:
    webhook = {**WEBHOOK, "objectSelector": {"matchExpressions": [{"key": "a", "operator": "NotIn"}]}}
    assert message("validatingwebhookconfiguration", {"webhooks": [webhook]}) == (
        'component "c": webhooks[0].objectSelector.matchExpressions[0].values: required with the operator '
        "NotIn (at least one value)"
    )


def test_ca_bundle_must_be_base64() -> None:
    webhook = {**WEBHOOK, "clientConfig": {"url": "https://x", "caBundle": "not base64!"}}
    assert message("validatingwebhookconfiguration", {"webhooks": [webhook]}) == (
        'component "c": webhooks[0].clientConfig.caBundle: illegal base64 data (a []byte field is written in base64)'
    )
