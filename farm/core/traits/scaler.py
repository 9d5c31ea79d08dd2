"""The scaler trait: an autoscaling/v2 HorizontalPodAutoscaler ``<component>-hpa`` for the
component's Deployment and, with ``enablePDB``, a policy/v1 PodDisruptionBudget ``<component>-pdb``
(launcher-pipeline §2 "scaler"; seed 002 l.262-266, 1129, 1173)."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import parse_bool_field, parse_int32_field
from farm.core.policy import check_replicas
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import COMMON_KEYS, app_labels, check_known_keys, metadata

KEYS = COMMON_KEYS | {
    "minReplicas",
    "maxReplicas",
    "targetCPUUtilization",
    "targetMemoryUtilization",
    "enablePDB",
}
DEFAULT_CPU_UTILIZATION = 80
PDB_MIN_AVAILABLE = "50%"
# Generated.facts key a Deployment-backed component sets to the volume name of its first claim
# that is not ReadWriteMany-shareable (documented in model.py).
FACT_NON_RWX_CLAIM = "non_rwx_claim"
POLICY_MIN_DEFAULT, POLICY_MAX_DEFAULT = "scaler_min_replicas", "scaler_max_replicas"


def _replicas(app: TraitApplication) -> tuple[int, int]:
    props, policy = app.properties, app.ctx.policy
    minimum, has_min = parse_int32_field(props, "minReplicas")
    maximum, has_max = parse_int32_field(props, "maxReplicas")
    if not has_min:
        minimum = int(policy.extra.get(POLICY_MIN_DEFAULT, 1))
    if not has_max:
        if POLICY_MAX_DEFAULT not in policy.extra:
            raise FieldError("maxReplicas is required")
        maximum = int(policy.extra[POLICY_MAX_DEFAULT])
    if minimum < 1:
        raise FieldError(f"minReplicas: must be >= 1, got {minimum}")
    if maximum < minimum:
        raise FieldError(f"maxReplicas: must be >= minReplicas ({minimum}), got {maximum}")
    check_replicas(policy, maximum, "maxReplicas")
    return minimum, maximum


def _utilization(props: dict[str, Any], key: str) -> int | None:
    value, present = parse_int32_field(props, key)
    if not present:
        return None
    if not 1 <= value <= 100:
        raise FieldError(f"{key}: must be between 1 and 100, got {value}")
    return value


def _metrics(props: dict[str, Any]) -> list[dict[str, Any]]:
    cpu = _utilization(props, "targetCPUUtilization")
    memory = _utilization(props, "targetMemoryUtilization")
    if cpu is None and memory is None:
        cpu = DEFAULT_CPU_UTILIZATION
    metrics = []
    for resource, target in (("cpu", cpu), ("memory", memory)):
        if target is not None:
            metrics.append(
                {
                    "type": "Resource",
                    "resource": {
                        "name": resource,
                        "target": {"type": "Utilization", "averageUtilization": target},
                    },
                }
            )
    return metrics


def _target_name(app: TraitApplication) -> str:
    workload = app.generated.workload
    if workload and workload.get("kind") == "Deployment":
        return workload.get("metadata", {}).get("name") or app.component.name
    return app.component.name


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    props = app.properties
    check_known_keys(props, KEYS)
    minimum, maximum = _replicas(app)
    claim = app.generated.facts.get(FACT_NON_RWX_CLAIM)
    if claim and maximum > 1:
        raise FieldError(
            f'maxReplicas: {maximum} exceeds 1: volume "{claim}" is a non-RWX PVC, and a non-RWX PVC allows at '
            "most one replica"
        )
    component = app.component.name
    labels = app_labels(component)
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": metadata(f"{component}-hpa", app.ctx.namespace, labels),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": _target_name(app)},
            "minReplicas": minimum,
            "maxReplicas": maximum,
            "metrics": _metrics(props),
        },
    }
    objects = [hpa]
    enable_pdb, _ = parse_bool_field(props, "enablePDB")
    if enable_pdb:
        if minimum < 2:
            raise FieldError(
                f"enablePDB: minAvailable {PDB_MIN_AVAILABLE} of minReplicas {minimum} would block every eviction; "
                "set minReplicas to at least 2"
            )
        objects.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": metadata(f"{component}-pdb", app.ctx.namespace, labels),
                "spec": {"minAvailable": PDB_MIN_AVAILABLE, "selector": {"matchLabels": dict(labels)}},
            }
        )
    return objects


HANDLER = TraitType(
    name="scaler",
    apply=apply,
    capability="none",
    emits=("autoscaling/v2 HorizontalPodAutoscaler", "policy/v1 PodDisruptionBudget"),
    component_types=frozenset({"deployment", "webservice", "worker"}),
)
