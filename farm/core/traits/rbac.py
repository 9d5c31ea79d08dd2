"""The rbac trait: a Role and RoleBinding (and, with ``clusterRules``, a ClusterRole and
ClusterRoleBinding) granting the component's ServiceAccount the authored rules. A component that
runs pods under no account of its own is refused (part A §3 "rbac")."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError, TransformError
from farm.core.fields import parse_object_list, parse_string_list
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import COMMON_KEYS, app_labels, check_known_keys, metadata, string_prop

KEYS = COMMON_KEYS | {"name", "rules", "clusterRules"}
RULE_KEYS = ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs")
RBAC_GROUP = "rbac.authorization.k8s.io"
FACT_SERVICE_ACCOUNT = "service_account_name"


def _rules(props: dict[str, Any], key: str, cluster: bool) -> list[dict[str, Any]]:
    entries, _ = parse_object_list(props, key)
    out = []
    for index, entry in enumerate(entries):
        where = f"{key}[{index}]"
        check_known_keys(entry, RULE_KEYS, where)
        rule: dict[str, Any] = {}
        for field in RULE_KEYS:
            values, present = parse_string_list(entry, field, f"{where}.{field}")
            if present and (values or field == "apiGroups"):
                rule[field] = list(values)
        if not rule.get("verbs"):
            raise FieldError(f"{where}.verbs: at least one verb is required")
        if "nonResourceURLs" in rule and not cluster:
            raise FieldError(f"{where}.nonResourceURLs: only a cluster rule may name non-resource URLs")
        if not rule.get("resources") and not rule.get("nonResourceURLs"):
            raise FieldError(f"{where}.resources: at least one resource is required")
        out.append(rule)
    return out


def _service_account(app: TraitApplication) -> str:
    pod = app.generated.pod_spec()
    name = app.generated.facts.get(FACT_SERVICE_ACCOUNT) or (pod or {}).get("serviceAccountName")
    if not name:
        raise TransformError(
            f'component "{app.component.name}" runs its pods under no ServiceAccount of its own for the rbac '
            "trait to bind; set serviceAccountName"
        )
    return name


def _binding(
    kind: str, name: str, role_kind: str, account: str, namespace: str, labels: dict
) -> dict[str, Any]:
    return {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": kind,
        "metadata": metadata(name, namespace if kind == "RoleBinding" else None, labels),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": role_kind, "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    props = app.properties
    check_known_keys(props, KEYS)
    rules = _rules(props, "rules", cluster=False)
    cluster_rules = _rules(props, "clusterRules", cluster=True)
    if not rules and not cluster_rules:
        raise FieldError("rules: at least one rule or clusterRule is required")
    account = _service_account(app)
    namespace = app.ctx.namespace
    labels = app_labels(app.component.name)
    name = string_prop(props, "name") or app.component.name
    objects: list[dict[str, Any]] = []
    if rules:
        objects.append(
            {
                "apiVersion": f"{RBAC_GROUP}/v1",
                "kind": "Role",
                "metadata": metadata(name, namespace, labels),
                "rules": rules,
            }
        )
        objects.append(_binding("RoleBinding", name, "Role", account, namespace, labels))
    if cluster_rules:
        cluster_name = f"{namespace}-{name}"
        objects.append(
            {
                "apiVersion": f"{RBAC_GROUP}/v1",
                "kind": "ClusterRole",
                "metadata": metadata(cluster_name, None, labels),
                "rules": cluster_rules,
            }
        )
        objects.append(
            _binding("ClusterRoleBinding", cluster_name, "ClusterRole", account, namespace, labels)
        )
    return objects


HANDLER = TraitType(
    name="rbac",
    apply=apply,
    capability="none",
    emits=(
        "rbac.authorization.k8s.io/v1 Role",
        "rbac.authorization.k8s.io/v1 RoleBinding",
        "rbac.authorization.k8s.io/v1 ClusterRole",
        "rbac.authorization.k8s.io/v1 ClusterRoleBinding",
    ),
)
