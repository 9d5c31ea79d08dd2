"""Core kind components: namespace, limitrange and resourcequota (seed 002, their entry), each the
strict projection of one core/v1 object's spec on the kind engine. None runs a pod or requests
storage, so the environment policy holds nothing of them."""

from __future__ import annotations

from farm.core.errors import FieldError
from farm.core.kinds import core as types
from farm.core.kinds.engine import KindContext, kind_component
from farm.core.names import is_dns1123_label


def _check_namespace(kc: KindContext) -> None:
    """The API holds a Namespace's name to a DNS-1123 label, narrower than a component name."""
    name = kc.obj["metadata"]["name"]
    if not is_dns1123_label(name):
        raise FieldError(
            f'namespace name "{name}": must be a DNS-1123 label (lowercase letters, digits and '
            "'-', at most 63 characters, no dot), which the API requires of a Namespace's name"
        )


def _check_limit_range(kc: KindContext) -> None:
    """The API takes one limit of each type."""
    seen: dict[str, int] = {}
    for index, limit in enumerate(kc.decoded.get("limits") or []):
        kind = limit.get("type", "")
        if kind in seen:
            raise FieldError(
                f'limits[{index}].type: duplicate value "{kind}": limits[{seen[kind]}] has that type '
                "already, and the API takes one limit of each type"
            )
        seen[kind] = index


NAMESPACE = kind_component(
    "namespace",
    "v1",
    "Namespace",
    "corev1.NamespaceSpec",
    spec=types.NAMESPACE_SPEC,
    cluster_scoped=True,
    check=_check_namespace,
)

LIMIT_RANGE = kind_component(
    "limitrange",
    "v1",
    "LimitRange",
    "corev1.LimitRangeSpec",
    spec=types.LIMIT_RANGE_SPEC,
    check=_check_limit_range,
)

RESOURCE_QUOTA = kind_component(
    "resourcequota",
    "v1",
    "ResourceQuota",
    "corev1.ResourceQuotaSpec",
    spec=types.RESOURCE_QUOTA_SPEC,
)
