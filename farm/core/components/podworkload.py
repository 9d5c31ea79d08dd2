"""The pod template statefulset, daemonset, job and cronjob build from the shared container and
pod-level surface (seed 002, "Common config", "Main container ports", "Raw scheduling properties").

Each of the four reads the main container from its top-level properties, ``volumes``,
``initContainers`` (and ``sidecars`` on statefulset and daemonset), the pod-level properties and
the raw corev1 ``affinity``, ``tolerations`` and ``topologySpreadConstraints``. The pod carries
``app: <component>`` and the component label, and ``automountServiceAccountToken: false`` unless
authored. A container port's protocol is written (``TCP`` unless authored).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from farm.core.components import containers as c
from farm.core.components import deployment as d
from farm.core.components import podspec as p
from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_int32_field
from farm.core.model import COMPONENT_LABEL, BuildContext, ComponentSpec

RAW_SCHEDULING_KEYS = ("affinity", "tolerations", "topologySpreadConstraints")
METADATA_KEYS = ("labels", "annotations")
POD_TEMPLATE_KEYS = d.CONTAINER_KEYS + p.POD_LEVEL_KEYS + RAW_SCHEDULING_KEYS + ("ports",) + METADATA_KEYS
NO_SIDECAR_KEYS = tuple(k for k in POD_TEMPLATE_KEYS if k != "sidecars")


@dataclass
class PodTemplate:
    """A built pod template and what the kind's own checks read from it."""

    template: dict[str, Any]
    volumes: p.Volumes
    ports: list[dict[str, Any]] = field(default_factory=list)

    @property
    def spec(self) -> dict[str, Any]:
        return self.template["spec"]


def refuse(props: dict[str, Any], reasons: dict[str, str]) -> None:
    """Keys the kind refuses with a reason, rather than as merely unknown."""
    for key in sorted(reasons):
        if key in props:
            raise FieldError(f"{key}: not accepted: {reasons[key]}")


def check_known(props: dict[str, Any], allowed: tuple[str, ...]) -> None:
    d.check_unknown(props, allowed)


def parse_ports(props: dict[str, Any]) -> list[dict[str, Any]]:
    ports = c.parse_ports(props.get("ports"))
    for port in ports:
        port.setdefault("protocol", "TCP")
    return ports


def build_pod_template(
    component: ComponentSpec,
    props: dict[str, Any],
    ctx: BuildContext,
    *,
    job: bool = False,
    sidecars: bool = True,
    restart_policy: str | None = None,
) -> PodTemplate:
    """The pod template of one of the four kinds (``props`` already null-free and key-checked)."""
    name = component.name
    ports = parse_ports(props)
    main = c.parse_main_container(name, props, ports)
    volumes = p.parse_volumes(props.get("volumes"))
    p.require_claim_names(volumes)
    if volumes.mounts:
        main.container["volumeMounts"] = volumes.mounts
    if volumes.devices:
        main.container["volumeDevices"] = volumes.devices
    pod = p.parse_pod_level(props, job=job)
    init_containers = d.extra_containers(props, "initContainers", volumes, ctx)
    extra = d.extra_containers(props, "sidecars", volumes, ctx) if sidecars else []
    d.check_port_names(ports, extra, name)
    container = c.finish_container(main.container, main.resources, ctx.policy)
    d.check_file_key_refs([container, *init_containers, *extra], volumes)
    spec: dict[str, Any] = {"containers": [container, *extra], **pod}
    spec.setdefault("automountServiceAccountToken", False)
    if init_containers:
        spec["initContainers"] = init_containers
    if volumes.volumes:
        spec["volumes"] = volumes.volumes
    if restart_policy is not None:
        spec["restartPolicy"] = restart_policy
    _raw_scheduling(props, spec)
    template = {"metadata": {"labels": {"app": name, COMPONENT_LABEL: name}}, "spec": spec}
    return PodTemplate(template=template, volumes=volumes, ports=ports)


def _raw_scheduling(props: dict[str, Any], spec: dict[str, Any]) -> None:
    affinity = p.parse_raw_affinity(props.get("affinity"))
    if affinity:
        spec["affinity"] = affinity
    tolerations = p.parse_tolerations(props.get("tolerations"))
    if tolerations:
        spec["tolerations"] = tolerations
    spread = p.parse_topology_spread(props.get("topologySpreadConstraints"))
    if spread:
        spec["topologySpreadConstraints"] = spread


def workload_metadata(
    name: str, object_name: str, ctx: BuildContext, props: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The workload object's metadata: ``app: <component>`` beside the authored ``labels``, and the
    authored ``annotations`` (the pod template takes neither)."""
    props = props or {}
    labels = {**_string_map(props, "labels"), "app": name}
    metadata: dict[str, Any] = {"labels": labels, "name": object_name, "namespace": ctx.namespace}
    annotations = _string_map(props, "annotations")
    if annotations:
        metadata["annotations"] = annotations
    return metadata


def _string_map(props: dict[str, Any], key: str) -> dict[str, str]:
    value = props.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FieldError(f"{key}: must be an object, got {go_type_name(value)}")
    out = {}
    for name, item in value.items():
        if not isinstance(item, str):
            raise FieldError(f"{key}.{name}: must be a string, got {go_type_name(item)}")
        out[str(name)] = item
    return out


def non_negative_int32(props: dict[str, Any], key: str, out: dict[str, Any]) -> None:
    """An optional ``int >= 0`` spec field, written only when authored."""
    value, present = parse_int32_field(props, key, key)
    if present:
        if value < 0:
            raise FieldError(f"{key}: must be >= 0, got {value}")
        out[key] = value
