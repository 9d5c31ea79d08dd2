"""Scheduling kind components: priorityclass, runtimeclass, poddisruptionbudget, horizontalpodautoscaler."""

from __future__ import annotations

from farm.core.errors import PolicyRefusal
from farm.core.policy import REFUSAL_REPLICA_MAXIMUM, Policy

from .kindbuild import build, message, refusal

HPA = {"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"}, "maxReplicas": 4}


def test_priorityclass_drops_false_default_and_writes_value_zero() -> None:
    obj = build(
        "priorityclass", {"globalDefault": False, "description": "", "objectName": "low"}, namespace="x"
    )
    assert obj["value"] == 0
    assert "globalDefault" not in obj and "description" not in obj
    assert obj["metadata"]["name"] == "low" and "namespace" not in obj["metadata"]


def test_priorityclass_value_range() -> None:
    assert message("priorityclass", {"value": 2**31}) == (
        'component "c": value: must be an integer within int32 range, got 2147483648'
    )


def test_runtimeclass_requires_handler_and_decodes_scheduling() -> None:
    assert (
        message("runtimeclass", {})
        == 'component "c": handler: required (the Kubernetes API requires this field)'
    )
    obj = build(
        "runtimeclass",
        {
            "handler": "runsc",
            "overhead": {"podFixed": {"cpu": 0.25, "memory": "64Mi"}},
            "scheduling": {
                "nodeSelector": {"sandbox": "gvisor"},
                "tolerations": [{"key": "sandbox", "operator": "Exists"}],
            },
        },
    )
    assert obj["apiVersion"] == "node.k8s.io/v1"
    assert obj["overhead"] == {"podFixed": {"cpu": "250m", "memory": "64Mi"}}
    assert obj["scheduling"]["tolerations"] == [{"key": "sandbox", "operator": "Exists"}]


def test_pdb_keeps_zero_allows_both_and_checks_selector() -> None:
    spec = build("poddisruptionbudget", {"minAvailable": 0, "maxUnavailable": "50%"})["spec"]
    assert spec == {"minAvailable": 0, "maxUnavailable": "50%"}
    bad = {"selector": {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}}
    assert message("poddisruptionbudget", bad) == (
        'component "c": selector.matchExpressions[0].values: must be empty with the operator Exists'
    )
    assert message(
        "poddisruptionbudget", {"selector": {"matchExpressions": [{"key": "a", "operator": "Has"}]}}
    ) == (
        'component "c": selector.matchExpressions[0].operator: unsupported value "Has" (must be one of In, '
        "NotIn, Exists, DoesNotExist)"
    )


def test_hpa_required_fields() -> None:
    assert message("horizontalpodautoscaler", {"maxReplicas": 3}) == (
        'component "c": scaleTargetRef: required (the Kubernetes API requires this field)'
    )
    assert message("horizontalpodautoscaler", {**HPA, "maxReplicas": 0}) == (
        'component "c": maxReplicas: required (the Kubernetes API requires this field)'
    )


def test_hpa_refuses_empty_metrics_and_policies() -> None:
    assert message("horizontalpodautoscaler", {**HPA, "metrics": []}) == (
        'component "c": metrics: [] cannot be carried by the Kubernetes API types (the field is omitted when '
        "empty, so the API server would apply its default (80% average CPU utilization))"
    )
    behavior = {"scaleUp": {"policies": []}}
    assert message("horizontalpodautoscaler", {**HPA, "behavior": behavior}).startswith(
        'component "c": behavior.scaleUp.policies: [] cannot be carried by the Kubernetes API types'
    )


def test_hpa_keeps_zero_window_and_canonicalises_quantities() -> None:
    spec = build(
        "horizontalpodautoscaler",
        {
            **HPA,
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "rps"},
                        "target": {"type": "AverageValue", "averageValue": 1.5},
                    },
                }
            ],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 0}},
        },
    )["spec"]
    assert spec["behavior"] == {"scaleDown": {"stabilizationWindowSeconds": 0}}
    assert spec["metrics"][0]["pods"]["target"]["averageValue"] == "1500m"


def test_hpa_max_replicas_is_held_to_the_policy_maximum() -> None:
    error = refusal("horizontalpodautoscaler", HPA, name="web", policy=Policy(max_replicas=3))
    assert isinstance(error, PolicyRefusal) and error.refusal_class == REFUSAL_REPLICA_MAXIMUM
    assert error.message == 'component "web": maxReplicas: replicas 4 exceeds enforced maximum 3'
