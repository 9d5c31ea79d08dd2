"""RBAC kind components: role, rolebinding, clusterrole, clusterrolebinding (seed 002, their
entries). The objects have no spec: the properties are their top-level fields. Beyond the markers,
the presence rules read by hand from the API server's RBAC validation (Kubernetes v1.37.1)."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.kinds import rbac as types
from farm.core.kinds.engine import KindContext, kind_component
from farm.core.kinds.meta import check_match_expressions

RBAC_V1 = "rbac.authorization.k8s.io/v1"


def _check_resource_rule(rule: dict[str, Any], where: str) -> None:
    """A resource rule names at least one API group and one resource (counted decoded, so [] too)."""
    if not rule.get("apiGroups"):
        raise FieldError(
            f'{where}.apiGroups: required (a rule names at least one API group; "" is the core group)'
        )
    if not rule.get("resources"):
        raise FieldError(f"{where}.resources: required (a rule names at least one resource)")


def _check_role(kc: KindContext) -> None:
    for index, rule in enumerate(kc.decoded.get("rules") or []):
        where = f"rules[{index}]"
        if rule.get("nonResourceURLs"):
            raise FieldError(
                f"{where}.nonResourceURLs: not allowed in a Role (a non-resource URL is not namespaced; "
                "grant it in a ClusterRole)"
            )
        _check_resource_rule(rule, where)


def _check_cluster_role(kc: KindContext) -> None:
    for index, rule in enumerate(kc.decoded.get("rules") or []):
        where = f"rules[{index}]"
        if rule.get("nonResourceURLs"):
            beside = [key for key in ("apiGroups", "resources", "resourceNames") if rule.get(key)]
            if beside:
                raise FieldError(
                    f"{where}.nonResourceURLs: not allowed beside {', '.join(beside)} (a rule names "
                    "non-resource URLs or resources, not both)"
                )
            continue
        _check_resource_rule(rule, where)
    aggregation = kc.decoded.get("aggregationRule")
    if aggregation is None:
        return
    selectors = aggregation.get("clusterRoleSelectors") or []
    if not selectors:
        raise FieldError("aggregationRule.clusterRoleSelectors: required (at least one selector; {} is one)")
    for index, selector in enumerate(selectors):
        check_match_expressions(selector, f"aggregationRule.clusterRoleSelectors[{index}]")


def _check_cluster_role_binding(kc: KindContext) -> None:
    for index, subject in enumerate(kc.decoded.get("subjects") or []):
        if subject.get("kind") == "ServiceAccount" and not subject.get("namespace"):
            raise FieldError(
                f"subjects[{index}].namespace: required (a ServiceAccount subject of a ClusterRoleBinding "
                "names its namespace)"
            )


ROLE = kind_component("role", RBAC_V1, "Role", "rbacv1.Role", body=types.ROLE, check=_check_role)

ROLE_BINDING = kind_component("rolebinding", RBAC_V1, "RoleBinding", "rbacv1.RoleBinding", body=types.BINDING)

CLUSTER_ROLE = kind_component(
    "clusterrole",
    RBAC_V1,
    "ClusterRole",
    "rbacv1.ClusterRole",
    body=types.CLUSTER_ROLE,
    cluster_scoped=True,
    check=_check_cluster_role,
)

CLUSTER_ROLE_BINDING = kind_component(
    "clusterrolebinding",
    RBAC_V1,
    "ClusterRoleBinding",
    "rbacv1.ClusterRoleBinding",
    body=types.BINDING,
    cluster_scoped=True,
    check=_check_cluster_role_binding,
)
