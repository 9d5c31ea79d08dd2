"""The CloudNativePG Cluster's policy and generation rules, shared by the cnpg-cluster kind and the
postgresql rule (which lowers onto it): instance count, resources, storage, security contexts,
images. They work on the Cluster spec as a Go-shaped dict."""

from __future__ import annotations

from typing import Any

from farm.core.components.cnpg_common import (
    CLUSTER_NAME_MAX,
    apply_resource_policy,
    check_cluster_name,
    check_image_registry,
    check_image_tag,
    check_positive_storage,
    check_resource_consistency,
    check_storage_maximum,
    refuse_operator_chosen_image,
)
from farm.core.errors import FieldError
from farm.core.fields import INT32_MAX
from farm.core.policy import (
    REFUSAL_PRIVILEGED,
    REFUSAL_REPLICA_MAXIMUM,
    Policy,
    check_capabilities,
    refuse,
)

__all__ = ["CLUSTER_NAME_MAX", "apply_cluster_policy", "check_generated_cluster", "with_written_defaults"]


def with_written_defaults(spec: dict[str, Any]) -> dict[str, Any]:
    """The non-pointer blocks Go writes even when unauthored, and the instance count the kind
    always writes."""
    spec.setdefault("affinity", {})
    spec.setdefault("resources", {})
    postgresql = spec.setdefault("postgresql", {})
    constraint = postgresql.setdefault("syncReplicaElectionConstraint", {})
    constraint.setdefault("enabled", False)
    spec.setdefault("instances", 1)
    return spec


def _storage_request(storage: dict[str, Any] | None) -> tuple[str, Any] | None:
    """The size a storage block requests and the path naming it, if any."""
    if not storage:
        return None
    if storage.get("size") not in (None, ""):
        return "size", storage["size"]
    template = storage.get("pvcTemplate") or {}
    request = ((template.get("resources") or {}).get("requests") or {}).get("storage")
    if request is not None:
        return "pvcTemplate.resources.requests.storage", request
    return None


def _claims(spec: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every storage request the Cluster creates a claim for, with its path."""
    claims = []
    for key in ("storage", "walStorage"):
        found = _storage_request(spec.get(key))
        if found:
            claims.append((f"{key}.{found[0]}", found[1]))
    for index, tablespace in enumerate(spec.get("tablespaces") or []):
        found = _storage_request((tablespace or {}).get("storage"))
        if found:
            claims.append((f"tablespaces[{index}].storage.{found[0]}", found[1]))
    template = (spec.get("ephemeralVolumeSource") or {}).get("volumeClaimTemplate") or {}
    request = (((template.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    if request is not None:
        claims.append(("ephemeralVolumeSource.volumeClaimTemplate.spec.resources.requests.storage", request))
    return claims


def apply_cluster_policy(
    spec: dict[str, Any], policy: Policy, *, instances_authored: bool, storage_authored: bool
) -> None:
    """ApplyPolicy of the Cluster kind, in its order (in place)."""
    if not instances_authored:
        if policy.default_replicas is not None:
            if policy.default_replicas < 1:
                raise FieldError(
                    f"instances: must be >= 1, got {policy.default_replicas} from the policy default"
                )
            spec["instances"] = policy.default_replicas
        else:
            spec["instances"] = 1
    instances = spec.get("instances", 1)
    if policy.max_replicas is not None and instances > policy.max_replicas:
        raise refuse(
            f"instances {instances} exceeds enforced maximum {policy.max_replicas}", REFUSAL_REPLICA_MAXIMUM
        )
    apply_resource_policy(spec.setdefault("resources", {}), policy, "resources")
    if not storage_authored and policy.default_storage:
        check_positive_storage(policy.default_storage, "policy default for storage.size")
        spec.setdefault("storage", {})["size"] = policy.default_storage
    for path, value in _claims(spec):
        check_positive_storage(value, path)
        check_storage_maximum(policy, str(value), path)
    _check_security_contexts(spec, policy)
    _check_images(spec, policy)


def _check_security_contexts(spec: dict[str, Any], policy: Policy) -> None:
    security = spec.get("securityContext") or {}
    if not policy.allow_privileged:
        if security.get("privileged") is True:
            raise refuse(
                "securityContext.privileged: privileged containers are not allowed by the environment policy",
                REFUSAL_PRIVILEGED,
            )
        for key in ("securityContext", "podSecurityContext"):
            windows = (spec.get(key) or {}).get("windowsOptions") or {}
            if windows.get("hostProcess") is True:
                raise refuse(
                    f"{key}.windowsOptions.hostProcess: host-process containers are not allowed by the "
                    "environment policy",
                    REFUSAL_PRIVILEGED,
                )
    check_capabilities(policy, security, "securityContext")


def _check_images(spec: dict[str, Any], policy: Policy) -> None:
    image = spec.get("imageName")
    if image:
        check_image_registry(policy, image, "imageName")
    elif not spec.get("imageCatalogRef"):
        refuse_operator_chosen_image(policy, "imageName")
    for index, extension in enumerate((spec.get("postgresql") or {}).get("extensions") or []):
        reference = ((extension or {}).get("image") or {}).get("reference")
        if reference:
            check_image_registry(policy, reference, f"postgresql.extensions[{index}].image.reference")


def check_cluster_images(spec: dict[str, Any]) -> None:
    """The tag rule on imageName and every extension image (at read and at generation)."""
    if spec.get("imageName"):
        check_image_tag(spec["imageName"], "imageName")
    for index, extension in enumerate((spec.get("postgresql") or {}).get("extensions") or []):
        reference = ((extension or {}).get("image") or {}).get("reference")
        if reference:
            check_image_tag(reference, f"postgresql.extensions[{index}].image.reference")


def check_instances(instances: Any) -> None:
    if instances < 1:
        raise FieldError(f"instances: must be >= 1, got {instances}")
    if instances > INT32_MAX:
        raise FieldError(f"instances: must be <= {INT32_MAX}, got {instances}")


def check_generated_cluster(name: str, spec: dict[str, Any], what: str = "cnpg-cluster name") -> None:
    """Generate's checks on the Cluster it emits."""
    check_cluster_name(name, what)
    check_instances(spec.get("instances", 1))
    for path, value in _claims(spec):
        check_positive_storage(value, path)
    check_cluster_images(spec)
    check_resource_consistency(spec.get("resources") or {}, "resources")
