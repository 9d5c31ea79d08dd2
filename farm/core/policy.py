"""The environment policy: defaults, limits and security gates applied to what components build.

The transform's default policy is :data:`DEFAULT_POLICY`, the reference's NoopPolicy: it fills no
defaults and sets no maxima, and allows no privileged container, no hostPath volume, no host
namespace and no added capability outside the allowed list (the list is empty, so any ``add``
that is not dropped is checked only when a list is configured). Every refusal carries a stable
class; consumers read :attr:`PolicyRefusal.refusal_class`, not the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from farm.core.errors import PolicyRefusal
from farm.core.quantity import parse_quantity

REFUSAL_PRIVILEGED = "privileged"
REFUSAL_HOST_PATH = "host-path"
REFUSAL_HOST_NAMESPACE = "host-namespace"
REFUSAL_CONTAINER_CAPABILITY = "container-capability"
REFUSAL_REGISTRY = "registry"
REFUSAL_RESOURCE_MAXIMUM = "resource-maximum"
REFUSAL_STORAGE_MAXIMUM = "storage-maximum"
REFUSAL_REPLICA_MAXIMUM = "replica-maximum"
REFUSAL_EXPLICIT_SECRET = "explicit-secret"
REFUSAL_UNREADABLE_OBJECT = "unreadable-object"
REFUSAL_OBJECT_KIND = "object-kind"

REFUSAL_CLASSES = (
    REFUSAL_PRIVILEGED,
    REFUSAL_HOST_PATH,
    REFUSAL_HOST_NAMESPACE,
    REFUSAL_CONTAINER_CAPABILITY,
    REFUSAL_REGISTRY,
    REFUSAL_RESOURCE_MAXIMUM,
    REFUSAL_STORAGE_MAXIMUM,
    REFUSAL_REPLICA_MAXIMUM,
    REFUSAL_EXPLICIT_SECRET,
    REFUSAL_UNREADABLE_OBJECT,
    REFUSAL_OBJECT_KIND,
)


@dataclass(frozen=True)
class Policy:
    """What an environment allows. Empty strings and None mean "no default" / "no maximum"."""

    max_replicas: int | None = None
    default_replicas: int | None = None
    max_cpu: str | None = None
    max_memory: str | None = None
    max_storage: str | None = None
    default_storage: str | None = None  # the policy default storage size (postgresql, cnpg-cluster)
    default_cpu_request: str | None = None
    default_memory_request: str | None = None
    default_cpu_limit: str | None = None
    default_memory_limit: str | None = None
    allowed_registries: tuple[str, ...] = ()
    allow_privileged: bool = False
    allow_host_network: bool = False
    allow_host_pid: bool = False
    allow_host_ipc: bool = False
    allow_host_path_volumes: bool = False
    allowed_capabilities: tuple[str, ...] = ()
    forbidden_kinds: tuple[str, ...] = ()
    forbidden_groups: tuple[str, ...] = ()
    forbid_cluster_scoped: bool = False
    explicit_secrets_allowed: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


DEFAULT_POLICY = Policy()


def _go_list(values: tuple[str, ...]) -> str:
    """A string list the way Go's %v prints it: ``[a b]``."""
    return "[" + " ".join(values) + "]"


def refuse(message: str, refusal_class: str) -> PolicyRefusal:
    return PolicyRefusal(message, refusal_class)


def check_privileged(policy: Policy, security_context: dict[str, Any] | None, where: str) -> None:
    if security_context and security_context.get("privileged") is True and not policy.allow_privileged:
        raise refuse(
            f"{where}: securityContext.privileged: privileged containers are not allowed by the environment policy",
            REFUSAL_PRIVILEGED,
        )


def check_host_path(policy: Policy, volume: dict[str, Any], where: str) -> None:
    if "hostPath" in volume and not policy.allow_host_path_volumes:
        name = volume.get("name", "")
        raise refuse(
            f'{where}: volume "{name}": hostPath volumes are not allowed by the environment policy',
            REFUSAL_HOST_PATH,
        )


def check_host_namespaces(policy: Policy, pod_spec: dict[str, Any], where: str) -> None:
    gates = (
        ("hostNetwork", policy.allow_host_network),
        ("hostPID", policy.allow_host_pid),
        ("hostIPC", policy.allow_host_ipc),
    )
    for key, allowed in gates:
        if pod_spec.get(key) is True and not allowed:
            raise refuse(
                f"{where}: {key}: the host namespace is not allowed by the environment policy",
                REFUSAL_HOST_NAMESPACE,
            )


def check_capabilities(policy: Policy, security_context: dict[str, Any] | None, where: str) -> None:
    if not security_context or not policy.allowed_capabilities:
        return
    added = (security_context.get("capabilities") or {}).get("add") or []
    for capability in added:
        if capability not in policy.allowed_capabilities:
            raise refuse(
                f'{where}: securityContext.capabilities.add: capability "{capability}" is not allowed '
                f"by the environment policy {_go_list(policy.allowed_capabilities)}",
                REFUSAL_CONTAINER_CAPABILITY,
            )


def check_registry(policy: Policy, image: str, where: str) -> None:
    if not policy.allowed_registries:
        return
    if not any(image.startswith(prefix.rstrip("/") + "/") for prefix in policy.allowed_registries):
        raise refuse(
            f'{where}: image "{image}" is not from an allowed registry {_go_list(policy.allowed_registries)}',
            REFUSAL_REGISTRY,
        )


def check_replicas(policy: Policy, replicas: int, where: str) -> None:
    if policy.max_replicas is not None and replicas > policy.max_replicas:
        raise refuse(
            f"{where}: replicas {replicas} exceeds enforced maximum {policy.max_replicas}",
            REFUSAL_REPLICA_MAXIMUM,
        )


def check_resource_maximum(policy: Policy, resource: str, value: str, where: str) -> None:
    maximum = {"cpu": policy.max_cpu, "memory": policy.max_memory}.get(resource)
    if maximum and parse_quantity(value) > parse_quantity(maximum):
        raise refuse(
            f"{where}: {resource} {value} exceeds enforced maximum {maximum}", REFUSAL_RESOURCE_MAXIMUM
        )


def check_storage_maximum(policy: Policy, value: str, where: str) -> None:
    if policy.max_storage and parse_quantity(value) > parse_quantity(policy.max_storage):
        raise refuse(
            f"{where}: storage {value} exceeds enforced maximum {policy.max_storage}", REFUSAL_STORAGE_MAXIMUM
        )


def check_container(policy: Policy, container: dict[str, Any], where: str) -> None:
    """The per-container gates every workload path runs: privileged, capabilities, registry."""
    security_context = container.get("securityContext")
    check_privileged(policy, security_context, where)
    check_capabilities(policy, security_context, where)
    image = container.get("image")
    if isinstance(image, str):
        check_registry(policy, image, where)


def check_pod_spec(policy: Policy, pod_spec: dict[str, Any], where: str) -> None:
    """The pod-template check: host namespaces, hostPath volumes, and every container."""
    check_host_namespaces(policy, pod_spec, where)
    for volume in pod_spec.get("volumes") or []:
        check_host_path(policy, volume, where)
    for list_key in ("initContainers", "containers"):
        for index, container in enumerate(pod_spec.get(list_key) or []):
            check_container(policy, container, f'{where}: {list_key}[{index}] "{container.get("name", "")}"')


def check_object_kind(policy: Policy, obj: dict[str, Any], where: str) -> None:
    """The object kind rules: a forbidden group, a forbidden kind, or a cluster-scoped object when
    the policy forbids those. They gate every emitted object, whatever path built it."""
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.rpartition("/")[0]
    kind = str(obj.get("kind") or "")
    metadata = obj.get("metadata") or {}
    described = f'{kind} "{metadata.get("name", "")}"'
    if group in policy.forbidden_groups or (group == "" and "core" in policy.forbidden_groups):
        raise refuse(
            f'{where}: {described}: API group "{group or "core"}" is forbidden by the environment policy',
            REFUSAL_OBJECT_KIND,
        )
    if kind in policy.forbidden_kinds:
        raise refuse(
            f"{where}: {described}: kind {kind} is forbidden by the environment policy", REFUSAL_OBJECT_KIND
        )
    if policy.forbid_cluster_scoped and not metadata.get("namespace"):
        raise refuse(
            f"{where}: {described}: cluster-scoped objects are forbidden by the environment policy",
            REFUSAL_OBJECT_KIND,
        )
