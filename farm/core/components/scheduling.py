"""Scheduling and disruption kind components: priorityclass, runtimeclass (cluster-scoped,
policy-free), poddisruptionbudget (policy-free) and horizontalpodautoscaler, whose maxReplicas is
held to the environment policy's replica maximum (seed 002, their entries)."""

from __future__ import annotations

from farm.core.kinds import scheduling as types
from farm.core.kinds.engine import KindContext, kind_component
from farm.core.kinds.meta import check_match_expressions
from farm.core.policy import check_replicas


def _check_pod_disruption_budget(kc: KindContext) -> None:
    check_match_expressions(kc.decoded.get("selector"), "selector")


def _check_horizontal_pod_autoscaler(kc: KindContext) -> None:
    check_replicas(kc.build.policy, kc.decoded["maxReplicas"], "maxReplicas")


PRIORITY_CLASS = kind_component(
    "priorityclass",
    "scheduling.k8s.io/v1",
    "PriorityClass",
    "schedulingv1.PriorityClass",
    body=types.PRIORITY_CLASS,
    cluster_scoped=True,
)

RUNTIME_CLASS = kind_component(
    "runtimeclass",
    "node.k8s.io/v1",
    "RuntimeClass",
    "nodev1.RuntimeClass",
    body=types.RUNTIME_CLASS,
    cluster_scoped=True,
)

POD_DISRUPTION_BUDGET = kind_component(
    "poddisruptionbudget",
    "policy/v1",
    "PodDisruptionBudget",
    "policyv1.PodDisruptionBudgetSpec",
    spec=types.POD_DISRUPTION_BUDGET_SPEC,
    check=_check_pod_disruption_budget,
)

HORIZONTAL_POD_AUTOSCALER = kind_component(
    "horizontalpodautoscaler",
    "autoscaling/v2",
    "HorizontalPodAutoscaler",
    "autoscalingv2.HorizontalPodAutoscalerSpec",
    spec=types.HPA_SPEC,
    check=_check_horizontal_pod_autoscaler,
)
