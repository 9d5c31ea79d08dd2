"""The shared pod-spec surface of the hand-parsed workload kinds (seed 002, "Pod-level properties",
"Referencing an existing claim", "Raw block volumes", "Raw scheduling properties", the affinity
shorthand under "Common config").

What it offers:

- :func:`parse_volumes` — the ``volumes`` list (hostPath, emptyDir, pvc, configMap, secret) into
  pod volumes, main-container mounts and devices, plus the claims a role kind describes;
  :func:`qualified_claim_name` is the ``<component>-<volume>`` claim name with interior hyphens
  doubled; :func:`build_claim` renders a described claim as a PersistentVolumeClaim;
  :func:`non_rwx_claim` finds the first claim whose access-mode set is not shareable;
- :func:`parse_pod_level` — the PodSpec-named pod properties (``podSecurityContext``,
  ``podResources``, ``podActiveDeadlineSeconds`` carry a ``pod`` prefix) and the refused ones;
- :func:`parse_tolerations`, :func:`parse_raw_affinity`, :func:`parse_topology_spread` — the raw
  corev1 scheduling shapes (deployment and the other kind-named workloads);
- :func:`parse_affinity_shorthand` — webservice/worker's four-key affinity, evaluated to corev1;
- :func:`default_topology_spread` — the role kinds' spread constraints for a replica count;
- :func:`check_extra_container_devices` — an init/sidecar volumeDevices/volumeMounts against the
  component's Block volumes.
"""

from __future__ import annotations

import copy
import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any

from farm.core.components.containers import parse_resources, parse_windows_options, reject_unknown_keys
from farm.core.errors import FieldError
from farm.core.fields import (
    go_type_name,
    parse_bool_field,
    parse_int64_field,
    parse_string_field,
    required_string_field,
)
from farm.core.names import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    shorten_name_with_suffix,
)
from farm.core.quantity import QuantityError, canonical_quantity, parse_quantity

ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
HOSTNAME_KEY = "kubernetes.io/hostname"
ZONE_KEY = "topology.kubernetes.io/zone"


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FieldError(f"{path}: must be an object, got {go_type_name(value)}")
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise FieldError(f"{path}: must be a list, got {go_type_name(value)}")
    return value


def drop_nulls(value: Any) -> Any:
    """A deep copy with every null (absence) removed from mappings."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return copy.deepcopy(value)


# ---------------------------------------------------------------------------------------------
# volumes

_SOURCES = {
    "hostPath": ("path", "type"),
    "emptyDir": ("sizeLimit", "medium"),
    "pvc": ("size", "storageClass", "accessModes", "claimName", "claimObjectName", "volumeMode"),
    "configMap": ("configMapName", "defaultMode", "optional"),
    "secret": ("secretName", "defaultMode", "optional"),
}
_ENTRY_KEYS = ("name", "mountPath", "devicePath", "readOnly", "subPath") + tuple(_SOURCES)


@dataclass
class Claim:
    """A pvc volume's claim: described (role kinds generate it) or referenced by claimName."""

    volume: str
    access_modes: list[str]
    claim_name: str = ""
    size: str = ""
    storage_class: str | None = None
    volume_mode: str = ""
    object_name: str = ""
    named_by: str = ""  # the property path of an authored claimObjectName

    @property
    def described(self) -> bool:
        return not self.claim_name

    @property
    def shareable(self) -> bool:
        return "ReadWriteMany" in self.access_modes


@dataclass
class Volumes:
    volumes: list[dict[str, Any]] = field(default_factory=list)
    mounts: list[dict[str, Any]] = field(default_factory=list)
    devices: list[dict[str, Any]] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    block_volumes: set[str] = field(default_factory=set)
    kinds: dict[str, str] = field(default_factory=dict)  # volume name -> source kind


def _access_modes(pvc: dict[str, Any], path: str) -> list[str]:
    value = pvc.get("accessModes")
    if value is None:
        return ["ReadWriteOnce"]
    modes = _list(value, path)
    if not modes:
        raise FieldError(f"{path}: must list at least one access mode")
    for index, mode in enumerate(modes):
        if not isinstance(mode, str):
            raise FieldError(f"{path}[{index}]: must be a string, got {go_type_name(mode)}")
        if mode not in ACCESS_MODES:
            raise FieldError(
                f'{path}[{index}]: invalid value "{mode}", must be one of {", ".join(ACCESS_MODES)}'
            )
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        raise FieldError(f"{path}: ReadWriteOncePod may not be combined with another access mode")
    return list(modes)


def _pvc_source(name: str, pvc: dict[str, Any], path: str) -> Claim:
    modes = _access_modes(pvc, f"{path}.accessModes")
    mode = pvc.get("volumeMode")
    if mode is not None and mode not in ("Filesystem", "Block"):
        raise FieldError(f'{path}.volumeMode: invalid value "{mode}", must be one of Filesystem, Block')
    claim = Claim(volume=name, access_modes=modes, volume_mode=mode or "")
    if "claimName" in pvc and pvc["claimName"] is not None:
        claim_name = pvc["claimName"]
        if not isinstance(claim_name, str):
            raise FieldError(f"{path}.claimName: must be a string, got {go_type_name(claim_name)}")
        if not is_dns1123_subdomain(claim_name):
            raise FieldError(f'{path}.claimName: "{claim_name}" is not a valid DNS-1123 subdomain')
        for key in ("size", "storageClass", "claimObjectName"):
            if pvc.get(key) is not None:
                raise FieldError(
                    f'volume "{name}": {key} cannot be set with claimName; the referenced claim states its own'
                )
        claim.claim_name = claim_name
        return claim
    size = pvc.get("size")
    if size is None or size == "":
        raise FieldError(f"{path}: size is required")
    if isinstance(size, bool) or not isinstance(size, (str, int, float)):
        raise FieldError(f"{path}.size: must be a string, got {go_type_name(size)}")
    try:
        amount = parse_quantity(size)
    except QuantityError:
        raise FieldError(f"{path}.size: invalid quantity {size!r}") from None
    if amount <= 0:
        raise FieldError(f"{path}.size: must be greater than zero, got {size}")
    claim.size = canonical_quantity(size)
    if "storageClass" in pvc and pvc["storageClass"] is not None:
        storage_class = pvc["storageClass"]
        if not isinstance(storage_class, str):
            raise FieldError(f"{path}.storageClass: must be a string, got {go_type_name(storage_class)}")
        if storage_class and not is_dns1123_subdomain(storage_class):
            raise FieldError(f'{path}.storageClass: "{storage_class}" is not a valid DNS-1123 subdomain')
        claim.storage_class = storage_class
    object_name, present = parse_string_field(pvc, "claimObjectName", f"{path}.claimObjectName")
    if present:
        if not is_dns1123_subdomain(object_name):
            raise FieldError(f'{path}.claimObjectName: "{object_name}" is not a valid DNS-1123 subdomain')
        claim.object_name = object_name
        claim.named_by = f"{path}.claimObjectName"
    return claim


def _source(kind: str, name: str, source: dict[str, Any], path: str) -> dict[str, Any]:
    if kind == "hostPath":
        host_path = required_string_field(source, "path", path)
        if not host_path.startswith("/"):
            raise FieldError(f'{path}.path: "{host_path}" must be an absolute path')
        out: dict[str, Any] = {"path": host_path}
        host_type, present = parse_string_field(source, "type", f"{path}.type")
        if present:
            out["type"] = host_type
        return {"hostPath": out}
    if kind == "emptyDir":
        return {"emptyDir": _empty_dir(source, path)}
    if kind == "configMap":
        return {"configMap": _projected(source, path, "configMapName", "name")}
    return {"secret": _projected(source, path, "secretName", "secretName")}


def _empty_dir(source: dict[str, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    medium, present = parse_string_field(source, "medium", f"{path}.medium")
    if present:
        if medium not in ("Memory",):
            raise FieldError(f'{path}.medium: invalid value "{medium}", must be Memory or empty')
        out["medium"] = medium
    limit = source.get("sizeLimit")
    if limit is not None:
        if not isinstance(limit, str):
            raise FieldError(f"{path}.sizeLimit: must be a string, got {go_type_name(limit)}")
        try:
            amount = parse_quantity(limit)
        except QuantityError:
            raise FieldError(f"{path}.sizeLimit: invalid quantity {limit!r}") from None
        if amount < 0:
            raise FieldError(f"{path}.sizeLimit: must be non-negative, got {limit}")
        out["sizeLimit"] = canonical_quantity(limit)
    return out


def _projected(source: dict[str, Any], path: str, key: str, out_key: str) -> dict[str, Any]:
    name = required_string_field(source, key, path)
    out: dict[str, Any] = {out_key: name}
    optional, present = parse_bool_field(source, "optional", f"{path}.optional")
    if present:
        out["optional"] = optional
    mode = source.get("defaultMode")
    if mode is not None:
        if isinstance(mode, bool) or not isinstance(mode, int) or not 0 <= mode <= 0o777:
            raise FieldError(f"{path}.defaultMode: must be an integer between 0 and 0777")
        out["defaultMode"] = mode
    return out


def qualified_claim_name(component: str, volume: str) -> str:
    """``<component>-<volume>`` with interior hyphens doubled in each half, so the join is unique;
    over 253 characters the escaped component is cut and the escaped volume kept whole
    (``oam.ShortenNameWithSuffix``). A document cannot reach the cut: both halves are DNS-1123
    labels (the component names the main container), so the join holds at most 189 characters."""
    return shorten_name_with_suffix(component.replace("-", "--"), "-" + volume.replace("-", "--"))


def _volume_entry(entry: Any, index: int, out: Volumes) -> None:
    label = f"volumes[{index}]"
    entry = _object(entry, label)
    reject_unknown_keys(entry, _ENTRY_KEYS, label)
    name = required_string_field(entry, "name", label, f"{label}.name")
    if not is_dns1123_label(name):
        raise FieldError(f'{label}.name: "{name}" is not a valid DNS-1123 label')
    if name in out.kinds:
        raise FieldError(f'{label}.name: volume name "{name}" is used by an earlier volume')
    sources = [k for k in _SOURCES if entry.get(k) is not None]
    if len(sources) != 1:
        raise FieldError(f'volume "{name}": must set exactly one of {", ".join(_SOURCES)}')
    kind = sources[0]
    source = _object(entry[kind], f"{label}.{kind}")
    reject_unknown_keys(source, _SOURCES[kind], f"{label}.{kind}")
    has_mount = entry.get("mountPath") is not None
    has_device = entry.get("devicePath") is not None
    claim = _pvc_source(name, source, f"{label}.pvc") if kind == "pvc" else None
    block = claim is not None and claim.volume_mode == "Block"
    _check_paths(name, kind, block, has_mount, has_device)
    read_only, _ = parse_bool_field(entry, "readOnly", f"{label}.readOnly")
    if block:
        device = {"name": name, "devicePath": required_string_field(entry, "devicePath", label)}
        out.devices.append(device)
        out.block_volumes.add(name)
    else:
        mount = {"name": name, "mountPath": required_string_field(entry, "mountPath", label)}
        if read_only:
            mount["readOnly"] = True
        sub_path, present = parse_string_field(entry, "subPath", f"{label}.subPath")
        if present:
            mount["subPath"] = sub_path
        if any(m["mountPath"] == mount["mountPath"] for m in out.mounts):
            raise FieldError(
                f'{label}.mountPath: "{mount["mountPath"]}" is already mounted by another volume'
            )
        out.mounts.append(mount)
    if claim is not None:
        out.claims.append(claim)
        volume: dict[str, Any] = {"name": name, "persistentVolumeClaim": {"claimName": claim.claim_name}}
    else:
        volume = {"name": name, **_source(kind, name, source, f"{label}.{kind}")}
    out.volumes.append(volume)
    out.kinds[name] = kind


def _check_paths(name: str, kind: str, block: bool, has_mount: bool, has_device: bool) -> None:
    if has_device and kind != "pvc":
        raise FieldError(
            f'volume "{name}": devicePath is only allowed on a pvc volume with volumeMode: Block'
        )
    if has_mount and has_device:
        raise FieldError(f'volume "{name}": exactly one of mountPath and devicePath may be set')
    if block and has_mount:
        raise FieldError(
            f'volume "{name}": a volumeMode: Block claim has no filesystem; set devicePath, not mountPath'
        )
    if has_device and not block:
        raise FieldError(f'volume "{name}": devicePath requires volumeMode: Block')
    if not has_mount and not has_device:
        raise FieldError(
            f'volume "{name}": mountPath is required'
            if not block
            else f'volume "{name}": devicePath is required'
        )


def parse_volumes(value: Any) -> Volumes:
    """The ``volumes`` property. A described claim keeps an empty claimName in its pod volume
    until :func:`assign_claim_names` (role kinds) fills it."""
    out = Volumes()
    if value is None:
        return out
    for index, entry in enumerate(_list(value, "volumes")):
        _volume_entry(entry, index, out)
    return out


def require_claim_names(volumes: Volumes) -> None:
    """The five pod kinds generate no claim: every pvc volume must reference one."""
    for claim in volumes.claims:
        if claim.described:
            raise FieldError(
                f'volume "{claim.volume}": a pvc volume must set claimName to an existing claim; the component '
                "generates none, so declare it with a persistentvolumeclaim component or a pvc trait"
            )


def assign_claim_names(volumes: Volumes, component: str) -> None:
    """Role kinds: name each described claim and point its pod volume at it."""
    for claim in volumes.claims:
        if not claim.described:
            continue
        claim.object_name = claim.object_name or qualified_claim_name(component, claim.volume)
        for volume in volumes.volumes:
            if volume["name"] == claim.volume:
                volume["persistentVolumeClaim"]["claimName"] = claim.object_name


def build_claim(claim: Claim, component: str, namespace: str, default_class: str | None) -> dict[str, Any]:
    """The PersistentVolumeClaim a role kind generates for a described claim."""
    spec: dict[str, Any] = {
        "accessModes": list(claim.access_modes),
        "resources": {"requests": {"storage": claim.size}},
    }
    storage_class = claim.storage_class if claim.storage_class is not None else default_class
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if claim.volume_mode:
        spec["volumeMode"] = claim.volume_mode
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"labels": {"app": component}, "name": claim.object_name, "namespace": namespace},
        "spec": spec,
    }


def non_rwx_claim(volumes: Volumes) -> Claim | None:
    return next((c for c in volumes.claims if not c.shareable), None)


def check_extra_container_devices(volumes: Volumes, container: dict[str, Any], label: str) -> None:
    """A volumeDevices name must be a Block volume; a volumeMounts name must not be one."""
    mount_paths = {m["mountPath"] for m in container.get("volumeMounts", [])}
    seen: set[str] = set()
    for device in container.get("volumeDevices", []):
        if device["name"] not in volumes.block_volumes:
            raise FieldError(
                f'{label}: volumeDevices: "{device["name"]}" is not a volumeMode: Block volume of this component'
            )
        if device["name"] in seen:
            raise FieldError(f'{label}: volumeDevices: "{device["name"]}" is named more than once')
        seen.add(device["name"])
        if device["devicePath"] in mount_paths or ".." in device["devicePath"].split("/"):
            raise FieldError(f'{label}: volumeDevices: devicePath "{device["devicePath"]}" is not usable')
    for mount in container.get("volumeMounts", []):
        if mount["name"] in volumes.block_volumes:
            raise FieldError(
                f'{label}: volumeMounts: "{mount["name"]}" is a volumeMode: Block volume; attach it with volumeDevices'
            )


# ---------------------------------------------------------------------------------------------
# pod-level properties

POD_REFUSED = {
    "ephemeralContainers": "ephemeral containers are added to a running pod, never to a template",
    "priority": "admission derives it from priorityClassName",
    "overhead": "admission derives it from runtimeClassName",
    "serviceAccount": "deprecated alias of serviceAccountName; author serviceAccountName",
    "evictionResponders": "alpha upstream, behind the EvictionRequestAPI feature gate",
    "containers": "the main container is the component's own container properties; add others as sidecars",
    "restartPolicyRules": "not a pod field on this kind",
}
_STRING_FIELDS = (
    "priorityClassName",
    "schedulerName",
    "runtimeClassName",
    "hostname",
    "subdomain",
    "nodeName",
)
_BOOL_FIELDS = ("hostNetwork", "hostPID", "hostIPC")
_POINTER_BOOL_FIELDS = (
    "automountServiceAccountToken",
    "shareProcessNamespace",
    "enableServiceLinks",
    "setHostnameAsFQDN",
    "hostUsers",
)
_PASSTHROUGH = (
    "hostAliases",
    "dnsConfig",
    "readinessGates",
    "resourceClaims",
    "schedulingGates",
    "podSecurityContext",
)
_DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")
POD_LEVEL_KEYS = (
    ("serviceAccountName", "nodeSelector", "terminationGracePeriodSeconds", "dnsPolicy", "imagePullSecrets")
    + _STRING_FIELDS
    + _BOOL_FIELDS
    + _POINTER_BOOL_FIELDS
    + _PASSTHROUGH
    + ("podResources", "podActiveDeadlineSeconds", "os", "preemptionPolicy")
)


def refuse_pod_fields(props: dict[str, Any], job: bool = False) -> None:
    for key, reason in POD_REFUSED.items():
        if key in props:
            raise FieldError(f"{key}: not accepted: {reason}")
    if not job:
        if "restartPolicy" in props:
            raise FieldError("restartPolicy: not accepted: apps/v1 pods require restartPolicy Always")
        if "podActiveDeadlineSeconds" in props:
            raise FieldError(
                "podActiveDeadlineSeconds: not accepted: only Job pods may set activeDeadlineSeconds"
            )


def parse_node_selector(value: Any, path: str = "nodeSelector") -> dict[str, str]:
    if value is None:
        return {}
    value = _object(value, path)
    out: dict[str, str] = {}
    for key in sorted(value):
        item = value[key]
        if item is None:
            continue
        if not isinstance(item, str):
            raise FieldError(f'{path}["{key}"]: must be a string, got {go_type_name(item)}')
        if not is_qualified_name(key):
            raise FieldError(f'{path}: key "{key}" is not a valid label key')
        out[key] = item
    return out


def parse_pod_level(props: dict[str, Any], job: bool = False) -> dict[str, Any]:
    """The pod-level properties, as PodSpec fields (only what is authored)."""
    refuse_pod_fields(props, job)
    out: dict[str, Any] = {}
    account, present = parse_string_field(props, "serviceAccountName", "serviceAccountName")
    if present:
        if not is_dns1123_subdomain(account):
            raise FieldError(f'serviceAccountName: "{account}" is not a valid DNS-1123 subdomain')
        out["serviceAccountName"] = account
    selector = parse_node_selector(props.get("nodeSelector"))
    if selector:
        out["nodeSelector"] = selector
    grace, present = parse_int64_field(
        props, "terminationGracePeriodSeconds", "terminationGracePeriodSeconds"
    )
    if present:
        if grace < 0:
            raise FieldError(f"terminationGracePeriodSeconds: must be >= 0, got {grace}")
        out["terminationGracePeriodSeconds"] = grace
    for key in _STRING_FIELDS:
        text, present = parse_string_field(props, key, key)
        if present:
            out[key] = text
    for key in ("hostname", "subdomain"):
        if key in out and not is_dns1123_label(out[key]):
            raise FieldError(f'{key}: "{out[key]}" is not a valid DNS-1123 label')
    for key in _BOOL_FIELDS:
        flag, _ = parse_bool_field(props, key, key)
        if flag:
            out[key] = True
    for key in _POINTER_BOOL_FIELDS:
        flag, present = parse_bool_field(props, key, key)
        if present:
            out[key] = flag
    _read_enum_fields(props, out)
    _read_structured_fields(props, out, job)
    return out


def _read_enum_fields(props: dict[str, Any], out: dict[str, Any]) -> None:
    dns_policy, present = parse_string_field(props, "dnsPolicy", "dnsPolicy")
    if present:
        if dns_policy not in _DNS_POLICIES:
            raise FieldError(
                f'dnsPolicy: invalid value "{dns_policy}", must be one of {", ".join(_DNS_POLICIES)}'
            )
        out["dnsPolicy"] = dns_policy
    preemption, present = parse_string_field(props, "preemptionPolicy", "preemptionPolicy")
    if present:
        if preemption not in ("PreemptLowerPriority", "Never"):
            raise FieldError(
                f'preemptionPolicy: invalid value "{preemption}", must be one of PreemptLowerPriority, Never'
            )
        out["preemptionPolicy"] = preemption


def _read_structured_fields(props: dict[str, Any], out: dict[str, Any], job: bool) -> None:
    if props.get("imagePullSecrets") is not None:
        secrets = []
        for index, entry in enumerate(_list(props["imagePullSecrets"], "imagePullSecrets")):
            entry = _object(entry, f"imagePullSecrets[{index}]")
            reject_unknown_keys(entry, ("name",), f"imagePullSecrets[{index}]")
            secrets.append({"name": required_string_field(entry, "name", f"imagePullSecrets[{index}]")})
        out["imagePullSecrets"] = secrets
    if props.get("hostAliases") is not None:
        out["hostAliases"] = _host_aliases(props["hostAliases"])
    for key in ("dnsConfig", "readinessGates", "resourceClaims", "schedulingGates"):
        if props.get(key) is not None:
            out[key] = drop_nulls(props[key])
    if props.get("podSecurityContext") is not None:
        context = drop_nulls(_object(props["podSecurityContext"], "podSecurityContext"))
        if "windowsOptions" in context:
            context["windowsOptions"] = parse_windows_options(
                context["windowsOptions"], "podSecurityContext.windowsOptions"
            )
        out["securityContext"] = context
    if props.get("podResources") is not None:
        resources = parse_resources(props["podResources"], "podResources")
        if resources:
            out["resources"] = resources
    if job:
        deadline, present = parse_int64_field(props, "podActiveDeadlineSeconds", "podActiveDeadlineSeconds")
        if present:
            if deadline < 1:
                raise FieldError(f"podActiveDeadlineSeconds: must be >= 1, got {deadline}")
            out["activeDeadlineSeconds"] = deadline
    if props.get("os") is not None:
        os_value = _object(props["os"], "os")
        reject_unknown_keys(os_value, ("name",), "os")
        name = required_string_field(os_value, "name", "os")
        if name not in ("linux", "windows"):
            raise FieldError(f'os.name: invalid value "{name}", must be one of linux, windows')
        out["os"] = {"name": name}


def _host_aliases(value: Any) -> list[dict[str, Any]]:
    aliases = []
    for index, entry in enumerate(_list(value, "hostAliases")):
        label = f"hostAliases[{index}]"
        entry = _object(entry, label)
        reject_unknown_keys(entry, ("ip", "hostnames"), label)
        ip = required_string_field(entry, "ip", label)
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            raise FieldError(f'{label}.ip: "{ip}" is not a valid IP address') from None
        alias: dict[str, Any] = {"ip": ip}
        if entry.get("hostnames") is not None:
            alias["hostnames"] = list(_list(entry["hostnames"], f"{label}.hostnames"))
        aliases.append(alias)
    return aliases


# ---------------------------------------------------------------------------------------------
# raw scheduling

_TOLERATION_KEYS = ("key", "operator", "value", "effect", "tolerationSeconds")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_OPERATORS = ("Exists", "Equal", "Lt", "Gt")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")


def is_label_value(value: str) -> bool:
    return len(value) <= 63 and bool(_LABEL_VALUE.match(value))


def parse_tolerations(value: Any, path: str = "tolerations") -> list[dict[str, Any]]:
    if value is None:
        return []
    out = []
    for index, entry in enumerate(_list(value, path)):
        label = f"{path}[{index}]"
        entry = _object(entry, label)
        reject_unknown_keys(entry, _TOLERATION_KEYS, label)
        out.append(_toleration(entry, label))
    return out


def _toleration(entry: dict[str, Any], label: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    key, has_key = parse_string_field(entry, "key", f"{label}.key")
    operator, has_operator = parse_string_field(entry, "operator", f"{label}.operator")
    value, has_value = parse_string_field(entry, "value", f"{label}.value")
    effect, has_effect = parse_string_field(entry, "effect", f"{label}.effect")
    if has_operator and operator not in _OPERATORS:
        raise FieldError(
            f'{label}.operator: invalid value "{operator}", must be one of {", ".join(_OPERATORS)}'
        )
    effective_operator = operator if has_operator else "Equal"
    if has_key and not is_qualified_name(key):
        raise FieldError(f'{label}.key: "{key}" is not a valid label key')
    if not has_key and effective_operator != "Exists":
        raise FieldError(f"{label}: an empty key requires operator Exists")
    if effective_operator == "Exists" and has_value:
        raise FieldError(f"{label}.value: must be empty when operator is Exists")
    if effective_operator == "Equal" and has_value and not is_label_value(value):
        raise FieldError(f'{label}.value: "{value}" is not a valid label value')
    if has_effect and effect not in _EFFECTS:
        raise FieldError(f'{label}.effect: invalid value "{effect}", must be one of {", ".join(_EFFECTS)}')
    seconds, has_seconds = parse_int64_field(entry, "tolerationSeconds", f"{label}.tolerationSeconds")
    if has_seconds and effect != "NoExecute":
        raise FieldError(f"{label}.tolerationSeconds: only allowed with effect NoExecute")
    for name, text, present in (
        ("key", key, has_key),
        ("operator", operator, has_operator),
        ("value", value, has_value),
        ("effect", effect, has_effect),
    ):
        if present:
            out[name] = text
    if has_seconds:
        out["tolerationSeconds"] = seconds
    return out


def _label_selector(value: Any, path: str) -> dict[str, Any]:
    value = _object(value, path)
    reject_unknown_keys(value, ("matchLabels", "matchExpressions"), path)
    return drop_nulls(value)


def _selector_keys(selector: dict[str, Any]) -> set[str]:
    keys = set((selector.get("matchLabels") or {}).keys())
    keys.update(e.get("key") for e in selector.get("matchExpressions") or [] if isinstance(e, dict))
    return keys


def _label_key_lists(term: dict[str, Any], path: str, keys: tuple[str, ...]) -> None:
    selector = term.get("labelSelector")
    for list_key in keys:
        entries = term.get(list_key)
        if not entries:
            continue
        if selector is None:
            raise FieldError(f"{path}.{list_key}: cannot be set without labelSelector")
        for index, entry in enumerate(_list(entries, f"{path}.{list_key}")):
            if not isinstance(entry, str) or not is_qualified_name(entry):
                raise FieldError(f"{path}.{list_key}[{index}]: {entry!r} is not a valid label key")
            if list_key == "matchLabelKeys" and entry in _selector_keys(selector):
                raise FieldError(
                    f'{path}.matchLabelKeys[{index}]: "{entry}" is already constrained by labelSelector'
                )


def _pod_affinity_term(term: Any, path: str) -> dict[str, Any]:
    term = _object(term, path)
    allowed = (
        "labelSelector",
        "namespaceSelector",
        "namespaces",
        "topologyKey",
        "matchLabelKeys",
        "mismatchLabelKeys",
    )
    reject_unknown_keys(term, allowed, path)
    topology_key = required_string_field(term, "topologyKey", path)
    if not is_qualified_name(topology_key):
        raise FieldError(f'{path}.topologyKey: "{topology_key}" is not a valid label key')
    if term.get("labelSelector") is not None:
        _label_selector(term["labelSelector"], f"{path}.labelSelector")
    for index, namespace in enumerate(term.get("namespaces") or []):
        if not isinstance(namespace, str) or not is_dns1123_label(namespace):
            raise FieldError(f"{path}.namespaces[{index}]: {namespace!r} is not a valid DNS-1123 label")
    _label_key_lists(term, path, ("matchLabelKeys", "mismatchLabelKeys"))
    return drop_nulls(term)


def _pod_affinity(value: Any, path: str) -> dict[str, Any]:
    value = _object(value, path)
    required_key = "requiredDuringSchedulingIgnoredDuringExecution"
    preferred_key = "preferredDuringSchedulingIgnoredDuringExecution"
    reject_unknown_keys(value, (required_key, preferred_key), path)
    out: dict[str, Any] = {}
    if value.get(required_key) is not None:
        terms = _list(value[required_key], f"{path}.{required_key}")
        out[required_key] = [
            _pod_affinity_term(t, f"{path}.{required_key}[{i}]") for i, t in enumerate(terms)
        ]
    if value.get(preferred_key) is not None:
        weighted = []
        for index, entry in enumerate(_list(value[preferred_key], f"{path}.{preferred_key}")):
            label = f"{path}.{preferred_key}[{index}]"
            entry = _object(entry, label)
            reject_unknown_keys(entry, ("weight", "podAffinityTerm"), label)
            weight = _weight(entry, label)
            term = _pod_affinity_term(entry.get("podAffinityTerm") or {}, f"{label}.podAffinityTerm")
            weighted.append({"podAffinityTerm": term, "weight": weight})
        out[preferred_key] = weighted
    return out


def _weight(entry: dict[str, Any], label: str) -> int:
    weight = entry.get("weight")
    if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= 100:
        raise FieldError(f"{label}.weight: must be an integer between 1 and 100")
    return weight


def _node_affinity(value: Any, path: str) -> dict[str, Any]:
    value = _object(value, path)
    required_key = "requiredDuringSchedulingIgnoredDuringExecution"
    preferred_key = "preferredDuringSchedulingIgnoredDuringExecution"
    reject_unknown_keys(value, (required_key, preferred_key), path)
    if value.get(required_key) is not None:
        required = _object(value[required_key], f"{path}.{required_key}")
        reject_unknown_keys(required, ("nodeSelectorTerms",), f"{path}.{required_key}")
    for index, entry in enumerate(value.get(preferred_key) or []):
        label = f"{path}.{preferred_key}[{index}]"
        reject_unknown_keys(_object(entry, label), ("weight", "preference"), label)
        _weight(entry, label)
    return drop_nulls(value)


def parse_raw_affinity(value: Any, path: str = "affinity") -> dict[str, Any]:
    """A corev1.Affinity, every selector and topology key authored."""
    if value is None:
        return {}
    value = _object(value, path)
    reject_unknown_keys(value, ("nodeAffinity", "podAffinity", "podAntiAffinity"), path)
    out: dict[str, Any] = {}
    if value.get("nodeAffinity") is not None:
        out["nodeAffinity"] = _node_affinity(value["nodeAffinity"], f"{path}.nodeAffinity")
    for key in ("podAffinity", "podAntiAffinity"):
        if value.get(key) is not None:
            out[key] = _pod_affinity(value[key], f"{path}.{key}")
    return out


def parse_topology_spread(value: Any, path: str = "topologySpreadConstraints") -> list[dict[str, Any]]:
    if value is None:
        return []
    allowed = (
        "maxSkew",
        "topologyKey",
        "whenUnsatisfiable",
        "labelSelector",
        "minDomains",
        "nodeAffinityPolicy",
        "nodeTaintsPolicy",
        "matchLabelKeys",
    )
    out = []
    for index, entry in enumerate(_list(value, path)):
        label = f"{path}[{index}]"
        entry = _object(entry, label)
        reject_unknown_keys(entry, allowed, label)
        skew = entry.get("maxSkew")
        if isinstance(skew, bool) or not isinstance(skew, int) or skew < 1:
            raise FieldError(f"{label}.maxSkew: must be an integer >= 1")
        topology_key = required_string_field(entry, "topologyKey", label)
        if not is_qualified_name(topology_key):
            raise FieldError(f'{label}.topologyKey: "{topology_key}" is not a valid label key')
        when = entry.get("whenUnsatisfiable")
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            raise FieldError(
                f'{label}.whenUnsatisfiable: invalid value "{when}", must be one of DoNotSchedule, ScheduleAnyway'
            )
        if entry.get("labelSelector") is not None:
            _label_selector(entry["labelSelector"], f"{label}.labelSelector")
        _label_key_lists(entry, label, ("matchLabelKeys",))
        out.append(drop_nulls(entry))
    return out


# ---------------------------------------------------------------------------------------------
# the role kinds' opinions

_SHORTHAND_KEYS = ("enablePodAntiAffinity", "topologyKey", "podAntiAffinityType", "nodeSelector")


def parse_affinity_shorthand(value: Any, component: str) -> dict[str, Any]:
    """webservice/worker's four-key affinity, evaluated to a corev1.Affinity ({} when empty)."""
    if value is None:
        return {}
    value = _object(value, "affinity")
    for key in value:
        if key in ("nodeAffinity", "podAffinity", "podAntiAffinity"):
            raise FieldError(
                f'affinity: "{key}" is not part of the shorthand (enablePodAntiAffinity, topologyKey, '
                "podAntiAffinityType, nodeSelector); author an affinity in the Kubernetes shape on a "
                "deployment, statefulset, daemonset, job or cronjob"
            )
        if key not in _SHORTHAND_KEYS:
            raise FieldError(f'affinity: unrecognized key "{key}"')
    enabled, _ = parse_bool_field(value, "enablePodAntiAffinity", "affinity.enablePodAntiAffinity")
    topology_key, present = parse_string_field(value, "topologyKey", "affinity.topologyKey")
    topology_key = topology_key if present else HOSTNAME_KEY
    kind = value.get("podAntiAffinityType")
    if kind is not None and not isinstance(kind, str):
        raise FieldError(f"affinity.podAntiAffinityType: must be a string, got {go_type_name(kind)}")
    kind = "preferred" if kind is None else kind
    if kind not in ("preferred", "required"):
        raise FieldError(
            f'affinity.podAntiAffinityType: invalid value "{kind}", must be preferred or required'
        )
    selector = _shorthand_node_selector(value.get("nodeSelector"))
    out: dict[str, Any] = {}
    if selector:
        requirements = [{"key": k, "operator": "In", "values": [v]} for k, v in sorted(selector.items())]
        out["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": requirements}]
            }
        }
    if enabled:
        term = {"labelSelector": {"matchLabels": {"app": component}}, "topologyKey": topology_key}
        if kind == "required":
            out["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        else:
            out["podAntiAffinity"] = {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"podAffinityTerm": term, "weight": 100}]
            }
    _check_evaluated(selector, topology_key if enabled else None)
    return out


def _shorthand_node_selector(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    value = _object(value, "affinity.nodeSelector")
    for key in sorted(value):
        if value[key] is not None and not isinstance(value[key], str):
            raise FieldError(
                f'affinity.nodeSelector["{key}"]: must be a string, got {go_type_name(value[key])}'
            )
    return {k: v for k, v in value.items() if v is not None}


def _check_evaluated(selector: dict[str, str], topology_key: str | None) -> None:
    prefix = "affinity: the shorthand evaluates to an affinity the API server would refuse: "
    if topology_key is not None and not is_qualified_name(topology_key):
        raise FieldError(f'{prefix}topologyKey "{topology_key}" is not a valid label key')
    for key, item in sorted(selector.items()):
        if not is_qualified_name(key):
            raise FieldError(f'{prefix}nodeSelector key "{key}" is not a valid label key')
        if not is_label_value(item):
            raise FieldError(f'{prefix}nodeSelector value "{item}" is not a valid label value')


def default_topology_spread(component: str, replicas: int) -> list[dict[str, Any]]:
    """Hostname spread from two replicas, zone spread (best effort) from three."""
    constraints: list[dict[str, Any]] = []
    selector = {"matchLabels": {"app": component}}
    if replicas >= 2:
        constraints.append(
            {
                "labelSelector": copy.deepcopy(selector),
                "maxSkew": 1,
                "topologyKey": HOSTNAME_KEY,
                "whenUnsatisfiable": "DoNotSchedule",
            }
        )
    if replicas >= 3:
        constraints.append(
            {
                "labelSelector": copy.deepcopy(selector),
                "maxSkew": 1,
                "topologyKey": ZONE_KEY,
                "whenUnsatisfiable": "ScheduleAnyway",
            }
        )
    return constraints
