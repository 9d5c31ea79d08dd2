"""The topology-spread trait: spreads a Deployment's pods over nodes (2+ replicas, DoNotSchedule)
and zones (3+ replicas, ScheduleAnyway). Deployment-only; refuses authored constraints
(seed 002 l.210; launcher-pipeline §2 "webservice")."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError, TransformError
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import COMMON_KEYS, app_labels, check_known_keys

HOSTNAME_KEY = "kubernetes.io/hostname"
ZONE_KEY = "topology.kubernetes.io/zone"


def _constraint(component: str, key: str, when: str) -> dict[str, Any]:
    return {
        "labelSelector": {"matchLabels": app_labels(component)},
        "maxSkew": 1,
        "topologyKey": key,
        "whenUnsatisfiable": when,
    }


def spread_constraints(component: str, replicas: int) -> list[dict[str, Any]]:
    constraints = []
    if replicas >= 2:
        constraints.append(_constraint(component, HOSTNAME_KEY, "DoNotSchedule"))
    if replicas >= 3:
        constraints.append(_constraint(component, ZONE_KEY, "ScheduleAnyway"))
    return constraints


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    check_known_keys(app.properties, COMMON_KEYS)
    workload = app.generated.workload
    component = app.component.name
    if not workload or workload.get("kind") != "Deployment":
        raise TransformError(f'component "{component}" generates no Deployment the trait can act on')
    pod = app.generated.pod_spec() or {}
    if pod.get("topologySpreadConstraints"):
        raise FieldError(
            "topologySpreadConstraints: authored constraints cannot be combined with the topology-spread trait"
        )
    replicas = (workload.get("spec") or {}).get("replicas")
    constraints = spread_constraints(component, 1 if replicas is None else int(replicas))
    if constraints:
        pod["topologySpreadConstraints"] = constraints
    return []


HANDLER = TraitType(name="topology-spread", apply=apply, capability="none")
