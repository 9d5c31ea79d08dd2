"""RBAC kind components: hand-read presence rules with exact messages and inputs no shared case shows."""

from __future__ import annotations

import pytest

from .kindbuild import build, build_all, message

RULE = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}


@pytest.mark.parametrize("kind", ["role", "clusterrole"])
def test_rule_needs_api_groups_and_resources_even_authored_empty(kind: str) -> None:
    assert message(kind, {"rules": [{"resources": ["pods"], "verbs": ["get"]}]}) == (
        'component "c": rules[0].apiGroups: required (a rule names at least one API group; "" is the core group)'
    )
    assert message(kind, {"rules": [{"apiGroups": [""], "resources": [], "verbs": ["get"]}]}) == (
        'component "c": rules[0].resources: required (a rule names at least one resource)'
    )
    assert message(kind, {"rules": [{"apiGroups": [""], "resources": ["pods"]}]}) == (
        'component "c": rules[0].verbs: required (the Kubernetes API requires this field)'
    )


def test_role_refuses_non_resource_urls() -> None:
    assert message("role", {"rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]}) == (
        'component "c": rules[0].nonResourceURLs: not allowed in a Role (a non-resource URL is not '
        "namespaced; grant it in a ClusterRole)"
    )


def test_clusterrole_non_resource_urls_not_beside_resources() -> None:
    rule = {"nonResourceURLs": ["/healthz"], "resources": ["pods"], "verbs": ["get"]}
    assert message("clusterrole", {"rules": [rule]}) == (
        'component "c": rules[0].nonResourceURLs: not allowed beside resources (a rule names non-resource '
        "URLs or resources, not both)"
    )


def test_role_rules_null_or_empty_as_authored() -> None:
    assert build("role", {})["rules"] is None
    assert build("role", {"rules": []})["rules"] == []


def test_clusterrole_aggregation_rule() -> None:
    assert message("clusterrole", {"aggregationRule": {}}) == (
        'component "c": aggregationRule.clusterRoleSelectors: required (at least one selector; {} is one)'
    )
    expression = {"key": "a", "operator": "In"}
    assert message(
        "clusterrole", {"aggregationRule": {"clusterRoleSelectors": [{"matchExpressions": [expression]}]}}
    ) == (
        'component "c": aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: required with '
        "the operator In (at least one value)"
    )
    obj = build("clusterrole", {"aggregationRule": {"clusterRoleSelectors": [{}]}, "rules": []})
    assert obj["aggregationRule"] == {"clusterRoleSelectors": [{}]}
    assert obj["rules"] == []
    assert "namespace" not in obj["metadata"]


def test_bindings_need_role_ref_and_subject_names() -> None:
    assert message("rolebinding", {"subjects": [{"kind": "User", "name": "jane"}]}) == (
        'component "c": roleRef: required (the Kubernetes API requires this field)'
    )
    assert message(
        "rolebinding", {"roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "User"}]}
    ) == ('component "c": subjects[0].name: required (the Kubernetes API requires this field)')


def test_clusterrolebinding_service_account_needs_namespace() -> None:
    props = {
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "ServiceAccount", "name": "w"}],
    }
    assert message("clusterrolebinding", props) == (
        'component "c": subjects[0].namespace: required (a ServiceAccount subject of a ClusterRoleBinding '
        "names its namespace)"
    )
    # a rolebinding takes it without (read as the binding's own namespace)
    obj = build("rolebinding", props)
    assert obj["subjects"] == [{"kind": "ServiceAccount", "name": "w"}]


def test_object_keys_are_not_authorable() -> None:
    assert message("role", {"Metadata": {"name": "x"}}).startswith(
        'component "c": Metadata: not authorable: launcher sets the object\'s kind'
    )


def test_cluster_scoped_object_name_and_labels() -> None:
    (role,) = build_all(
        [{"name": "c", "type": "clusterrole", "properties": {"objectName": "read-all", "rules": [RULE]}}],
        namespace="shop",
    )
    assert role["metadata"] == {"name": "read-all", "labels": {"launcher.gokure.dev/component": "c"}}
