"""Prometheus operator workload kinds (seed 002, "alertmanager", "thanosruler", "prometheus"): one CR
in the build namespace, decoded strictly into its spec type. Launcher emits no pod or StatefulSet for
it, so the transform's pod check never sees the pods the operator builds: the kind holds the spec's
pod view (containers, init containers, volumes, pod securityContext, storage) to the environment
policy itself, and refuses what the operator or the API would break on the StatefulSet built from it.

The per-kind facts (the containers the operator generates, its ports and volumes, the data volume's
name, the memory request it fills) are a :class:`Workload`; the checks are shared.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from farm.core import gourl
from farm.core.components.containers import is_valid_port_name, validate_image
from farm.core.errors import FieldError
from farm.core.kinds import monitoring_workloads as types
from farm.core.kinds.engine import KindContext, kind_component, required_error
from farm.core.kinds.monitoring import PROMETHEUS_OPERATOR
from farm.core.model import COMPONENT_LABEL, BuildContext, ComponentSpec, Generated
from farm.core.names import is_dns1123_label
from farm.core.policy import (
    REFUSAL_EXPLICIT_SECRET,
    REFUSAL_HOST_NAMESPACE,
    REFUSAL_PRIVILEGED,
    REFUSAL_REGISTRY,
    REFUSAL_REPLICA_MAXIMUM,
    REFUSAL_RESOURCE_MAXIMUM,
    REFUSAL_STORAGE_MAXIMUM,
    Policy,
    check_capabilities,
    check_host_path,
    check_privileged,
    check_registry,
    refuse,
)
from farm.core.quantity import canonical_quantity, parse_quantity
from farm.core.registry import ComponentType

MONITORING_V1 = "monitoring.coreos.com/v1"
OPERATOR_MEMORY_REQUEST = "200Mi"
_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")


@dataclass(frozen=True)
class Workload:
    """What the operator builds for one kind, as the checks need it."""

    kind: str  # ThanosRuler
    main: str  # the container that runs the image of ``image``: thanos-ruler
    containers: tuple[str, ...]  # containers the operator generates (patchable by name)
    init_containers: tuple[str, ...]
    prefix: str  # StatefulSet and volume prefix: thanos-ruler
    data_suffix: str  # the data volume is <prefix>-<name>-<suffix>
    fills_memory: bool  # the operator requests 200Mi of memory where resources names none
    reserved_volumes: Callable[[dict[str, Any]], tuple[tuple[str, bool], ...]]  # (name, every pod)
    reserved_mounts: Callable[[dict[str, Any], str], tuple[str, ...]]
    rulefiles: bool  # the operator adds <prefix>-<name>-rulefiles-<n> volumes
    name_limit: int  # the longest name the operator's objects can be named after
    checks: tuple[Callable[[KindContext, Workload], None], ...] = field(default=())
    # containers the operator generates only for some specs (prometheus: thanos-sidecar where thanos
    # is set): a listed entry of the name is a patch, but the policy names their images otherwise
    sidecars: Callable[[dict[str, Any]], tuple[str, ...]] = field(default=lambda spec: ())
    rules_dir: str = "/etc/thanos/rules"
    # what the operator does with a negative replicas, for the refusal
    negative_replicas: str = "the Prometheus operator copies it into the StatefulSet, which the API refuses"
    name_check: Callable[[KindContext, Workload], None] | None = None
    # the pod count the replica maximum holds, and how the refusal names it
    pod_count: Callable[[dict[str, Any]], tuple[int, str]] | None = None
    policy_checks: tuple[Callable[[KindContext, Workload, Policy], None], ...] = field(default=())


def generated_containers(spec: dict[str, Any], wl: Workload, list_key: str) -> tuple[str, ...]:
    """The containers (or init containers) the operator generates for this spec."""
    if list_key == "initContainers":
        return wl.init_containers
    return (*wl.containers, *wl.sidecars(spec))


# --- reading helpers ------------------------------------------------------------------------------------


def _named(items: list[dict[str, Any]] | None, label: str) -> Iterator[tuple[int, str, dict[str, Any]]]:
    for index, item in enumerate(items or []):
        yield index, f'{label}[{index}] "{item.get("name", "")}"', item


def _name_source(kc: KindContext) -> str:
    return "objectName" if kc.component.properties.get("objectName") else "component name"


def _patch(spec: dict[str, Any], name: str) -> tuple[int, dict[str, Any]] | None:
    for index, container in enumerate(spec.get("containers") or []):
        if container.get("name") == name:
            return index, container
    return None


# --- containers ----------------------------------------------------------------------------------------


def _check_container_lists(spec: dict[str, Any], wl: Workload) -> None:
    """Names listed once per list, unique across the two lists (generated names included), and an
    image on every entry that patches no generated container."""
    listed: dict[str, dict[str, int]] = {"containers": {}, "initContainers": {}}
    generated = {key: generated_containers(spec, wl, key) for key in ("containers", "initContainers")}
    for list_key in ("containers", "initContainers"):
        for index, label, container in _named(spec.get(list_key), list_key):
            name = container.get("name", "")
            if name in listed[list_key]:
                raise FieldError(
                    f"{label}: the name is listed already at {list_key}[{listed[list_key][name]}], and the "
                    "Prometheus operator keeps only the last entry of a name; list it once"
                )
            listed[list_key][name] = index
            if not container.get("image") and name not in generated[list_key]:
                raise FieldError(_no_image(label, list_key, generated[list_key]))
    for list_key, other in (("containers", "initContainers"), ("initContainers", "containers")):
        for _, label, container in _named(spec.get(list_key), list_key):
            name = container.get("name", "")
            if name in generated[other]:
                what = "init container" if other == "initContainers" else "container"
                raise FieldError(
                    f"{label}: the name is also that of the {what} the Prometheus operator generates, and "
                    "the API requires the names of containers and init containers to be unique together; "
                    "name the container otherwise"
                )
            if list_key == "initContainers" and name in listed["containers"]:
                raise FieldError(
                    f"{label}: the name is also that of containers[{listed['containers'][name]}], and the "
                    "API requires the names of containers and init containers to be unique together; "
                    "name the container otherwise"
                )


def _no_image(label: str, list_key: str, generated: tuple[str, ...]) -> str:
    if not generated:
        return (
            f"{label}: names no image, and the Prometheus operator merges no entry of {list_key} into a "
            "container of its own; name an image"
        )
    return (
        f"{label}: names no image, and the Prometheus operator generates no container of that name to "
        f"merge it into; name an image, or the container it patches ({', '.join(generated)})"
    )


def _check_images(spec: dict[str, Any], wl: Workload) -> None:
    """The tag rule, with or without a policy: image (unless a patch of the main container names the
    image it runs), every listed image and every image volume's reference."""
    main_patch = _patch(spec, wl.main)
    if spec.get("image") and not (main_patch and main_patch[1].get("image")):
        validate_image(spec["image"], "image")
    for list_key in ("containers", "initContainers"):
        for _, label, container in _named(spec.get(list_key), list_key):
            if container.get("image"):
                validate_image(container["image"], f"{label}: image")
    for _, label, volume in _named(spec.get("volumes"), "volumes"):
        reference = (volume.get("image") or {}).get("reference")
        if reference:
            validate_image(reference, f"{label}: image.reference")


def _check_quantities(block: dict[str, Any], path: str) -> None:
    requests, limits = block.get("requests") or {}, block.get("limits") or {}
    for section, values in (("request", requests), ("limit", limits)):
        for name, value in values.items():
            if parse_quantity(value) < 0:
                raise FieldError(f"{path}: {name}: {section} {value} must not be negative")
    for name, request in requests.items():
        if name in limits and parse_quantity(request) > parse_quantity(limits[name]):
            raise FieldError(f"{path}: {name}: request {request} must not exceed limit {limits[name]}")


def _main_resources(spec: dict[str, Any], wl: Workload) -> tuple[dict[str, dict[str, str]], str, bool]:
    """The block the main container runs with: resources, a patch's requests and limits merged over it
    key by key, and the operator's 200Mi memory request where neither names one."""
    resources = spec.get("resources") or {}
    requests = dict(resources.get("requests") or {})
    limits = dict(resources.get("limits") or {})
    path = "resources"
    found = _patch(spec, wl.main)
    if found is not None:
        index, patch = found
        requests.update((patch.get("resources") or {}).get("requests") or {})
        limits.update((patch.get("resources") or {}).get("limits") or {})
        path = f'resources with containers[{index}] "{wl.main}" merged over it'
    filled = wl.fills_memory and "memory" not in requests
    if filled:
        limit = limits.get("memory")
        if limit is not None and parse_quantity(limit) < parse_quantity(OPERATOR_MEMORY_REQUEST):
            raise FieldError(
                f"{path}: memory: the unset request the Prometheus operator fills as {OPERATOR_MEMORY_REQUEST} "
                f"must not exceed limit {limit}; name a memory request, or a limit of at least "
                f"{OPERATOR_MEMORY_REQUEST}"
            )
        requests["memory"] = canonical_quantity(OPERATOR_MEMORY_REQUEST)
    return {"requests": requests, "limits": limits}, path, filled


def _check_resources(spec: dict[str, Any], wl: Workload) -> None:
    block, path, _ = _main_resources(spec, wl)
    _check_quantities(block, path)
    for list_key in ("containers", "initContainers"):
        for _, label, container in _named(spec.get(list_key), list_key):
            _check_quantities(container.get("resources") or {}, f"{label}: resources")


# --- the pod spec the operator writes -----------------------------------------------------------------


def _check_port_name(kc: KindContext, wl: Workload) -> None:
    spec = kc.decoded
    port_name = spec.get("portName")
    if port_name is None:
        return
    if not is_valid_port_name(port_name):
        raise FieldError(
            f'portName: "{port_name}" is not a valid port name, which must be an IANA service name (at most '
            "15 characters of lower-case letters, digits and '-', with at least one letter)"
        )


def _check_service_name(spec: dict[str, Any]) -> None:
    name = spec.get("serviceName")
    if name is not None and not (len(name) <= 63 and _DNS1035.match(name)):
        raise FieldError(
            f'serviceName: "{name}" is not a valid Service name, which must be a DNS-1035 label: lower-case '
            "letters, digits and '-', starting with a letter and ending with a letter or digit, at most "
            "63 characters"
        )


def _check_pod_fields(kc: KindContext, wl: Workload) -> None:
    spec = kc.decoded
    replicas = spec.get("replicas")
    if replicas is not None and replicas < 0:
        raise FieldError(f"replicas: {replicas} is negative; {wl.negative_replicas}")
    if spec.get("dnsPolicy") == "None" and not (spec.get("dnsConfig") or {}).get("nameservers"):
        raise FieldError(
            "dnsPolicy: None needs dnsConfig.nameservers: the API refuses the pods the Prometheus operator "
            "copies them into"
        )
    _check_service_name(spec)
    _check_port_name(kc, wl)
    labels = (spec.get("podMetadata") or {}).get("labels") or {}
    value = labels.get(COMPONENT_LABEL)
    if value is not None and value != kc.component.name:
        raise FieldError(
            f'podMetadata.labels["{COMPONENT_LABEL}"]: "{value}" is not the component label of component '
            f'"{kc.component.name}"'
        )


def _check_host_port_zero(authored: dict[str, Any]) -> None:
    """Under hostNetwork the API server sets an omitted hostPort to the containerPort."""
    if authored.get("hostNetwork") is not True:
        return
    for list_key in ("initContainers", "containers"):
        for index, container in enumerate(authored.get(list_key) or []):
            for p_index, port in enumerate((container or {}).get("ports") or []):
                if isinstance(port, dict) and port.get("hostPort") == 0:
                    raise FieldError(
                        f"{list_key}[{index}].ports[{p_index}].hostPort: 0 cannot be carried by the Prometheus "
                        "operator API types (the field is omitted when zero, so the API server would apply "
                        "its default, the port's containerPort)"
                    )


# --- volumes, mounts and storage ---------------------------------------------------------------------


def _data_volume(kc: KindContext, wl: Workload) -> str:
    claim = ((kc.decoded.get("storage") or {}).get("volumeClaimTemplate") or {}).get("metadata") or {}
    return claim.get("name") or f"{wl.prefix}-{kc.obj['metadata']['name']}-{wl.data_suffix}"


def _storage_arm(storage: dict[str, Any] | None) -> str | None:
    if storage is None:
        return None
    for arm in ("emptyDir", "ephemeral"):
        if storage.get(arm) is not None:
            return arm
    return "volumeClaimTemplate"


def _check_volumes(kc: KindContext, wl: Workload) -> None:
    spec, name = kc.decoded, kc.obj["metadata"]["name"]
    reserved = dict(wl.reserved_volumes(spec))
    rulefiles = re.compile(rf"^{re.escape(wl.prefix)}-{re.escape(name)}-rulefiles-(0|[1-9][0-9]*)\Z")
    data = _data_volume(kc, wl)  # an emptyDir where storage is unset
    seen: dict[str, int] = {}
    for index, label, volume in _named(spec.get("volumes"), "volumes"):
        volume_name = volume.get("name", "")
        if volume_name in seen:
            raise FieldError(
                f"{label}: the name is listed already at volumes[{seen[volume_name]}]; name the volume otherwise"
            )
        seen[volume_name] = index
        if volume_name in reserved or (wl.rulefiles and rulefiles.match(volume_name)):
            which = "every" if reserved.get(volume_name, True) else "this"
            raise FieldError(
                f"{label}: the name is a volume the Prometheus operator adds to {which} {wl.kind}'s pods; "
                "name the volume otherwise"
            )
        if volume_name == data:
            raise FieldError(
                f"{label}: the name is that of the data volume the Prometheus operator adds to this "
                f"{wl.kind}'s pods; name the volume otherwise"
            )
    main = wl.main
    reserved_paths = wl.reserved_mounts(spec, name)
    for index, mount in enumerate(spec.get("volumeMounts") or []):
        path = posixpath.normpath(mount.get("mountPath", "") or ".")
        if path in reserved_paths or (
            wl.rulefiles and path.startswith(f"{wl.rules_dir}/{wl.prefix}-{name}-rulefiles-")
        ):
            raise FieldError(
                f'volumeMounts[{index}] "{mount.get("mountPath", "")}": the path is one the Prometheus operator '
                f"mounts a volume at in the {main} container; mount the volume elsewhere"
            )


def _storage_request(claim_spec: dict[str, Any] | None) -> str | None:
    return (((claim_spec or {}).get("resources") or {}).get("requests") or {}).get("storage")


def _check_positive_request(value: str | None, path: str) -> None:
    if value is None:
        raise FieldError(
            f"{path}: required (the API requires a storage request of the claim the Prometheus operator makes)"
        )
    if parse_quantity(value) <= 0:
        raise FieldError(f"{path}: {value} is not a positive storage request, which the API requires")


def _check_storage(kc: KindContext, wl: Workload) -> None:
    storage = kc.decoded.get("storage")
    arm = _storage_arm(storage)
    if storage is None or arm is None:
        return
    name = kc.obj["metadata"]["name"]
    template = storage.get("volumeClaimTemplate") or {}
    template_name = (template.get("metadata") or {}).get("name")
    expected = f"{wl.prefix}-{name}-{wl.data_suffix}"
    if arm == "volumeClaimTemplate":
        _check_positive_request(
            _storage_request(template.get("spec")),
            "storage.volumeClaimTemplate.spec.resources.requests.storage",
        )
        if template_name and not is_dns1123_label(template_name):
            raise FieldError(
                f'storage.volumeClaimTemplate.metadata.name: "{template_name}" is not a DNS-1123 label, which the '
                "Prometheus operator names the data volume with"
            )
        reserved = dict(wl.reserved_volumes(kc.decoded))
        if template_name in reserved:
            raise FieldError(
                f'storage.volumeClaimTemplate.metadata.name: "{template_name}" names a volume the Prometheus '
                f"operator adds to the {wl.kind}'s pods, which the StatefulSet controller replaces with the claim"
            )
        return
    if template_name and template_name != expected:
        raise FieldError(
            f'storage.volumeClaimTemplate.metadata.name: "{template_name}" beside storage.{arm}: the Prometheus '
            f'operator creates the data volume as "{expected}" and mounts it under this name, so the pods would '
            "mount a volume that does not exist"
        )
    if arm == "ephemeral":
        claim = (storage["ephemeral"] or {}).get("volumeClaimTemplate")
        if claim is None:
            raise required_error("storage.ephemeral.volumeClaimTemplate", PROMETHEUS_OPERATOR)
        if not (claim.get("spec") or {}).get("accessModes"):
            raise required_error(
                "storage.ephemeral.volumeClaimTemplate.spec.accessModes", PROMETHEUS_OPERATOR
            )
        _check_positive_request(
            _storage_request(claim.get("spec")),
            "storage.ephemeral.volumeClaimTemplate.spec.resources.requests.storage",
        )


def _check_name_length(kc: KindContext, wl: Workload) -> None:
    name = kc.obj["metadata"]["name"]
    candidates = []
    if not (kc.decoded.get("storage") or {}).get("volumeClaimTemplate", {}).get("metadata", {}).get("name"):
        candidates.append(f"{wl.prefix}-{name}-{wl.data_suffix}")
    if wl.rulefiles:
        candidates.append(f"{wl.prefix}-{name}-rulefiles-0")
    for derived in candidates:
        if not is_dns1123_label(derived):
            raise FieldError(
                f'{wl.kind} "{name}": the Prometheus operator names the volume "{derived}" after the '
                f"{_name_source(kc)}, which is not a DNS-1123 label (at most 63 characters, no dots); the "
                f"{_name_source(kc)} may have at most {wl.name_limit} characters and no dot"
            )


# --- policy ------------------------------------------------------------------------------------------------


def _unset_image(what: str, where: str, policy: Policy) -> Exception:
    return refuse(
        f"{what}: unset, so the Prometheus operator chooses the image the pods run, which the environment "
        f"policy's allowed registries {list(policy.allowed_registries)} cannot hold; name an image from an "
        f"allowed registry {where}",
        REFUSAL_REGISTRY,
    )


def _policy_images(spec: dict[str, Any], wl: Workload, policy: Policy) -> None:
    main_patch = _patch(spec, wl.main)
    patch_image = main_patch[1].get("image") if main_patch else None
    if spec.get("image") and not patch_image:
        check_registry(policy, spec["image"], "image")
    if policy.allowed_registries:
        if not spec.get("image") and not patch_image:
            raise _unset_image("image", f"in image or in an entry of containers named {wl.main}", policy)
        for list_key, names in (("containers", wl.containers), ("initContainers", wl.init_containers)):
            for generated in names:
                if generated == wl.main:
                    continue
                entries = [c for c in spec.get(list_key) or [] if c.get("name") == generated]
                if not any(c.get("image") for c in entries):
                    raise _unset_image(
                        f"the image of the {generated} container ({list_key})",
                        f"in an entry of {list_key} named {generated}",
                        policy,
                    )
    for _, label, volume in _named(spec.get("volumes"), "volumes"):
        reference = (volume.get("image") or {}).get("reference")
        if reference:
            check_registry(policy, reference, f"{label}: image.reference")


def _policy_maximum(policy: Policy, block: dict[str, Any], path: str, filled: bool = False) -> None:
    maxima = {"cpu": policy.max_cpu, "memory": policy.max_memory}
    for section, word in (("requests", "request"), ("limits", "limit")):
        for resource, maximum in maxima.items():
            value = (block.get(section) or {}).get(resource)
            if not maximum or value is None or parse_quantity(value) <= parse_quantity(maximum):
                continue
            where = path
            if filled and section == "requests" and resource == "memory":
                where = f"{path}, whose unset memory request the Prometheus operator fills as {OPERATOR_MEMORY_REQUEST}"
            raise refuse(
                f'{where}: {resource} {word} "{value}" exceeds enforced maximum "{maximum}"',
                REFUSAL_RESOURCE_MAXIMUM,
            )


def _policy_storage(spec: dict[str, Any], policy: Policy) -> None:
    if not policy.max_storage:
        return
    storage = spec.get("storage")
    arm = _storage_arm(storage)
    claims: list[tuple[str, str | None]] = []
    if arm == "volumeClaimTemplate":
        claims.append(
            ("storage.volumeClaimTemplate", _storage_request(storage["volumeClaimTemplate"].get("spec")))
        )
    elif arm == "ephemeral":
        claim = (storage["ephemeral"] or {}).get("volumeClaimTemplate") or {}
        claims.append(("storage.ephemeral.volumeClaimTemplate", _storage_request(claim.get("spec"))))
    for _, label, volume in _named(spec.get("volumes"), "volumes"):
        claim = ((volume.get("ephemeral") or {}).get("volumeClaimTemplate")) or {}
        claims.append((f"{label}: ephemeral.volumeClaimTemplate", _storage_request(claim.get("spec"))))
    for path, value in claims:
        if value is not None and parse_quantity(value) > parse_quantity(policy.max_storage):
            raise refuse(
                f'{path}: storage request "{value}" exceeds enforced maximum "{policy.max_storage}"',
                REFUSAL_STORAGE_MAXIMUM,
            )


def _policy_pods(spec: dict[str, Any], policy: Policy) -> None:
    if spec.get("hostNetwork") is True and not policy.allow_host_network:
        raise refuse(
            "hostNetwork: the host namespace is not allowed by the environment policy", REFUSAL_HOST_NAMESPACE
        )
    for index, volume in enumerate(spec.get("volumes") or []):
        check_host_path(policy, volume, f"volumes[{index}]")
    windows = ((spec.get("securityContext") or {}).get("windowsOptions")) or {}
    if windows.get("hostProcess") is True and not policy.allow_privileged:
        raise refuse(
            "securityContext.windowsOptions.hostProcess: a host process pod is privileged, which the "
            "environment policy does not allow",
            REFUSAL_PRIVILEGED,
        )
    for list_key in ("containers", "initContainers"):
        for _, label, container in _named(spec.get(list_key), list_key):
            check_privileged(policy, container.get("securityContext"), label)
            check_capabilities(policy, container.get("securityContext"), label)
            if container.get("image"):
                check_registry(policy, container["image"], label)


def _check_policy(kc: KindContext, wl: Workload) -> None:
    spec, policy = kc.decoded, kc.build.policy
    _policy_images(spec, wl, policy)
    replicas = spec.get("replicas")
    count, what = (1 if replicas is None else replicas, "replicas")
    if wl.pod_count is not None:
        count, what = wl.pod_count(spec)
    if policy.max_replicas is not None and count > policy.max_replicas:
        raise refuse(
            f"{what} {count} exceeds enforced maximum {policy.max_replicas}", REFUSAL_REPLICA_MAXIMUM
        )
    block, path, filled = _main_resources(spec, wl)
    _policy_maximum(policy, block, path, filled)
    for list_key in ("containers", "initContainers"):
        for _, label, container in _named(spec.get(list_key), list_key):
            _policy_maximum(policy, container.get("resources") or {}, f"{label}: resources")
    _policy_storage(spec, policy)
    _policy_pods(spec, policy)
    for policy_check in wl.policy_checks:
        policy_check(kc, wl, policy)
    if not policy.explicit_secrets_allowed:
        for index, entry in enumerate(spec.get("remoteWrite") or []):
            if entry.get("bearerToken"):
                raise refuse(
                    f"remoteWrite[{index}].bearerToken: holds a credential in the object, and the environment "
                    "policy forbids explicit secrets; name a Secret key in authorization.credentials instead",
                    REFUSAL_EXPLICIT_SECRET,
                )


def workload_check(wl: Workload) -> Callable[[KindContext], None]:
    def check(kc: KindContext) -> None:
        for kind_check in wl.checks:
            kind_check(kc, wl)
        _check_host_port_zero(kc.authored)
        _check_container_lists(kc.decoded, wl)
        _check_images(kc.decoded, wl)
        _check_resources(kc.decoded, wl)
        _check_pod_fields(kc, wl)
        _check_storage(kc, wl)
        _check_volumes(kc, wl)
        (wl.name_check or _check_name_length)(kc, wl)
        _check_policy(kc, wl)

    return check


# --- thanosruler ----------------------------------------------------------------------------------------

EXCLUDED_GROUP = "monitoring.coreos.com"


def _authored_key(obj: dict[str, Any], name: str) -> str | None:
    for key in obj:
        if str(key).lower() == name.lower():
            return str(key)
    return None


def _check_excluded_groups(kc: KindContext, wl: Workload) -> None:
    """The type writes group whether or not it was authored: an unauthored one gets the one value the
    API admits, an authored empty one is refused."""
    key = _authored_key(kc.authored, "excludedFromEnforcement")
    authored = kc.authored.get(key) if key else None
    for index, entry in enumerate(kc.decoded.get("excludedFromEnforcement") or []):
        if entry["group"]:
            continue
        raw = authored[index] if isinstance(authored, list) else {}
        group_key = _authored_key(raw, "group")
        if group_key is not None and raw[group_key] is not None:
            raise FieldError(
                f"excludedFromEnforcement[{index}].group: empty: the API admits only {EXCLUDED_GROUP}; leave "
                f"group out, or write {EXCLUDED_GROUP}"
            )
        entry["group"] = EXCLUDED_GROUP


def _check_thanos_port_name(kc: KindContext, wl: Workload) -> None:
    spec = kc.decoded
    if spec.get("portName") != "grpc":
        return
    if not spec.get("listenLocal"):
        target = "the thanos-ruler container"
    elif spec.get("serviceName") is None:
        target = "the governing Service it creates (thanos-ruler-operated)"
    else:
        return
    raise FieldError(
        f'portName: "grpc" is the name of a port the Prometheus operator adds to {target}, so the web port '
        "would share its name; name the port otherwise"
    )


def _rename_external_labels(kc: KindContext, wl: Workload) -> None:
    if "externalLabels" in kc.decoded:
        kc.decoded["labels"] = kc.decoded.pop("externalLabels")


def _thanos_reserved_volumes(spec: dict[str, Any]) -> tuple[tuple[str, bool], ...]:
    volumes = [("tls-assets", True), ("web-config", True), ("remote-write-config", True)]
    keyed = (
        ("query-config", spec.get("queryConfig") is not None),
        ("alertmanager-config", spec.get("alertmanagersConfig") is not None),
        (
            "objstorage-config",
            spec.get("objectStorageConfig") is not None and not spec.get("objectStorageConfigFile"),
        ),
        ("tracing-config", spec.get("tracingConfig") is not None and not spec.get("tracingConfigFile")),
        (
            "alertrelabel-config",
            spec.get("alertRelabelConfigs") is not None and not spec.get("alertRelabelConfigFile"),
        ),
    )
    volumes += [(name, False) for name, present in keyed if present]
    return tuple(volumes)


def _thanos_reserved_mounts(spec: dict[str, Any], name: str) -> tuple[str, ...]:
    keyed = [volume for volume, every in _thanos_reserved_volumes(spec) if not every]
    return (
        "/thanos/data",
        "/etc/thanos/certs",
        "/etc/thanos/web_config/web-config.yaml",
        *(f"/etc/thanos/config/{volume}" for volume in keyed),
    )


THANOS_RULER_WORKLOAD = Workload(
    kind="ThanosRuler",
    main="thanos-ruler",
    containers=("thanos-ruler", "config-reloader"),
    init_containers=(),
    prefix="thanos-ruler",
    data_suffix="data",
    fills_memory=True,
    reserved_volumes=_thanos_reserved_volumes,
    reserved_mounts=_thanos_reserved_mounts,
    rulefiles=True,
    name_limit=38,
    checks=(_rename_external_labels, _check_excluded_groups, _check_thanos_port_name),
)


def _refuse_renamed_labels(
    build: Callable[[ComponentSpec, BuildContext], Generated],
) -> Callable[..., Generated]:
    """The spec's labels is the externalLabels property; another spelling of labels would reach the
    spec field through the case-insensitive decode, so it is refused by name."""

    def wrapped(component: ComponentSpec, ctx: BuildContext) -> Generated:
        for key in sorted(component.properties, key=str):
            if str(key) != "labels" and str(key).lower() == "labels":
                raise FieldError(
                    f"{key}: not a thanosruler property: the ThanosRuler's external labels are the "
                    "externalLabels property, and labels are the object's own labels"
                )
        return build(component, ctx)

    return wrapped


def _thanos_ruler() -> ComponentType:
    handler = kind_component(
        "thanosruler",
        MONITORING_V1,
        "ThanosRuler",
        "monitoringv1.ThanosRulerSpec",
        spec=types.THANOS_RULER_SPEC,
        api=PROMETHEUS_OPERATOR,
        check=workload_check(THANOS_RULER_WORKLOAD),
    )
    return dataclasses.replace(handler, build=_refuse_renamed_labels(handler.build))


THANOS_RULER = _thanos_ruler()


# --- rules alertmanager and prometheus share ----------------------------------------------------------

_INVALID_DNS1123 = re.compile(r"[^-a-z0-9]+")
NOT_AUTHORABLE = ("baseImage", "tag", "sha")


def operator_volume_name(prefix: str, name: str) -> str:
    """ResourceNamer.DNS1123Label: lower-cased, each run of other characters a '-', cut to 63."""
    return _INVALID_DNS1123.sub("-", f"{prefix}-{name}".lower())[:63]


def mounted_object_volumes(spec: dict[str, Any]) -> list[tuple[str, int, str, str]]:
    """(field, index, name, volume name) of each entry of secrets and configMaps."""
    volumes = []
    for list_key, prefix in (("secrets", "secret"), ("configMaps", "configmap")):
        for index, name in enumerate(spec.get(list_key) or []):
            volumes.append((list_key, index, name, operator_volume_name(prefix, name)))
    return volumes


def check_mounted_objects(kc: KindContext, wl: Workload) -> None:
    """Two entries the operator's naming gives one volume, or a volume name the cut leaves invalid."""
    seen: dict[str, tuple[str, int, str]] = {}
    for list_key, index, name, volume in mounted_object_volumes(kc.decoded):
        label = f'{list_key}[{index}] "{name}"'
        if not is_dns1123_label(volume):
            raise FieldError(
                f'{label}: the Prometheus operator names its volume "{volume}", which is not a DNS-1123 label '
                "(cut to 63 characters), and then fails to build the pods; name the object otherwise"
            )
        if volume in seen:
            other_key, other_index, other = seen[volume]
            raise FieldError(
                f'{label}: the Prometheus operator names its volume "{volume}", as it names that of '
                f'{other_key}[{other_index}] "{other}", and adds a volume for each, which the API refuses; '
                "list the object once"
            )
        seen[volume] = (list_key, index, name)


def check_host_process(kc: KindContext, wl: Workload) -> None:
    windows = ((kc.decoded.get("securityContext") or {}).get("windowsOptions")) or {}
    if windows.get("hostProcess") is True and kc.decoded.get("hostNetwork") is not True:
        raise FieldError(
            "securityContext.windowsOptions.hostProcess: true needs hostNetwork: true: the API refuses the pods "
            "the Prometheus operator copies them into"
        )


def not_authorable(path: str, use: str) -> FieldError:
    return FieldError(
        f"{path}: not authorable: the Prometheus operator deprecates the field, and composes the image it "
        f"yields outside what the object states; use {use}"
    )


def check_not_authorable(kc: KindContext, wl: Workload) -> None:
    """baseImage, tag and sha: an empty one writes nothing (the type omits it), any other is refused."""
    for name in NOT_AUTHORABLE:
        if kc.decoded.get(name):
            raise not_authorable(name, "image")


def external_url_error(value: str) -> str | None:
    """Why Go's net/url refuses the URL, or None."""
    try:
        gourl.parse(value)
    except gourl.GoURLError:
        return "not a URL Go's net/url can parse"
    return None


# --- prometheus -----------------------------------------------------------------------------------------

SIDECAR = "thanos-sidecar"
_LOG_DIR = "/var/log/prometheus"


def _prometheus_sidecars(spec: dict[str, Any]) -> tuple[str, ...]:
    return (SIDECAR,) if spec.get("thanos") is not None else ()


def _without_directory(path: str | None) -> bool:
    return bool(path) and posixpath.dirname(path) == ""


def _log_file_volume(spec: dict[str, Any]) -> bool:
    failure_log, query_log = spec.get("scrapeFailureLogFile"), spec.get("queryLogFile")
    return _without_directory(failure_log) or (_without_directory(query_log) and not failure_log)


def _prometheus_reserved_volumes(spec: dict[str, Any]) -> tuple[tuple[str, bool], ...]:
    volumes = [("config", True), ("tls-assets", True), ("config-out", True), ("web-config", True)]
    if _log_file_volume(spec):
        volumes.append(("log-file", False))
    if spec.get("thanos") is not None:
        volumes.append(("thanos-prometheus-http-client-file", False))
    volumes += [(volume, False) for _, _, _, volume in mounted_object_volumes(spec)]
    return tuple(volumes)


def _prometheus_reserved_mounts(spec: dict[str, Any], name: str) -> tuple[str, ...]:
    mounts = [
        "/prometheus",
        "/etc/prometheus/config_out",
        "/etc/prometheus/certs",
        "/etc/prometheus/web_config/web-config.yaml",
    ]
    if _log_file_volume(spec):
        mounts.append(_LOG_DIR)
    for list_key, directory in (("secrets", "secrets"), ("configMaps", "configmaps")):
        mounts += [posixpath.normpath(f"/etc/prometheus/{directory}/{n}") for n in spec.get(list_key) or []]
    return tuple(mounts)


def _prometheus_pods(spec: dict[str, Any]) -> tuple[int, str]:
    replicas, shards = spec.get("replicas"), spec.get("shards")
    replicas = 1 if replicas is None or replicas < 0 else replicas
    return replicas * (1 if shards is None else shards), "replicas times shards"


def _check_prometheus_counts(kc: KindContext, wl: Workload) -> None:
    shards = kc.decoded.get("shards")
    if shards is not None and shards < 1:
        raise FieldError(
            f"shards: {shards} is below 1, for which the Prometheus operator runs 1 shard; write 1 or more, or "
            "leave shards unset"
        )


def _check_prometheus_port_name(kc: KindContext, wl: Workload) -> None:
    spec = kc.decoded
    if spec.get("portName") == "grpc" and spec.get("thanos") is not None and spec.get("serviceName") is None:
        raise FieldError(
            'portName: "grpc" is the name of the port the Prometheus operator adds for the Thanos sidecar to the '
            "governing Service it creates (prometheus-operated), so the web port would share its name; name the "
            "port otherwise, or name a Service of your own in serviceName"
        )


def _check_prometheus_external_url(kc: KindContext, wl: Workload) -> None:
    value = kc.decoded.get("externalUrl")
    if not value:
        return
    tail = "Prometheus exits on it at startup, though the Prometheus operator and the API accept it"
    if value[0] in "\"'" or value[-1] in "\"'":
        raise FieldError(f"externalUrl: begins or ends with a quote: {tail}; write the URL without quotes")
    error = external_url_error(value)
    if error:
        raise FieldError(f"externalUrl: {error}: {tail}; write a valid URL")


_SIDECAR_MOUNT_FIELDS = ("name", "mountPath")


def _check_thanos(kc: KindContext, wl: Workload) -> None:
    thanos = kc.decoded.get("thanos")
    if thanos is None:
        return
    for name in NOT_AUTHORABLE:
        if name in thanos:
            raise not_authorable(f"thanos.{name}", "thanos.image")
    patch = _patch(kc.decoded, SIDECAR)
    if thanos.get("image") and not (patch and patch[1].get("image")):
        validate_image(thanos["image"], "thanos.image")
    _check_quantities(thanos.get("resources") or {}, "thanos.resources")
    reserved = ["/etc/thanos/config"]
    if thanos.get("objectStorageConfig") is not None or thanos.get("objectStorageConfigFile"):
        reserved.append("/prometheus")
    for index, mount in enumerate(thanos.get("volumeMounts") or []):
        for key in mount:
            if key not in _SIDECAR_MOUNT_FIELDS:
                raise FieldError(
                    f"thanos.volumeMounts[{index}].{key}: the Prometheus operator copies only name and mountPath "
                    "into the thanos-sidecar container's mount, so the field would be dropped; leave it out"
                )
        path = mount.get("mountPath", "")
        if posixpath.normpath(path or ".") in reserved:
            raise FieldError(
                f'thanos.volumeMounts[{index}] "{path}": the path is one the Prometheus operator mounts a volume '
                "at in the thanos-sidecar container; mount the volume elsewhere"
            )


def _log_mounts(spec: dict[str, Any]) -> list[dict[str, Any]]:
    patch = _patch(spec, "prometheus")
    mounts = [*(spec.get("volumeMounts") or []), *((patch[1].get("volumeMounts") or []) if patch else [])]
    return [m for m in mounts if posixpath.normpath(m.get("mountPath", "") or ".") == _LOG_DIR]


def _check_query_log(kc: KindContext, wl: Workload) -> None:
    spec = kc.decoded
    query_log, failure_log = spec.get("queryLogFile"), spec.get("scrapeFailureLogFile")
    if not (_without_directory(query_log) and failure_log and not _without_directory(failure_log)):
        return
    mounts = _log_mounts(spec)
    if mounts and not any(m.get("readOnly") for m in mounts):
        return
    raise FieldError(
        f'queryLogFile: "{query_log}" names no directory, so the Prometheus operator writes the query log under '
        f"{_LOG_DIR}, where it adds the log-file volume only for a scrapeFailureLogFile without a directory, "
        "and the container's root filesystem is read-only; name the file with a directory, or mount a writable "
        f"volume at {_LOG_DIR}"
    )


def _check_prometheus_names(kc: KindContext, wl: Workload) -> None:
    """The data volume, the third rule ConfigMap's volume and the last pod's hostname must be DNS-1123
    labels, and the last shard's StatefulSet at most 52 characters (controller-revision-hash)."""
    spec, name = kc.decoded, kc.obj["metadata"]["name"]
    source = _name_source(kc)
    replicas = spec.get("replicas")
    replicas = 1 if replicas is None or replicas < 0 else replicas
    shards = spec.get("shards") or 1
    statefulset = f"prometheus-{name}" if shards == 1 else f"prometheus-{name}-shard-{shards - 1}"
    claim_name = (
        ((spec.get("storage") or {}).get("volumeClaimTemplate") or {}).get("metadata", {}).get("name")
    )
    labels = [] if claim_name else [("volume", f"prometheus-{name}-db")]
    labels.append(("volume", f"prometheus-{name}-rulefiles-2"))
    if replicas > 0:
        labels.append(("pod", f"{statefulset}-{replicas - 1}"))
    limit = min(63 - (len(derived) - len(name)) for _, derived in labels)
    if replicas > 0:
        limit = min(limit, 52 - (len(statefulset) - len(name)))
    for what, derived in labels:
        if not is_dns1123_label(derived):
            raise FieldError(
                f'Prometheus "{name}": the Prometheus operator names the {what} "{derived}" after the {source}, '
                f"which is not a DNS-1123 label (at most 63 characters, no dots); the {source} may have at most "
                f"{limit} characters and no dot"
            )
    if replicas > 0 and len(statefulset) > 52:
        raise FieldError(
            f'Prometheus "{name}": the Prometheus operator names the StatefulSet "{statefulset}" after the '
            f"{source}, and the StatefulSet controller labels its pods controller-revision-hash with that name, "
            f"a '-' and a hash of up to 10 characters, which the API refuses beyond 63 characters; the {source} "
            f"may have at most {limit} characters"
        )


def _prometheus_policy(kc: KindContext, wl: Workload, policy: Policy) -> None:
    spec = kc.decoded
    thanos = spec.get("thanos")
    if thanos is not None:
        patch = _patch(spec, SIDECAR)
        patch_image = patch[1].get("image") if patch else None
        if thanos.get("image") and not patch_image:
            check_registry(policy, thanos["image"], "thanos.image")
        if policy.allowed_registries and not thanos.get("image") and not patch_image:
            raise _unset_image(
                "thanos.image", f"in thanos.image or in an entry of containers named {SIDECAR}", policy
            )
        _policy_maximum(policy, thanos.get("resources") or {}, "thanos.resources")
    if policy.explicit_secrets_allowed:
        return
    held = [(f"remoteRead[{i}].bearerToken", e) for i, e in enumerate(spec.get("remoteRead") or [])]
    held.append(("apiserverConfig.bearerToken", spec.get("apiserverConfig") or {}))
    for path, block in held:
        if block.get("bearerToken"):
            raise refuse(
                f"{path}: holds a credential in the object, and the environment policy forbids explicit secrets; "
                "name a Secret key in authorization.credentials instead",
                REFUSAL_EXPLICIT_SECRET,
            )


PROMETHEUS_WORKLOAD = Workload(
    kind="Prometheus",
    main="prometheus",
    containers=("prometheus", "config-reloader"),
    init_containers=("init-config-reloader",),
    prefix="prometheus",
    data_suffix="db",
    fills_memory=False,
    reserved_volumes=_prometheus_reserved_volumes,
    reserved_mounts=_prometheus_reserved_mounts,
    rulefiles=True,
    name_limit=40,
    checks=(
        check_not_authorable,
        _check_thanos,
        _check_prometheus_counts,
        _check_excluded_groups,
        _check_prometheus_port_name,
        check_host_process,
        check_mounted_objects,
        _check_prometheus_external_url,
        _check_query_log,
    ),
    sidecars=_prometheus_sidecars,
    rules_dir="/etc/prometheus/rules",
    negative_replicas="the Prometheus operator runs it as 1",
    name_check=_check_prometheus_names,
    pod_count=_prometheus_pods,
    policy_checks=(_prometheus_policy,),
)

PROMETHEUS = kind_component(
    "prometheus",
    MONITORING_V1,
    "Prometheus",
    "monitoringv1.PrometheusSpec",
    spec=types.PROMETHEUS_SPEC,
    api=PROMETHEUS_OPERATOR,
    check=workload_check(PROMETHEUS_WORKLOAD),
)


# --- alertmanager ---------------------------------------------------------------------------------------

DEFAULT_ALERTMANAGER_VERSION = "v0.34.0"  # DefaultAlertmanagerVersion of prometheus-operator v0.94.1
_SEMVER = re.compile(
    r"^(0|[1-9][0-9]*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?\Z",
    re.ASCII,
)

Semver = tuple[int, int, int, tuple[tuple[int, int | str], ...]]


def parse_tolerant(text: str) -> Semver | None:
    """blang/semver's ParseTolerant, then Parse: spaces and a leading v trimmed, leading zeros of each
    part dropped, a missing minor or patch read as 0; the result ordered as semver orders versions."""
    parts = text.strip().removeprefix("v").split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in "0123456789":
                part = "0" + part
            parts[index] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            return None
        parts += ["0"] * (3 - len(parts))
    match = _SEMVER.match(".".join(parts))
    if not match:
        return None
    numbers = [match.group(i) for i in (1, 2, 3)] + [
        p for p in (match.group(4) or "").split(".") if p.isdigit()
    ]
    if any(len(number) > 20 or int(number) > 2**64 - 1 for number in numbers):
        return None  # blang/semver reads each number with ParseUint(…, 64)
    pre = tuple((0, int(p)) if p.isdigit() else (1, p) for p in (match.group(4) or "").split(".") if p)
    return int(match.group(1)), int(match.group(2)), int(match.group(3)), pre


def _at_least(version: Semver, minimum: str) -> bool:
    floor = parse_tolerant(minimum)
    assert floor is not None
    if version[:3] != floor[:3]:
        return version[:3] > floor[:3]
    if not version[3]:
        return True
    return bool(floor[3]) and version[3] >= floor[3]


def _am_version(spec: dict[str, Any]) -> tuple[str, Semver]:
    text = spec.get("version") or DEFAULT_ALERTMANAGER_VERSION
    parsed = parse_tolerant(text)
    assert parsed is not None  # refused before
    return text, parsed


def _check_am_version(kc: KindContext, wl: Workload) -> None:
    spec = kc.decoded
    version = spec.get("version")
    patch = _patch(spec, "alertmanager")
    if not version:
        if spec.get("image") or (patch and patch[1].get("image")):
            raise FieldError(
                "version: required where image, or an entry of containers named alertmanager, names the image: "
                "the Prometheus operator chooses the container's flags by version, and by its own default where "
                "none is, which need not be the version the image runs"
            )
        return
    parsed = parse_tolerant(version)
    if parsed is None:
        reason = "is not a version the Prometheus operator can parse"
    elif parsed[:3] < (0, 15, 0) or (parsed[:3] == (0, 15, 0) and parsed[3]):
        reason = "is below 0.15.0, the oldest Alertmanager the Prometheus operator runs"
    elif parsed[0] > 0:
        reason = "is of a major version above 0, which the Prometheus operator does not run"
    else:
        return
    raise FieldError(f'version: "{version}" {reason}, and it fails the reconcile')


def _get(spec: dict[str, Any], path: str) -> Any:
    value: Any = spec
    for key in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


# (path, minimum version, what the operator does below it)
_POD_GATE = "it does not pass it to Alertmanager, and the pods run without it"
_GLOBAL_GATE = "it leaves it out of the global configuration Alertmanager runs with"
_G = "alertmanagerConfiguration.global."
ALERTMANAGER_GATES: tuple[tuple[str, str, str], ...] = (
    ("logFormat", "0.16.0", _POD_GATE),
    ("web.getConcurrency", "0.17.0", _POD_GATE),
    ("web.timeout", "0.17.0", _POD_GATE),
    ("web.tlsConfig", "0.22.0", "it leaves it out of the web server's configuration"),
    ("web.httpConfig", "0.22.0", "it leaves it out of the web server's configuration"),
    ("clusterTLS", "0.24.0", "it leaves the gossip TLS configuration off the cluster"),
    ("clusterLabel", "0.26.0", _POD_GATE),
    ("enableFeatures", "0.27.0", _POD_GATE),
    ("limits.maxSilences", "0.28.0", _POD_GATE),
    ("limits.maxPerSilenceBytes", "0.28.0", _POD_GATE),
    ("clusterPeerName", "0.30.0", _POD_GATE),
    (_G + "httpConfig.authorization", "0.22.0", _GLOBAL_GATE),
    (_G + "httpConfig.oauth2", "0.22.0", _GLOBAL_GATE),
    (_G + "httpConfig.followRedirects", "0.22.0", _GLOBAL_GATE),
    (_G + "telegram", "0.24.0", _GLOBAL_GATE),
    (_G + "webex", "0.25.0", _GLOBAL_GATE),
    (_G + "httpConfig.enableHttp2", "0.25.0", _GLOBAL_GATE),
    (_G + "httpConfig.tlsConfig.minVersion", "0.25.0", _GLOBAL_GATE),
    (_G + "httpConfig.tlsConfig.maxVersion", "0.25.0", _GLOBAL_GATE),
    (_G + "httpConfig.oauth2.proxyUrl", "0.25.0", _GLOBAL_GATE),
    (_G + "httpConfig.oauth2.noProxy", "0.25.0", _GLOBAL_GATE),
    (_G + "httpConfig.oauth2.proxyConnectHeader", "0.25.0", _GLOBAL_GATE),
    (_G + "httpConfig.proxyFromEnvironment", "0.26.0", _GLOBAL_GATE),
    (_G + "httpConfig.noProxy", "0.26.0", _GLOBAL_GATE),
    (_G + "httpConfig.proxyConnectHeader", "0.26.0", _GLOBAL_GATE),
    (_G + "jira", "0.28.0", _GLOBAL_GATE),
    (_G + "rocketChat", "0.28.0", _GLOBAL_GATE),
    (_G + "smtp.tlsConfig", "0.28.0", _GLOBAL_GATE),
    (_G + "smtp.forceImplicitTLS", "0.31.0", _GLOBAL_GATE),
    (_G + "mattermost", "0.32.0", _GLOBAL_GATE),
)


def _gated(spec: dict[str, Any], path: str) -> bool:
    value = _get(spec, path)
    if path == "logFormat":
        return bool(value) and value != "logfmt"
    if path.endswith("httpConfig.proxyFromEnvironment"):
        return value is True
    return value is not None and value != [] and value != {}


def _check_am_gates(kc: KindContext, wl: Workload) -> None:
    spec = kc.decoded
    if not spec.get("version"):
        return  # the operator's default, v0.34.0, reads every gated field
    text, version = _am_version(spec)
    for path, minimum, effect in ALERTMANAGER_GATES:
        if _gated(spec, path) and not _at_least(version, minimum):
            raise FieldError(
                f"{path}: read by the Prometheus operator only for Alertmanager {minimum} and later; at version "
                f"{text} {effect}; raise version to {minimum} or later, or leave {path} unset"
            )


# Alertmanager's feature flags by minor (featurecontrol.go of each minor's latest release)
_FEATURES_027 = ("classic-mode", "receiver-name-in-metrics", "utf8-strict-mode")
_FEATURES_028 = (*_FEATURES_027, "auto-gomaxprocs", "auto-gomemlimit")
_FEATURES_031 = (*_FEATURES_028, "alert-names-in-metrics")
_FEATURES_033 = (
    *(name for name in _FEATURES_031 if name != "auto-gomaxprocs"),
    "event-recorder",
    "group-key-in-metrics",
)
ALERTMANAGER_FEATURES: dict[int, tuple[str, ...]] = {
    27: _FEATURES_027,
    28: _FEATURES_028,
    29: _FEATURES_028,
    30: _FEATURES_028,
    31: _FEATURES_031,
    32: _FEATURES_031,
    33: _FEATURES_033,
    34: _FEATURES_033,
}
_ENV_REFERENCE = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_.-]*\)")


def kubelet_expand(value: str) -> str | None:
    """The value as the kubelet passes it ($$ read as $), or None where it refers to a variable."""
    out, index = [], 0
    while index < len(value):
        if value.startswith("$$", index):
            out.append("$")
            index += 2
        elif _ENV_REFERENCE.match(value, index):
            return None
        else:
            out.append(value[index])
            index += 1
    return "".join(out)


def _check_am_features(kc: KindContext, wl: Workload) -> None:
    features = kc.decoded.get("enableFeatures")
    if not features:
        return
    if features == [""]:
        raise FieldError(
            "enableFeatures: a list of one empty element: the Prometheus operator writes it as --enable-feature "
            "alone, which Alertmanager's flag parser refuses; leave enableFeatures unset for no feature"
        )
    text, version = _am_version(kc.decoded)
    if version[:2] < (0, 27) or version[:2] > (0, 34):
        return  # below 0.27 the gate refuses the field; above 0.34 the names are not known
    joined = kubelet_expand(",".join(features))
    if joined is None:
        return
    known = ALERTMANAGER_FEATURES[version[1]]
    at = f"Alertmanager 0.{version[1]}, at version {text}"
    for element in joined.split(","):
        if element not in known:
            raise FieldError(
                f'enableFeatures: not a feature flag of {at}: "{element}", on which Alertmanager exits at '
                f"startup; it takes {', '.join(sorted(known))}"
            )
    if "classic-mode" in joined.split(",") and "utf8-strict-mode" in joined.split(","):
        raise FieldError(
            f"enableFeatures: classic-mode with utf8-strict-mode: {at}, exits at startup on the two together; "
            "enable one of them"
        )


def _check_am_port_name(kc: KindContext, wl: Workload) -> None:
    spec = kc.decoded
    port = spec.get("portName")
    if port in ("mesh-tcp", "mesh-udp") and not spec.get("listenLocal"):
        target = "the alertmanager container"
    elif port in ("tcp-mesh", "udp-mesh") and spec.get("serviceName") is None:
        target = "the governing Service it creates (alertmanager-operated)"
    else:
        return
    raise FieldError(
        f'portName: "{port}" is the name of a port the Prometheus operator adds to {target}, so the web port '
        "would share its name; name the port otherwise"
    )


_AM_DURATION = re.compile(
    r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?\Z", re.ASCII
)


def _check_am_durations(kc: KindContext, wl: Workload) -> None:
    for name in ("retention", "clusterGossipInterval", "clusterPushpullInterval", "clusterPeerTimeout"):
        value = kc.decoded.get(name)
        match = _AM_DURATION.match(value or "")
        if value and (value == "0" or (match and not any(int(g) for g in match.groups() if g))):
            raise FieldError(
                f'{name}: "{value}" is not a positive duration: the Prometheus operator empties it and runs the '
                f"pods as if {name} were unset; write a positive duration, or leave {name} unset"
            )


def _check_am_external_url(kc: KindContext, wl: Workload) -> None:
    spec = kc.decoded
    value = spec.get("externalUrl")
    if not value:
        return
    tail = "Alertmanager exits on it at startup, though the Prometheus operator and the API accept it"
    try:
        url = gourl.parse(value)
    except gourl.GoURLError:
        raise FieldError(
            f"externalUrl: not a URL Go's net/url can parse: {tail}; write a valid URL"
        ) from None
    _, version = _am_version(spec)
    if _at_least(version, "0.19.0-rc.0") and url.scheme not in ("http", "https"):
        raise FieldError(
            f"externalUrl: not a URL of scheme http or https: {tail}; write an http or https URL"
        )


_IP_CHARS = set("0123456789abcdefABCDEF.:")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _advertise_address_error(value: str, version: Semver) -> bool:
    if value.startswith("["):
        end = value.find("]")
        if end < 0 or not value[end + 1 :].startswith(":") or "]" in value[end + 1 :]:
            return True
        host, port = value[1:end], value[end + 2 :]
    else:
        if value.count(":") != 1:
            return True
        host, port = value.split(":")
    digits = port.lstrip("+-").lstrip("0")
    if not re.fullmatch(r"[+-]?[0-9]+", port) or len(digits) > 10 or abs(int(port)) > 2**31 - 1:
        return True
    if host == "":
        return False
    if _at_least(version, "0.28.0-rc.0"):
        return not _is_ip(host)
    return not set(host) <= _IP_CHARS


def _check_am_advertise_address(kc: KindContext, wl: Workload) -> None:
    spec = kc.decoded
    value = spec.get("clusterAdvertiseAddress")
    replicas = spec.get("replicas")
    clustered = (replicas if replicas is not None else 1) != 1 or spec.get("forceEnableClusterMode")
    if not value or not clustered:
        return
    expanded = kubelet_expand(value)
    if expanded is None:
        return
    _, version = _am_version(spec)
    if _advertise_address_error(expanded, version):
        raise FieldError(
            "clusterAdvertiseAddress: not an IP address and a numeric port written as host:port: the Prometheus "
            "operator passes it to Alertmanager as --cluster.advertise-address, and Alertmanager exits where it "
            "cannot read it; write an IP address and a port, as 10.0.0.1:9094"
        )


def _am_generated_flags(spec: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The flags the operator generates for the spec, each with the version it generates it from."""
    replicas = spec.get("replicas")
    flags: list[tuple[str, str | None]] = [
        ("config.file", None),
        ("storage.path", None),
        ("data.retention", None),
        ("web.listen-address", None),
        ("web.route-prefix", None),
        ("cluster.reconnect-timeout", None),
        ("cluster.listen-address", None),
        ("cluster.peer-name", "0.30.0"),
        ("cluster.label", "0.26.0"),
        ("web.config.file", "0.22.0"),
    ]
    if (replicas if replicas is not None else 1) > 0 or spec.get("additionalPeers"):
        flags.append(("cluster.peer", None))
    web, limits = spec.get("web") or {}, spec.get("limits") or {}
    fields = (
        ("web.external-url", spec.get("externalUrl"), None),
        ("enable-feature", spec.get("enableFeatures"), "0.27.0"),
        ("web.get-concurrency", web.get("getConcurrency") is not None, "0.17.0"),
        ("web.timeout", web.get("timeout") is not None, "0.17.0"),
        ("silences.max-silences", limits.get("maxSilences") is not None, "0.28.0"),
        ("silences.max-per-silence-bytes", limits.get("maxPerSilenceBytes") is not None, "0.28.0"),
        ("log.level", spec.get("logLevel") not in (None, "", "info"), None),
        ("log.format", spec.get("logFormat") not in (None, "", "logfmt"), "0.16.0"),
        ("cluster.advertise-address", spec.get("clusterAdvertiseAddress"), None),
        ("cluster.gossip-interval", spec.get("clusterGossipInterval"), None),
        ("cluster.pushpull-interval", spec.get("clusterPushpullInterval"), None),
        ("cluster.peer-timeout", spec.get("clusterPeerTimeout"), None),
        ("cluster.tls-config", spec.get("clusterTLS") is not None, "0.24.0"),
    )
    flags += [(flag, since) for flag, present, since in fields if present]
    return flags


def _check_am_additional_args(kc: KindContext, wl: Workload) -> None:
    spec = kc.decoded
    _, version = _am_version(spec)
    generated = {flag: since for flag, since in _am_generated_flags(spec)}
    for index, argument in enumerate(spec.get("additionalArgs") or []):
        name = argument.get("name", "")
        base = name.removeprefix("no-")
        for flag in (name, base, f"no-{name}"):
            since = generated.get(flag, "")
            if flag in generated and (since is None or _at_least(version, since)):
                raise FieldError(
                    f'additionalArgs[{index}] "{name}": names the flag --{flag}, which the Prometheus operator '
                    "generates for this spec, and the operator then fails to build the pods; set the field that "
                    "configures it instead, or leave the argument out"
                )


def _check_am_templates(kc: KindContext, wl: Workload) -> None:
    templates = ((kc.decoded.get("alertmanagerConfiguration") or {}).get("templates")) or []
    seen: dict[str, int] = {}
    for index, template in enumerate(templates):
        for source in ("configMap", "secret"):
            key = (template.get(source) or {}).get("key")
            if key is None:
                continue
            if key in seen:
                raise FieldError(
                    f'alertmanagerConfiguration.templates[{index}].{source}.key: "{key}" is named already by '
                    f"templates[{seen[key]}], and the Prometheus operator skips a later template of a key it has "
                    "projected, so the template would not be loaded; name each key once"
                )
            seen[key] = index


def _names_something(value: Any) -> bool:
    """A credential source that names something: the type writes an unauthored one as empty fields."""
    if isinstance(value, dict):
        return any(_names_something(v) for v in value.values())
    return bool(value)


def _tls_pair(block: dict[str, Any], path: str) -> None:
    for what, names in (("certificate", ("cert", "certFile")), ("key", ("keySecret", "keyFile"))):
        named = [f"{path}.{n}" for n in names if _names_something(block.get(n))]
        if len(named) == 1:
            continue
        how = f"twice ({' and '.join(named)})" if named else f"nowhere ({' or '.join(names)})"
        raise FieldError(
            f"{path}: names the {what} {how}: the Prometheus operator's validation requires a certificate and "
            "a key, each named once, and without them it builds no pods"
        )


def _check_am_tls(kc: KindContext, wl: Workload) -> None:
    spec = kc.decoded
    web_tls = (spec.get("web") or {}).get("tlsConfig")
    if web_tls is not None:
        _tls_pair(web_tls, "web.tlsConfig")
    cluster = spec.get("clusterTLS")
    if cluster is None:
        return
    _tls_pair(cluster.get("server") or {}, "clusterTLS.server")
    client = cluster.get("client") or {}
    if not _names_something(client.get("cert")) or not _names_something(client.get("keySecret")):
        raise FieldError(
            "clusterTLS.client: names no certificate and key: the Prometheus operator's validation requires a "
            "certificate and a key for the client, and it then builds no pods"
        )


def _alertmanager_reserved_volumes(spec: dict[str, Any]) -> tuple[tuple[str, bool], ...]:
    volumes = [
        (n, True) for n in ("config-volume", "tls-assets", "config-out", "web-config", "cluster-tls-config")
    ]
    if ((spec.get("alertmanagerConfiguration") or {}).get("templates")) is not None:
        volumes.append(("notification-templates", False))
    volumes += [(volume, False) for _, _, _, volume in mounted_object_volumes(spec)]
    return tuple(volumes)


def _alertmanager_reserved_mounts(spec: dict[str, Any], name: str) -> tuple[str, ...]:
    mounts = [
        "/alertmanager",
        "/etc/alertmanager/config",
        "/etc/alertmanager/config_out",
        "/etc/alertmanager/certs",
        "/etc/alertmanager/web_config/web-config.yaml",
        "/etc/alertmanager/cluster_tls_config/cluster-tls-config.yaml",
    ]
    if ((spec.get("alertmanagerConfiguration") or {}).get("templates")) is not None:
        mounts.append("/etc/alertmanager/templates")
    for list_key, directory in (("secrets", "secrets"), ("configMaps", "configmaps")):
        mounts += [posixpath.normpath(f"/etc/alertmanager/{directory}/{n}") for n in spec.get(list_key) or []]
    return tuple(mounts)


def _check_alertmanager_names(kc: KindContext, wl: Workload) -> None:
    spec, name = kc.decoded, kc.obj["metadata"]["name"]
    source = _name_source(kc)
    replicas = spec.get("replicas")
    replicas = 1 if replicas is None else replicas
    claim_name = (
        ((spec.get("storage") or {}).get("volumeClaimTemplate") or {}).get("metadata", {}).get("name")
    )
    derived = [] if claim_name else [("volume", f"alertmanager-{name}-db")]
    if replicas > 0:
        derived.append(("pod", f"alertmanager-{name}-{replicas - 1}"))
    limit = min([63 - (len(d) - len(name)) for _, d in derived] + ([52 - 13] if replicas > 0 else []))
    for what, value in derived:
        if not is_dns1123_label(value):
            raise FieldError(
                f'Alertmanager "{name}": the Prometheus operator names the {what} "{value}" after the {source}, '
                f"which is not a DNS-1123 label (at most 63 characters, no dots); the {source} may have at most "
                f"{limit} characters and no dot"
            )
    statefulset = f"alertmanager-{name}"
    if replicas > 0 and len(statefulset) > 52:
        raise FieldError(
            f'Alertmanager "{name}": the Prometheus operator names the StatefulSet "{statefulset}" after the '
            f"{source}, and the StatefulSet controller labels its pods controller-revision-hash with that name, "
            f"a '-' and a hash of up to 10 characters, which the API refuses beyond 63 characters; the {source} "
            f"may have at most {limit} characters"
        )


ALERTMANAGER_WORKLOAD = Workload(
    kind="Alertmanager",
    main="alertmanager",
    containers=("alertmanager", "config-reloader"),
    init_containers=("init-config-reloader",),
    prefix="alertmanager",
    data_suffix="db",
    fills_memory=True,
    reserved_volumes=_alertmanager_reserved_volumes,
    reserved_mounts=_alertmanager_reserved_mounts,
    rulefiles=False,
    name_limit=39,
    checks=(
        check_not_authorable,
        _check_am_version,
        _check_am_gates,
        _check_am_features,
        _check_am_port_name,
        check_host_process,
        check_mounted_objects,
        _check_am_durations,
        _check_am_external_url,
        _check_am_advertise_address,
        _check_am_additional_args,
        _check_am_templates,
        _check_am_tls,
    ),
    negative_replicas="the Prometheus operator runs it as 0",
    name_check=_check_alertmanager_names,
)

ALERTMANAGER = kind_component(
    "alertmanager",
    MONITORING_V1,
    "Alertmanager",
    "monitoringv1.AlertmanagerSpec",
    spec=types.ALERTMANAGER_SPEC,
    api=PROMETHEUS_OPERATOR,
    check=workload_check(ALERTMANAGER_WORKLOAD),
)
