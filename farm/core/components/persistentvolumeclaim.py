"""The persistentvolumeclaim component (a v1 PersistentVolumeClaim named after the component) and
the claim parser and builder its twin, the pvc trait, shares (seed 002 l.901-912)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_list_field, parse_object_field
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.names import component_label_value, is_dns1123_subdomain
from farm.core.policy import Policy, check_storage_maximum
from farm.core.quantity import QuantityError, canonical_quantity, parse_quantity
from farm.core.registry import ComponentType

ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
VOLUME_MODES = ("Filesystem", "Block")
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
CLAIM_KEYS = frozenset(
    {
        "size",
        "storageClassName",
        "accessModes",
        "volumeMode",
        "selector",
        "dataSourceRef",
        "volumeName",
        "volumeAttributesClassName",
    }
)
# The environment policy's storage default has no field of its own on Policy yet.
POLICY_STORAGE_DEFAULT = "default_storage"


@dataclass
class Claim:
    size: str | None = None
    storage_class: str | None = None  # "" is an explicit request for no class
    access_modes: list[str] = field(default_factory=lambda: ["ReadWriteOnce"])
    volume_mode: str | None = None
    selector: dict[str, Any] | None = None
    data_source_ref: dict[str, Any] | None = None
    volume_name: str | None = None
    volume_attributes_class: str | None = None


def _optional_string(props: dict[str, Any], key: str) -> str | None:
    value = props.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise FieldError(f"{key}: must be a string, got {go_type_name(value)}")
    return value


def _size(props: dict[str, Any]) -> str | None:
    value = props.get("size")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise FieldError(f"size: must be a string, got {go_type_name(value)}")
    try:
        amount = parse_quantity(value)
    except QuantityError as exc:
        raise FieldError(f'size: "{value}" is not a valid quantity: {exc}') from None
    if amount <= 0:
        raise FieldError(f'size: must be a positive quantity, got "{value}"')
    return canonical_quantity(value)


def _access_modes(props: dict[str, Any]) -> list[str]:
    modes, present = parse_list_field(props, "accessModes")
    if not present:
        return ["ReadWriteOnce"]
    if not modes:
        raise FieldError("accessModes: at least one access mode is required")
    for index, mode in enumerate(modes):
        if mode not in ACCESS_MODES:
            raise FieldError(f"accessModes[{index}]: must be one of {', '.join(ACCESS_MODES)}, got {mode!r}")
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        raise FieldError("accessModes: ReadWriteOncePod may not be combined with another access mode")
    return list(modes)


def _selector(props: dict[str, Any]) -> dict[str, Any] | None:
    selector, present = parse_object_field(props, "selector")
    if not present:
        return None
    unknown = sorted(set(selector) - {"matchLabels", "matchExpressions"})
    if unknown:
        raise FieldError(f"selector.{unknown[0]}: unknown property (allowed: matchExpressions, matchLabels)")
    labels, _ = parse_object_field(selector, "matchLabels", "selector.matchLabels")
    expressions, _ = parse_list_field(selector, "matchExpressions", "selector.matchExpressions")
    if not labels and not expressions:
        raise FieldError(
            "selector: an empty selector matches every volume; set matchLabels or matchExpressions"
        )
    out: dict[str, Any] = {}
    if labels:
        out["matchLabels"] = {str(k): str(v) for k, v in labels.items()}
    if expressions:
        out["matchExpressions"] = [
            _expression(e, f"selector.matchExpressions[{i}]") for i, e in enumerate(expressions)
        ]
    return out


def _expression(entry: Any, where: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise FieldError(f"{where}: must be an object, got {go_type_name(entry)}")
    key, operator = entry.get("key"), entry.get("operator")
    values = entry.get("values") or []
    if not key:
        raise FieldError(f"{where}.key is required")
    if operator not in SELECTOR_OPERATORS:
        raise FieldError(
            f"{where}.operator: must be one of {', '.join(SELECTOR_OPERATORS)}, got {operator!r}"
        )
    if operator in ("In", "NotIn") and not values:
        raise FieldError(f"{where}.values: must be non-empty when operator is {operator}")
    if operator in ("Exists", "DoesNotExist") and values:
        raise FieldError(f"{where}.values: must be empty when operator is {operator}")
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = [str(v) for v in values]
    return out


def _data_source_ref(props: dict[str, Any]) -> dict[str, Any] | None:
    ref, present = parse_object_field(props, "dataSourceRef")
    if not present:
        return None
    unknown = sorted(set(ref) - {"apiGroup", "kind", "name", "namespace"})
    if unknown:
        raise FieldError(
            f"dataSourceRef.{unknown[0]}: unknown property (allowed: apiGroup, kind, name, namespace)"
        )
    out = {k: ref[k] for k in ("apiGroup", "kind", "name", "namespace") if ref.get(k)}
    for required in ("kind", "name"):
        if required not in out:
            raise FieldError(f"dataSourceRef.{required}: Required value")
    if "apiGroup" not in out and out["kind"] != "PersistentVolumeClaim":
        raise FieldError(
            "dataSourceRef.kind: Invalid value: must be 'PersistentVolumeClaim' when referencing the default apiGroup"
        )
    return out


def _dns_subdomain(props: dict[str, Any], key: str) -> str | None:
    value = _optional_string(props, key)
    if value is not None and not is_dns1123_subdomain(value):
        raise FieldError(f'{key}: "{value}" is not a valid DNS-1123 subdomain')
    return value


def parse_claim_properties(props: dict[str, Any]) -> Claim:
    """Read the claim keys shared by the persistentvolumeclaim kind and the pvc trait."""
    if props.get("dataSource") is not None:
        raise FieldError("dataSource: not supported: use dataSourceRef, which the API server mirrors into it")
    claim = Claim(size=_size(props), access_modes=_access_modes(props))
    storage_class = _optional_string(props, "storageClassName")
    if storage_class:
        _dns_subdomain(props, "storageClassName")
    claim.storage_class = storage_class
    volume_mode = _optional_string(props, "volumeMode")
    if volume_mode is not None and volume_mode not in VOLUME_MODES:
        raise FieldError(f'volumeMode: must be one of {", ".join(VOLUME_MODES)}, got "{volume_mode}"')
    claim.volume_mode = volume_mode
    claim.selector = _selector(props)
    claim.data_source_ref = _data_source_ref(props)
    claim.volume_name = _dns_subdomain(props, "volumeName")
    claim.volume_attributes_class = _dns_subdomain(props, "volumeAttributesClassName")
    return claim


def apply_claim_policy(claim: Claim, policy: Policy, default_class: str | None) -> None:
    """Fill the storage class from the pvc capability and the size from the policy default, then
    hold the size to the policy maximum."""
    if claim.storage_class is None and default_class:
        claim.storage_class = default_class
    if claim.size is None:
        default = policy.extra.get(POLICY_STORAGE_DEFAULT)
        if not default:
            raise FieldError(
                "size: required (no size is authored and the environment policy sets no storage default)"
            )
        claim.size = canonical_quantity(default)
    check_storage_maximum(policy, claim.size, "size")


def generate_claim(claim: Claim, name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": list(claim.access_modes),
        "resources": {"requests": {"storage": claim.size}},
    }
    if claim.storage_class is not None:
        spec["storageClassName"] = claim.storage_class
    optional = {
        "volumeMode": claim.volume_mode,
        "selector": claim.selector,
        "dataSourceRef": claim.data_source_ref,
        "volumeName": claim.volume_name,
        "volumeAttributesClassName": claim.volume_attributes_class,
    }
    spec.update({k: v for k, v in optional.items() if v is not None})
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"labels": dict(labels), "name": name, "namespace": namespace},
        "spec": spec,
    }


def check_claim_keys(props: dict[str, Any], extra: frozenset[str] = frozenset()) -> None:
    allowed = CLAIM_KEYS | extra
    for key in sorted(props):
        if key not in allowed and props[key] is not None and key != "dataSource":
            raise FieldError(f"{key}: unknown property (allowed: {', '.join(sorted(allowed))})")


def pvc_capability_class(ctx: BuildContext) -> str | None:
    rendering = ctx.capabilities.get("pvc") or {}
    value = rendering.get("storageClassName")
    return value if isinstance(value, str) and value else None


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = component.properties
    check_claim_keys(props)
    claim = parse_claim_properties(props)
    apply_claim_policy(claim, ctx.policy, pvc_capability_class(ctx))
    labels = {"app": component_label_value(component.name)}
    obj = generate_claim(claim, component.name, ctx.namespace, labels)
    return Generated(objects=[obj], facts={"claim_access_modes": {component.name: list(claim.access_modes)}})


HANDLER = ComponentType(
    name="persistentvolumeclaim",
    build=build,
    emits=("v1 PersistentVolumeClaim",),
    status="kind",
)
