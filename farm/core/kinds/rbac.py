"""Field tables of rbac.authorization.k8s.io/v1 (k8s.io/api v0.37.1): the object types, which have
no spec, with the API's +required markers."""

from __future__ import annotations

from farm.core.kinds.engine import STRING, F, Struct, list_of
from farm.core.kinds.meta import LABEL_SELECTOR

POLICY_RULE = Struct(
    "PolicyRule",
    [
        F("verbs", list_of(STRING), "req"),
        F("apiGroups", list_of(STRING), "omit"),
        F("resources", list_of(STRING), "omit"),
        F("resourceNames", list_of(STRING), "omit"),
        F("nonResourceURLs", list_of(STRING), "omit"),
    ],
)

AGGREGATION_RULE = Struct("AggregationRule", [F("clusterRoleSelectors", list_of(LABEL_SELECTOR), "omit")])

SUBJECT = Struct(
    "Subject",
    [
        F("kind", STRING, "req"),
        F("apiGroup", STRING, "omit"),
        F("name", STRING, "req"),
        F("namespace", STRING, "omit"),
    ],
)

ROLE_REF = Struct("RoleRef", [F("apiGroup", STRING), F("kind", STRING, "req"), F("name", STRING, "req")])

ROLE = Struct("Role", [F("rules", list_of(POLICY_RULE))])

CLUSTER_ROLE = Struct(
    "ClusterRole",
    [F("rules", list_of(POLICY_RULE)), F("aggregationRule", AGGREGATION_RULE, "omit ptr")],
)

BINDING = Struct("RoleBinding", [F("subjects", list_of(SUBJECT), "omit"), F("roleRef", ROLE_REF, "req")])
