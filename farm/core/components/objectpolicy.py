"""The object check the raw-object components share (seed 002, passthrough "Policy", manifests
"Policy"): scope of a kind, and the environment policy held over foreign objects.

Scope: the kinds the Kubernetes API governs (built-ins, CustomResourceDefinition) have a fixed
scope; a few custom resources the reference registers are cluster-scoped; anything else is unknown
here (passthrough treats it as namespaced, manifests fails closed).

Policy: a Pod, PodTemplate, ReplicationController, Deployment, StatefulSet, DaemonSet, ReplicaSet,
Job or CronJob is checked as an authored workload is (host namespaces, hostPath volumes, every init
and regular container's privileged/capability gates, registry allowlist, image tag rule and cpu/
memory maxima; ephemeral containers refused); a claim and a StatefulSet's claim templates are held
to the storage maximum, replica counts and an HPA's maxReplicas to the replica maximum, a
PersistentVolume to the hostPath/local gate and the storage maximum; a core Secret is refused
under a policy that forbids explicit secrets. A workload in an API version this build does not read
is refused as unreadable.
"""

from __future__ import annotations

from typing import Any

from farm.core import policy as checks
from farm.core.components.objectread import read_error
from farm.core.errors import PolicyRefusal, TransformError
from farm.core.fields import go_type_name
from farm.core.model import pod_template_of
from farm.core.policy import (
    REFUSAL_EXPLICIT_SECRET,
    REFUSAL_HOST_PATH,
    REFUSAL_UNREADABLE_OBJECT,
    Policy,
)
from farm.core.quantity import QuantityError

# group -> kinds the Kubernetes API defines as cluster-scoped
_BUILTIN_CLUSTER = {
    "": {"Namespace", "Node", "PersistentVolume", "ComponentStatus"},
    "rbac.authorization.k8s.io": {"ClusterRole", "ClusterRoleBinding"},
    "storage.k8s.io": {"StorageClass", "CSIDriver", "CSINode", "VolumeAttachment", "VolumeAttributesClass"},
    "scheduling.k8s.io": {"PriorityClass"},
    "node.k8s.io": {"RuntimeClass"},
    "networking.k8s.io": {"IngressClass", "ServiceCIDR", "IPAddress"},
    "apiextensions.k8s.io": {"CustomResourceDefinition"},
    "apiregistration.k8s.io": {"APIService"},
    "admissionregistration.k8s.io": {
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    },
    "certificates.k8s.io": {"CertificateSigningRequest", "ClusterTrustBundle"},
    "flowcontrol.apiserver.k8s.io": {"FlowSchema", "PriorityLevelConfiguration"},
    "resource.k8s.io": {"DeviceClass"},
}
# built-in groups: every kind in them is API-governed (namespaced unless listed above)
_BUILTIN_GROUPS = frozenset(
    {
        *_BUILTIN_CLUSTER,
        "apps",
        "batch",
        "autoscaling",
        "policy",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
    }
)
# custom resources the reference registers as cluster-scoped (group, kind)
_REGISTERED_CLUSTER = frozenset(
    {
        ("cert-manager.io", "ClusterIssuer"),
        ("external-secrets.io", "ClusterSecretStore"),
        ("external-secrets.io", "ClusterExternalSecret"),
        ("cilium.io", "CiliumClusterwideNetworkPolicy"),
        ("cilium.io", "CiliumLoadBalancerIPPool"),
        ("cilium.io", "CiliumBGPClusterConfig"),
        ("cilium.io", "CiliumBGPPeerConfig"),
        ("cilium.io", "CiliumBGPAdvertisement"),
        ("cilium.io", "CiliumBGPNodeConfigOverride"),
        ("cilium.io", "CiliumCIDRGroup"),
        ("postgresql.cnpg.io", "ClusterImageCatalog"),
        ("gateway.networking.k8s.io", "GatewayClass"),
    }
)
_REGISTERED_GROUPS = frozenset(
    {
        "cert-manager.io",
        "external-secrets.io",
        "cilium.io",
        "postgresql.cnpg.io",
        "barmancloud.cnpg.io",
        "gateway.networking.k8s.io",
        "metallb.io",
        "monitoring.coreos.com",
        "source.toolkit.fluxcd.io",
        "helm.toolkit.fluxcd.io",
        "kustomize.toolkit.fluxcd.io",
        "notification.toolkit.fluxcd.io",
        "image.toolkit.fluxcd.io",
        "volsync.backube",
    }
)
# the API version each workload/claim kind is read in
_READABLE_VERSIONS = {
    "Pod": "v1",
    "PodTemplate": "v1",
    "ReplicationController": "v1",
    "PersistentVolumeClaim": "v1",
    "PersistentVolume": "v1",
    "Deployment": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "ReplicaSet": "apps/v1",
    "Job": "batch/v1",
    "CronJob": "batch/v1",
}
_WORKLOADS = frozenset(
    k for k in _READABLE_VERSIONS if k not in ("PersistentVolumeClaim", "PersistentVolume")
)
_REPLICATED = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"})
_CORE_GROUPS_OF = {"Pod", "PodTemplate", "ReplicationController", "PersistentVolumeClaim", "PersistentVolume"}


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def is_api_governed(api_version: str, kind: str) -> bool:
    return group_of(api_version) in _BUILTIN_GROUPS


def table_scope(api_version: str, kind: str) -> bool | None:
    """True (cluster-scoped), False (namespaced) or None (not known to the scope table)."""
    group = group_of(api_version)
    if group in _BUILTIN_GROUPS:
        return kind in _BUILTIN_CLUSTER.get(group, set())
    if (group, kind) in _REGISTERED_CLUSTER:
        return True
    if group in _REGISTERED_GROUPS:
        return False
    return None


def describe(obj: dict[str, Any]) -> str:
    """``Deployment "demo/web"`` (namespace/name, or the name alone)."""
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = metadata.get("name") if isinstance(metadata.get("name"), str) else ""
    namespace = metadata.get("namespace") if isinstance(metadata.get("namespace"), str) else ""
    return f'{obj.get("kind")} "{namespace}/{name}"' if namespace else f'{obj.get("kind")} "{name}"'


def check_image(image: Any, where: str) -> None:
    """ValidateImageRef: no untagged image, no ``:latest`` (a digest without a tag passes)."""
    if not isinstance(image, str) or not image:
        return
    reference = image.split("@", 1)[0]
    last = reference.rsplit("/", 1)[-1]
    if "@" in image and ":" not in last:
        return
    if ":" not in last:
        reason = "no tag or digest specified"
    elif last.rsplit(":", 1)[1] == "latest":
        reason = ":latest tag not allowed"
    else:
        return
    raise TransformError(
        f'{where}: image "{image}" rejected: {reason}; use an explicit version tag or digest'
    )


def _unreadable(where: str, cause: str) -> PolicyRefusal:
    """``where`` is ``<prefix>: <noun> <object>`` (``helmtemplate: rendered Deployment "ns/web"``)."""
    return PolicyRefusal(
        f"{where}: the object cannot be read, so the environment policy cannot be checked: {cause}",
        REFUSAL_UNREADABLE_OBJECT,
    )


def _check_container(policy: Policy, container: Any, where: str) -> None:
    if not isinstance(container, dict):
        return
    checks.check_container(policy, container, where)
    check_image(container.get("image"), where)
    resources = container.get("resources") if isinstance(container.get("resources"), dict) else {}
    for block in ("limits", "requests"):
        values = resources.get(block) if isinstance(resources.get(block), dict) else {}
        for resource in ("cpu", "memory"):
            if isinstance(values.get(resource), (str, int, float)):
                try:
                    checks.check_resource_maximum(policy, resource, str(values[resource]), where)
                except QuantityError as exc:  # past this farm's bounds on digits and exponents
                    raise _unreadable(where, f"resources.{block}.{resource}: {exc}") from None


def _check_pod_spec(policy: Policy, pod_spec: dict[str, Any], where: str) -> None:
    checks.check_host_namespaces(policy, pod_spec, where)
    for volume in pod_spec.get("volumes") or []:
        if isinstance(volume, dict):
            checks.check_host_path(policy, volume, where)
    if pod_spec.get("ephemeralContainers"):
        raise TransformError(f"{where}.ephemeralContainers: ephemeral containers are refused")
    for list_key in ("initContainers", "containers"):
        for index, container in enumerate(pod_spec.get(list_key) or []):
            name = container.get("name", "") if isinstance(container, dict) else ""
            _check_container(policy, container, f'{where}.{list_key}[{index}] "{name}"')


def _template_path(kind: str) -> str:
    return {
        "CronJob": "spec.jobTemplate.spec.template.spec",
        "PodTemplate": "template.spec",
        "Pod": "spec",
    }.get(kind, "spec.template.spec")


def _check_storage(policy: Policy, claim_spec: Any, where: str) -> None:
    if not isinstance(claim_spec, dict):
        return
    requests = (claim_spec.get("resources") or {}).get("requests") or {}
    storage = requests.get("storage") if isinstance(requests, dict) else None
    if isinstance(storage, (str, int)):
        checks.check_storage_maximum(policy, str(storage), where)


def _check_replicas(policy: Policy, obj: dict[str, Any], where: str) -> None:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    kind = obj.get("kind")
    if kind in _REPLICATED:
        replicas = spec.get("replicas", 1)
        if replicas is None:
            replicas = 1
        if isinstance(replicas, bool) or not isinstance(replicas, int):
            raise _unreadable(where, f"spec.replicas: must be an integer, got {go_type_name(replicas)}")
        checks.check_replicas(policy, replicas, f"{where}: spec.replicas")
    if kind == "HorizontalPodAutoscaler" and group_of(str(obj.get("apiVersion"))) == "autoscaling":
        maximum = spec.get("maxReplicas")
        if isinstance(maximum, bool) or not isinstance(maximum, int):
            raise _unreadable(where, f"spec.maxReplicas: must be an integer, got {go_type_name(maximum)}")
        checks.check_replicas(policy, maximum, f"{where}: spec.maxReplicas")


def _check_persistent_volume(policy: Policy, obj: dict[str, Any], where: str) -> None:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    for source in ("hostPath", "local"):
        if source in spec and not policy.allow_host_path_volumes:
            raise PolicyRefusal(
                f"{where}: spec.{source}: {source} volumes are not allowed by the environment policy",
                REFUSAL_HOST_PATH,
            )
    storage = (spec.get("capacity") or {}).get("storage") if isinstance(spec.get("capacity"), dict) else None
    if isinstance(storage, (str, int)):
        checks.check_storage_maximum(policy, str(storage), f"{where}: spec.capacity.storage")


def check_object(policy: Policy, obj: dict[str, Any], prefix: str, noun: str = "object") -> None:
    """Hold one foreign object to the environment policy; ``prefix`` is ``passthrough``,
    ``manifest source`` or ``helmtemplate`` (whose objects are ``rendered``, the ``noun``)."""
    kind = obj.get("kind")
    api_version = str(obj.get("apiVersion"))
    where = f"{prefix}: {noun} {describe(obj)}"
    if kind == "Secret" and api_version == "v1" and not policy.explicit_secrets_allowed:
        raise PolicyRefusal(
            f"{where}: the object is a Secret, and the environment policy forbids explicit secrets; create it "
            "out of band (an external-secret trait, or a sealed or externally managed Secret)",
            REFUSAL_EXPLICIT_SECRET,
        )
    expected = _READABLE_VERSIONS.get(str(kind))
    in_core_or_group = group_of(api_version) in ("", "apps", "batch", "extensions") or kind in _CORE_GROUPS_OF
    if expected is not None and in_core_or_group and api_version != expected:
        raise _unreadable(
            where, f"{api_version} {kind} is not an API version this build reads (use {expected})"
        )
    if expected is not None and not isinstance(obj.get("spec", {}), dict):
        raise _unreadable(where, f"spec: must be an object, got {go_type_name(obj.get('spec'))}")
    cause = read_error(obj, str(kind)) if expected is not None and api_version == expected else None
    if cause is not None:
        raise _unreadable(where, cause)
    _check_replicas(policy, obj, where)
    if kind in _WORKLOADS and api_version == expected:
        template = pod_template_of(obj)
        pod_spec = template.get("spec") if isinstance(template, dict) else None
        if isinstance(pod_spec, dict):
            _check_pod_spec(policy, pod_spec, f"{where}: {_template_path(str(kind))}")
    if kind == "PersistentVolumeClaim" and api_version == "v1":
        _check_storage(policy, obj.get("spec"), f"{where}: spec.resources.requests.storage")
    if kind == "StatefulSet" and api_version == "apps/v1":
        for index, claim in enumerate((obj.get("spec") or {}).get("volumeClaimTemplates") or []):
            if isinstance(claim, dict):
                _check_storage(policy, claim.get("spec"), f"{where}: spec.volumeClaimTemplates[{index}]")
    if kind == "PersistentVolume" and api_version == "v1":
        _check_persistent_volume(policy, obj, where)
