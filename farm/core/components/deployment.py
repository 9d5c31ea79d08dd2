"""The ``deployment`` component and the Deployment builder webservice and worker share (seed 002,
"Deployment-level properties", "Raw scheduling properties", "Non-RWX volumes").

:func:`build_workload` parses the shared container, pod-level and DeploymentSpec-level surface
into an apps/v1 Deployment; a :class:`Role` carries what the calling kind adds (its port, its
scheduling, its service account, the claims it generates)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from farm.core.components import containers as c
from farm.core.components import podspec as p
from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_bool_field, parse_int32_field, parse_object_field
from farm.core.model import COMPONENT_LABEL, BuildContext, ComponentSpec, Generated
from farm.core.names import is_dns1123_subdomain
from farm.core.policy import check_container, check_replicas
from farm.core.registry import ComponentType

CONTAINER_KEYS = (
    "image",
    "command",
    "args",
    "env",
    "envFrom",
    "resources",
    "probes",
    "lifecycle",
    "securityContext",
    "workingDir",
    "volumes",
    "initContainers",
    "sidecars",
) + c.CONTAINER_FIELD_KEYS
DEPLOYMENT_SPEC_KEYS = (
    "replicas",
    "strategy",
    "minReadySeconds",
    "revisionHistoryLimit",
    "paused",
    "progressDeadlineSeconds",
)
SHARED_KEYS = CONTAINER_KEYS + p.POD_LEVEL_KEYS + DEPLOYMENT_SPEC_KEYS
RAW_SCHEDULING_KEYS = ("affinity", "tolerations", "topologySpreadConstraints")
DEPLOYMENT_KEYS = SHARED_KEYS + RAW_SCHEDULING_KEYS + ("ports",)


@dataclass
class Role:
    """What the calling kind contributes to the Deployment it builds."""

    object_name: str
    ports: list[dict[str, Any]] = field(default_factory=list)
    affinity: dict[str, Any] = field(default_factory=dict)
    tolerations: list[dict[str, Any]] = field(default_factory=list)
    topology_spread: list[dict[str, Any]] | None = None  # None: use the authored raw constraints
    default_spread: bool = False  # the role kinds' spread constraints from the replica count
    service_account: str = ""
    generates_claims: bool = False


@dataclass
class Workload:
    deployment: dict[str, Any]
    volumes: p.Volumes
    replicas: int


def check_unknown(props: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for key in sorted(props):
        if key in p.POD_REFUSED or key in ("restartPolicy",):
            continue  # refused with a reason by the pod-level parser
        if key not in allowed:
            raise FieldError(f'unknown property "{key}"')


def parse_replicas(props: dict[str, Any], ctx: BuildContext) -> int:
    value = props.get("replicas")
    if value is None:
        replicas = ctx.policy.default_replicas if ctx.policy.default_replicas is not None else 1
    else:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise FieldError(f"replicas: must be an integer, got {go_type_name(value)}")
        replicas, _ = parse_int32_field(props, "replicas", "replicas")
        if replicas < 0:
            raise FieldError(f"replicas: must be >= 0, got {replicas}")
    check_replicas(ctx.policy, replicas, "replicas")
    return replicas


def _int_or_percent(value: Any, path: str) -> int | str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FieldError(f"{path}: must be an integer or a percentage, got {go_type_name(value)}")
    if isinstance(value, str):
        if not value.endswith("%") or not value[:-1].isdigit():
            raise FieldError(f'{path}: "{value}" must be an integer or a percentage')
    elif value < 0:
        raise FieldError(f"{path}: must be >= 0, got {value}")
    return value


def parse_strategy(props: dict[str, Any]) -> dict[str, Any]:
    strategy, present = parse_object_field(props, "strategy", "strategy")
    if not present:
        return {}
    c.reject_unknown_keys(strategy, ("type", "rollingUpdate"), "strategy")
    kind = strategy.get("type")
    if kind is not None and kind not in ("Recreate", "RollingUpdate"):
        raise FieldError(f'strategy.type: invalid value "{kind}", must be one of Recreate, RollingUpdate')
    out: dict[str, Any] = {}
    if kind:
        out["type"] = kind
    rolling = strategy.get("rollingUpdate")
    if rolling is not None:
        if kind == "Recreate":
            raise FieldError("strategy.rollingUpdate: may not be set when strategy.type is Recreate")
        rolling = c._object(rolling, "strategy.rollingUpdate")
        c.reject_unknown_keys(rolling, ("maxSurge", "maxUnavailable"), "strategy.rollingUpdate")
        out["rollingUpdate"] = {
            k: _int_or_percent(rolling[k], f"strategy.rollingUpdate.{k}")
            for k in sorted(rolling)
            if rolling[k] is not None
        }
        if all(rolling.get(k) in (0, "0%") for k in ("maxSurge", "maxUnavailable")):
            raise FieldError("strategy.rollingUpdate: maxSurge and maxUnavailable may not both be zero")
    return out


def _deployment_spec_fields(props: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"):
        value, present = parse_int32_field(props, key, key)
        if present:
            if value < 0:
                raise FieldError(f"{key}: must be >= 0, got {value}")
            out[key] = value
    paused, _ = parse_bool_field(props, "paused", "paused")
    if paused:
        out["paused"] = True
    deadline = out.get("progressDeadlineSeconds")
    if deadline is not None and deadline <= out.get("minReadySeconds", 0):
        raise FieldError("progressDeadlineSeconds: must be greater than minReadySeconds")
    return out


def apply_non_rwx(volumes: p.Volumes, replicas: int, strategy: dict[str, Any]) -> dict[str, Any]:
    """A claim whose access-mode set is not shareable allows one replica and forces Recreate."""
    claim = p.non_rwx_claim(volumes)
    if claim is None:
        return strategy
    if replicas > 1:
        raise FieldError(
            f'replicas: {replicas}: volume "{claim.volume}": a non-RWX PVC allows at most one replica'
        )
    if strategy.get("type") == "RollingUpdate":
        raise FieldError(
            f'strategy.type: RollingUpdate: volume "{claim.volume}": a non-RWX PVC requires strategy Recreate'
        )
    return {"type": "Recreate"}


def extra_containers(
    props: dict[str, Any], key: str, volumes: p.Volumes, ctx: BuildContext
) -> list[dict[str, Any]]:
    out = []
    for entry in c.parse_extra_containers(props.get(key), key):
        p.check_extra_container_devices(volumes, entry.container, entry.label)
        # Checked here so the refusal names the authored list position, not the pod position.
        check_container(ctx.policy, entry.container, entry.label)
        out.append(c.finish_container(entry.container, entry.resources, ctx.policy, f"{entry.label}: "))
    return out


def check_port_names(main: list[dict[str, Any]], sidecars: list[dict[str, Any]], component: str) -> None:
    owners: dict[str, str] = {p_["name"]: component for p_ in main if "name" in p_}
    for sidecar in sidecars:
        for port in sidecar.get("ports", []):
            name = port.get("name")
            if name and name in owners:
                raise FieldError(
                    f'port name "{name}" is declared by container "{owners[name]}" and container "{sidecar["name"]}"; '
                    "port names must be unique across the pod"
                )
            if name:
                owners[name] = sidecar["name"]


def check_file_key_refs(containers: list[dict[str, Any]], volumes: p.Volumes) -> None:
    for container in containers:
        for env in container.get("env", []):
            ref = (env.get("valueFrom") or {}).get("fileKeyRef")
            if ref and volumes.kinds.get(ref["volumeName"]) != "emptyDir":
                raise FieldError(
                    f'env "{env["name"]}": fileKeyRef.volumeName "{ref["volumeName"]}" must name an emptyDir volume of this component'
                )


def build_workload(
    component: ComponentSpec, props: dict[str, Any], ctx: BuildContext, role: Role
) -> Workload:
    """The Deployment for a deployment, webservice or worker component."""
    name = component.name
    main = c.parse_main_container(name, props, role.ports)
    volumes = p.parse_volumes(props.get("volumes"))
    if role.generates_claims:
        p.assign_claim_names(volumes, name)
    else:
        p.require_claim_names(volumes)
    if volumes.mounts:
        main.container["volumeMounts"] = volumes.mounts
    if volumes.devices:
        main.container["volumeDevices"] = volumes.devices
    pod = p.parse_pod_level(props)
    init_containers = extra_containers(props, "initContainers", volumes, ctx)
    sidecars = extra_containers(props, "sidecars", volumes, ctx)
    check_port_names(role.ports, sidecars, name)
    replicas = parse_replicas(props, ctx)
    strategy = apply_non_rwx(volumes, replicas, parse_strategy(props))
    container = c.finish_container(main.container, main.resources, ctx.policy)
    check_file_key_refs([container, *init_containers, *sidecars], volumes)
    pod_spec: dict[str, Any] = {"containers": [container, *sidecars], **pod}
    if init_containers:
        pod_spec["initContainers"] = init_containers
    if volumes.volumes:
        pod_spec["volumes"] = volumes.volumes
    account = role.service_account or pod.get("serviceAccountName", "")
    if account:
        pod_spec["serviceAccountName"] = account
    if role.affinity:
        pod_spec["affinity"] = role.affinity
    if role.tolerations:
        pod_spec["tolerations"] = role.tolerations
    spread = (
        p.default_topology_spread(name, replicas) if role.default_spread else (role.topology_spread or [])
    )
    if spread:
        pod_spec["topologySpreadConstraints"] = spread
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "strategy": strategy,
        "template": {"metadata": {"labels": {"app": name, COMPONENT_LABEL: name}}, "spec": pod_spec},
        **_deployment_spec_fields(props),
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": {"app": name}, "name": role.object_name, "namespace": ctx.namespace},
        "spec": spec,
    }
    return Workload(deployment=deployment, volumes=volumes, replicas=replicas)


def object_name(props: dict[str, Any], key: str, default: str) -> str:
    value = props.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise FieldError(f"{key}: must be a string, got {go_type_name(value)}")
    if not is_dns1123_subdomain(value):
        raise FieldError(f'{key} "{value}": not a valid DNS-1123 subdomain')
    return value


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = p.drop_nulls(component.properties)
    check_unknown(props, DEPLOYMENT_KEYS)
    role = Role(
        object_name=component.name,
        ports=c.parse_ports(props.get("ports")),
        affinity=p.parse_raw_affinity(props.get("affinity")),
        tolerations=p.parse_tolerations(props.get("tolerations")),
        topology_spread=p.parse_topology_spread(props.get("topologySpreadConstraints")),
    )
    workload = build_workload(component, props, ctx, role)
    claim = p.non_rwx_claim(workload.volumes)
    facts: dict[str, Any] = {"replicas": workload.replicas}
    if claim is not None:
        facts["non_rwx_claim"] = claim.volume
    return Generated(objects=[workload.deployment], workload=workload.deployment, facts=facts)


HANDLER = ComponentType(name="deployment", build=build, emits=("apps/v1 Deployment",))
