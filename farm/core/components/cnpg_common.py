"""What the CloudNativePG kinds and the postgresql rule share: API versions, the Cluster's name
rule, the image tag rule and registry allowlist on CNPG images, and the checks on a resources
block (policy defaults and maxima, request <= limit, hugepages need cpu or memory)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import go_type_name
from farm.core.policy import (
    REFUSAL_REGISTRY,
    REFUSAL_RESOURCE_MAXIMUM,
    REFUSAL_STORAGE_MAXIMUM,
    Policy,
    refuse,
)
from farm.core.quantity import QuantityError, canonical_quantity, parse_quantity

CNPG_API = "postgresql.cnpg.io/v1"
BARMAN_API = "barmancloud.cnpg.io/v1"
BARMAN_PLUGIN = "barman-cloud.cloudnative-pg.io"
CLUSTER_NAME_MAX = 50
REQUIRED_BY_CNPG = "required (the CloudNativePG API requires this field)"

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN = (
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?)"
)
_REFERENCE = re.compile(
    rf"^(?:(?P<domain>{_DOMAIN})/)?(?P<path>{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?\Z",
    re.ASCII,
)
_USE_EXPLICIT = "use an explicit version tag or digest"


def is_dns1035_label(name: str, max_length: int = 63) -> bool:
    return len(name) <= max_length and bool(_DNS1035.match(name))


def dns1035_rule(max_length: int) -> str:
    return (
        f"must be a DNS-1035 label of at most {max_length} characters "
        "(lowercase letters, digits and '-', starting with a letter and ending with a letter or digit)"
    )


def check_cluster_name(name: str, what: str) -> None:
    """The name CloudNativePG's webhook admits for a Cluster: a DNS-1035 label of at most 50."""
    if not is_dns1035_label(name, CLUSTER_NAME_MAX):
        raise FieldError(f'{what} "{name}": {dns1035_rule(CLUSTER_NAME_MAX)}')


def image_tag_problem(image: str) -> str | None:
    """Why the tag rule refuses an image reference, or None when it passes."""
    match = _REFERENCE.match(image)
    if not match:
        return f"invalid image reference; {_USE_EXPLICIT}"
    tag, digest = match.group("tag"), match.group("digest")
    if tag == "latest":
        return f":latest tag not allowed; {_USE_EXPLICIT}"
    if not tag and not digest:
        return f"no tag or digest specified; {_USE_EXPLICIT}"
    return None


def check_image_tag(image: str, path: str) -> None:
    problem = image_tag_problem(image)
    if problem:
        raise FieldError(f'{path}: image "{image}" rejected: {problem}')


def image_registry(image: str) -> str:
    """The registry host of an image reference; a name with no registry is docker.io's."""
    first, slash, _ = image.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def registries_text(policy: Policy) -> str:
    return "[" + " ".join(policy.allowed_registries) + "]"


def check_image_registry(policy: Policy, image: str, path: str) -> None:
    if policy.allowed_registries and image_registry(image) not in policy.allowed_registries:
        raise refuse(
            f'{path}: image "{image}" is not from an allowed registry {registries_text(policy)}',
            REFUSAL_REGISTRY,
        )


def refuse_operator_chosen_image(policy: Policy, path: str) -> None:
    """Under a non-empty allowlist, an image the operator chooses cannot be held: refused."""
    if policy.allowed_registries:
        raise refuse(
            f"{path}: unset, so the CloudNativePG operator chooses the image the pods run, which the "
            f"allowed registries {registries_text(policy)} cannot hold; name an image from one of them",
            REFUSAL_REGISTRY,
        )


def rfc3339_time(value: Any, path: str) -> str:
    """metav1.Time: RFC 3339 in, UTC with second precision out (Go's MarshalJSON)."""
    if not isinstance(value, str):
        raise FieldError(f"{path}: must be a string, got {go_type_name(value)}")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None or "T" not in value.upper():
        raise FieldError(f'{path}: "{value}" is not an RFC 3339 time')
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- resources -------------------------------------------------------------------------------


def parse_resources(value: Any, path: str) -> dict[str, Any]:
    """A corev1.ResourceRequirements block (requests/limits, quantities canonicalised)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FieldError(f"{path}: must be an object, got {go_type_name(value)}")
    result: dict[str, Any] = {}
    for key in sorted(value):
        entry = value[key]
        if entry is None:
            continue
        if key not in ("requests", "limits", "claims"):
            raise FieldError(f'{path}: unrecognized key "{key}"')
        if key == "claims":
            result[key] = entry
            continue
        if not isinstance(entry, dict):
            raise FieldError(f"{path}.{key}: must be an object, got {go_type_name(entry)}")
        quantities = {}
        for name in sorted(entry):
            amount = entry[name]
            if amount is None:
                continue
            quantities[name] = _quantity(amount, f"{path}.{key}.{name}")
        if quantities:
            result[key] = quantities
    return result


def _quantity(value: Any, path: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise FieldError(f"{path}: must be a quantity string or number, got {go_type_name(value)}")
    try:
        return canonical_quantity(value)
    except QuantityError:
        raise FieldError(f'{path}: invalid quantity "{value}"') from None


def apply_resource_policy(resources: dict[str, Any], policy: Policy, path: str) -> None:
    """Fill unset cpu/memory requests and limits from the policy defaults, then hold them to the
    policy maxima (in place)."""
    defaults = {
        ("requests", "cpu"): policy.default_cpu_request,
        ("requests", "memory"): policy.default_memory_request,
        ("limits", "cpu"): policy.default_cpu_limit,
        ("limits", "memory"): policy.default_memory_limit,
    }
    for (side, name), default in defaults.items():
        if default and name not in (resources.get(side) or {}):
            resources.setdefault(side, {})[name] = _quantity(default, f"policy default for {side}.{name}")
    check_resource_maxima(resources, policy, path)


def check_resource_maxima(resources: dict[str, Any], policy: Policy, path: str) -> None:
    for side, word in (("requests", "request"), ("limits", "limit")):
        for name, maximum in (("cpu", policy.max_cpu), ("memory", policy.max_memory)):
            value = (resources.get(side) or {}).get(name)
            if maximum and value is not None and parse_quantity(value) > parse_quantity(maximum):
                raise refuse(
                    f'{path}: {name} {word} "{value}" exceeds enforced maximum "{maximum}"',
                    REFUSAL_RESOURCE_MAXIMUM,
                )


def _zero_if_null(value: Any) -> Any:
    return 0 if value is None else value


def check_resource_consistency(resources: dict[str, Any], path: str) -> None:
    """Generation's checks: a request may not exceed its limit; hugepages need cpu or memory."""
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    for name in sorted(requests):
        if name not in limits:
            continue
        # a null in a ResourceList decodes as the zero Quantity, which prints as 0
        request, limit = _zero_if_null(requests[name]), _zero_if_null(limits[name])
        if parse_quantity(request) > parse_quantity(limit):
            raise FieldError(f"{path}: {name}: request {request} must not exceed limit {limit}")
    names = set(requests) | set(limits)
    if any(n.startswith("hugepages-") for n in names) and not names & {"cpu", "memory"}:
        raise FieldError(f"{path}: hugepages require cpu or memory in requests or limits")


# --- storage ---------------------------------------------------------------------------------


def check_positive_storage(value: Any, path: str) -> None:
    try:
        amount = parse_quantity(value)
    except (QuantityError, TypeError):
        raise FieldError(f'{path}: invalid quantity "{value}"') from None
    if amount <= 0:
        raise FieldError(f'{path}: quantity must be positive, got "{value}"')


def check_storage_maximum(policy: Policy, value: str, message_path: str) -> None:
    if policy.max_storage and parse_quantity(value) > parse_quantity(policy.max_storage):
        raise refuse(
            f'{message_path} "{value}" exceeds enforced maximum "{policy.max_storage}"',
            REFUSAL_STORAGE_MAXIMUM,
        )


def cnpg_object(
    kind: str, name: str, namespace: str | None, spec: dict[str, Any], api: str = CNPG_API
) -> dict:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": metadata, "spec": spec}
