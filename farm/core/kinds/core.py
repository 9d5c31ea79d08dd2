"""Field tables of the core/v1 NamespaceSpec, LimitRangeSpec and ResourceQuotaSpec, at k8s.io/api
v0.37.1 (seed 002, "namespace, limitrange, resourcequota")."""

from __future__ import annotations

from farm.core.kinds.engine import QUANTITY, STRING, F, Struct, list_of, map_of

RESOURCE_LIST = map_of(QUANTITY)

NAMESPACE_SPEC = Struct("NamespaceSpec", [F("finalizers", list_of(STRING), "omit")])

# type has no omitempty: an unauthored one would be written as "", so it is required.
LIMIT_RANGE_ITEM = Struct(
    "LimitRangeItem",
    [
        F("type", STRING, "req"),
        F("max", RESOURCE_LIST, "omit"),
        F("min", RESOURCE_LIST, "omit"),
        F("default", RESOURCE_LIST, "omit"),
        F("defaultRequest", RESOURCE_LIST, "omit"),
        F("maxLimitRequestRatio", RESOURCE_LIST, "omit"),
    ],
)

# limits has no omitempty: an unauthored one would be written as null, so it is required;
# an authored [] is a LimitRange that enforces nothing and is kept.
LIMIT_RANGE_SPEC = Struct("LimitRangeSpec", [F("limits", list_of(LIMIT_RANGE_ITEM), "req")])

SCOPED_RESOURCE_SELECTOR_REQUIREMENT = Struct(
    "ScopedResourceSelectorRequirement",
    [F("scopeName", STRING), F("operator", STRING), F("values", list_of(STRING), "omit")],
)

SCOPE_SELECTOR = Struct(
    "ScopeSelector", [F("matchExpressions", list_of(SCOPED_RESOURCE_SELECTOR_REQUIREMENT), "omit")]
)

RESOURCE_QUOTA_SPEC = Struct(
    "ResourceQuotaSpec",
    [
        F("hard", RESOURCE_LIST, "omit"),
        F("scopes", list_of(STRING), "omit"),
        F("scopeSelector", SCOPE_SELECTOR, "omit ptr"),
    ],
)
