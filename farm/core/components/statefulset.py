"""The ``statefulset`` component: an apps/v1 StatefulSet from the shared container and pod surface,
``serviceName``, ``volumeClaimTemplates`` and the StatefulSetSpec-level fields (seed 002,
statefulset entry). It emits no Service: the governing Service is authored as a ``service``
component (``clusterIP: None``, selecting ``app: <component>``) and named by ``serviceName``."""

from __future__ import annotations

import re
from typing import Any

from farm.core.components import deployment as d
from farm.core.components import podspec as p
from farm.core.components import podworkload as w
from farm.core.components.containers import reject_unknown_keys
from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_object_field, parse_string_field
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.names import is_dns1123_label
from farm.core.policy import check_storage_maximum
from farm.core.quantity import QuantityError, canonical_quantity, parse_quantity
from farm.core.registry import ComponentType

STATEFULSET_SPEC_KEYS = (
    "replicas",
    "serviceName",
    "volumeClaimTemplates",
    "updateStrategy",
    "podManagementPolicy",
    "minReadySeconds",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "ordinals",
)
STATEFULSET_KEYS = w.POD_TEMPLATE_KEYS + STATEFULSET_SPEC_KEYS
REFUSED = {
    "selector": "the selector is builder-managed (app: <component>) and immutable once created",
    "template": "the pod template is projected from the component's own container and pod-level properties",
}
_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_PERCENT = re.compile(r"^[0-9]+%\Z")
_CLAIM_KEYS = (
    "name",
    "mountPath",
    "devicePath",
    "size",
    "storageClass",
    "accessModes",
    "volumeMode",
    "selector",
    "dataSource",
    "dataSourceRef",
    "volumeAttributesClassName",
)


def parse_service_name(props: dict[str, Any]) -> str:
    name, present = parse_string_field(props, "serviceName", "serviceName")
    if present and (len(name) > 63 or not _DNS1035.match(name)):
        raise FieldError(f'serviceName: "{name}" is not a valid Service name, which must be a DNS-1035 label')
    return name


# --- volumeClaimTemplates --------------------------------------------------------------------------


def _claim_size(entry: dict[str, Any], path: str, ctx: BuildContext) -> str:
    value = entry.get("size")
    if value is None:
        raise FieldError(f"{path}: size is required")
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise FieldError(f"{path}.size: must be a string, got {go_type_name(value)}")
    try:
        size = canonical_quantity(value)
        positive = parse_quantity(value) > 0
    except QuantityError as exc:
        raise FieldError(f"{path}.size: {exc}") from None
    if not positive:
        raise FieldError(f'{path}.size: "{value}" must be a positive quantity')
    check_storage_maximum(ctx.policy, size, path)
    return size


def _claim_template(entry: Any, index: int, ctx: BuildContext) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """One claim template: the PVC template, the container mount (or device) and whether it is Block."""
    path = f"volumeClaimTemplates[{index}]"
    if not isinstance(entry, dict):
        raise FieldError(f"{path}: must be an object, got {go_type_name(entry)}")
    reject_unknown_keys(entry, _CLAIM_KEYS, path)
    name, present = parse_string_field(entry, "name", f"{path}.name")
    if not present:
        raise FieldError(f"{path}: name is required")
    if not is_dns1123_label(name):
        raise FieldError(f'{path}.name: "{name}" is not a valid volume name (DNS-1123 label)')
    spec: dict[str, Any] = {
        "accessModes": p._access_modes(entry, f"{path}.accessModes"),
        "resources": {"requests": {"storage": _claim_size(entry, path, ctx)}},
    }
    storage_class, present = parse_string_field(entry, "storageClass", f"{path}.storageClass")
    if present:
        spec["storageClassName"] = storage_class
    mode = entry.get("volumeMode")
    if mode is not None:
        if mode not in ("Filesystem", "Block"):
            raise FieldError(f'{path}.volumeMode: invalid value "{mode}", must be one of Filesystem, Block')
        spec["volumeMode"] = mode
    for key in ("selector", "dataSource", "dataSourceRef"):
        value, present = parse_object_field(entry, key, f"{path}.{key}")
        if present:
            spec[key] = value
    attributes, present = parse_string_field(
        entry, "volumeAttributesClassName", f"{path}.volumeAttributesClassName"
    )
    if present:
        spec["volumeAttributesClassName"] = attributes
    block = mode == "Block"
    mount = _claim_mount(entry, name, block, path)
    template = {"metadata": {"name": name}, "spec": spec, "status": {}}
    return template, mount, block


def _claim_mount(entry: dict[str, Any], name: str, block: bool, path: str) -> dict[str, Any]:
    """Exactly one of mountPath and devicePath; devicePath only for a Block claim."""
    mount_path, has_mount = parse_string_field(entry, "mountPath", f"{path}.mountPath")
    device_path, has_device = parse_string_field(entry, "devicePath", f"{path}.devicePath")
    if has_mount == has_device:
        raise FieldError(f"{path}: exactly one of mountPath and devicePath is required")
    if block and has_mount:
        raise FieldError(
            f"{path}: a volumeMode: Block claim has no filesystem; set devicePath, not mountPath"
        )
    if has_device and not block:
        raise FieldError(f"{path}: devicePath requires volumeMode: Block")
    if has_device:
        return {"name": name, "devicePath": device_path}
    return {"name": name, "mountPath": mount_path}


def _add_claim_templates(
    props: dict[str, Any], pod: w.PodTemplate, ctx: BuildContext
) -> list[dict[str, Any]]:
    entries = props.get("volumeClaimTemplates")
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise FieldError(f"volumeClaimTemplates: must be a list, got {go_type_name(entries)}")
    container = pod.spec["containers"][0]
    taken = {volume["name"] for volume in pod.spec.get("volumes", [])}
    templates = []
    for index, entry in enumerate(entries):
        template, mount, block = _claim_template(entry, index, ctx)
        if mount["name"] in taken:
            raise FieldError(
                f'volumeClaimTemplates[{index}].name: "{mount["name"]}" is already the name of a volume of this component'
            )
        taken.add(mount["name"])
        container.setdefault("volumeDevices" if block else "volumeMounts", []).append(mount)
        templates.append(template)
    return templates


# --- StatefulSetSpec-level fields ------------------------------------------------------------------


def _enum(value: Any, path: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str):
        raise FieldError(f"{path}: must be a string, got {go_type_name(value)}")
    if value not in allowed:
        raise FieldError(f'{path}: invalid value "{value}", must be one of {", ".join(allowed)}')
    return value


def parse_update_strategy(props: dict[str, Any]) -> dict[str, Any]:
    strategy, present = parse_object_field(props, "updateStrategy", "updateStrategy")
    if not present:
        return {}
    reject_unknown_keys(strategy, ("type", "rollingUpdate"), "updateStrategy")
    out: dict[str, Any] = {}
    kind = strategy.get("type")
    if kind is not None:
        out["type"] = _enum(kind, "updateStrategy.type", ("RollingUpdate", "OnDelete"))
    rolling = strategy.get("rollingUpdate")
    if rolling is None:
        return out
    if kind == "OnDelete":
        raise FieldError("updateStrategy.rollingUpdate: only accepted under type RollingUpdate")
    if not isinstance(rolling, dict):
        raise FieldError(f"updateStrategy.rollingUpdate: must be an object, got {go_type_name(rolling)}")
    reject_unknown_keys(rolling, ("partition", "maxUnavailable"), "updateStrategy.rollingUpdate")
    parsed: dict[str, Any] = {}
    w.non_negative_int32({"partition": rolling.get("partition")}, "partition", parsed)
    unavailable = rolling.get("maxUnavailable")
    if unavailable is not None:
        parsed["maxUnavailable"] = _max_unavailable(unavailable)
    out["rollingUpdate"] = parsed
    return out


def _max_unavailable(value: Any) -> int | str:
    path = "updateStrategy.rollingUpdate.maxUnavailable"
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FieldError(f"{path}: must be an integer or a percentage, got {go_type_name(value)}")
    if isinstance(value, str):
        if not _PERCENT.match(value) or int(value[:-1]) > 100:
            raise FieldError(f'{path}: "{value}" must be a positive integer or a percentage of at most 100%')
        number = int(value[:-1])
    else:
        number = value
    if number < 1:
        raise FieldError(f"{path}: cannot be 0")
    return value


def _spec_fields(props: dict[str, Any], spec: dict[str, Any]) -> None:
    policy = props.get("podManagementPolicy")
    if policy is not None:
        spec["podManagementPolicy"] = _enum(policy, "podManagementPolicy", ("OrderedReady", "Parallel"))
    w.non_negative_int32(props, "minReadySeconds", spec)
    w.non_negative_int32(props, "revisionHistoryLimit", spec)
    retention, present = parse_object_field(
        props, "persistentVolumeClaimRetentionPolicy", "persistentVolumeClaimRetentionPolicy"
    )
    if present:
        reject_unknown_keys(retention, ("whenDeleted", "whenScaled"), "persistentVolumeClaimRetentionPolicy")
        spec["persistentVolumeClaimRetentionPolicy"] = {
            key: _enum(retention[key], f"persistentVolumeClaimRetentionPolicy.{key}", ("Retain", "Delete"))
            for key in ("whenDeleted", "whenScaled")
            if retention.get(key) is not None
        }
    ordinals, present = parse_object_field(props, "ordinals", "ordinals")
    if present:
        reject_unknown_keys(ordinals, ("start",), "ordinals")
        parsed: dict[str, Any] = {}
        w.non_negative_int32({"ordinals.start": ordinals.get("start")}, "ordinals.start", parsed)
        spec["ordinals"] = {"start": parsed["ordinals.start"]} if parsed else {}


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = p.drop_nulls(component.properties)
    w.refuse(props, REFUSED)
    w.check_known(props, STATEFULSET_KEYS)
    service_name = parse_service_name(props)
    pod = w.build_pod_template(component, props, ctx)
    claim_templates = _add_claim_templates(props, pod, ctx)
    spec: dict[str, Any] = {
        "replicas": d.parse_replicas(props, ctx),
        "selector": {"matchLabels": {"app": component.name}},
        "serviceName": service_name,
        "template": pod.template,
        "updateStrategy": parse_update_strategy(props),
    }
    if claim_templates:
        spec["volumeClaimTemplates"] = claim_templates
    _spec_fields(props, spec)
    statefulset = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": w.workload_metadata(component.name, component.name, ctx, props),
        "spec": spec,
    }
    return Generated(objects=[statefulset], workload=statefulset, facts={"replicas": spec["replicas"]})


HANDLER = ComponentType(name="statefulset", build=build, emits=("apps/v1 StatefulSet",))
