"""The role kinds ``webservice`` and ``worker`` (seed 002, "webservice / worker").

Both lower into a same-name sibling group — a Deployment, a Service (webservice only) and a
ServiceAccount (unless ``serviceAccountName`` is authored) — plus one claim per pvc volume that
describes its claim. The output keeps the handler's order: Deployment, Service, ServiceAccount,
claims. Both keep launcher's opinions: the four-key affinity shorthand and the default
topology-spread constraints (``topologySpread: false`` turns them off).
"""

from __future__ import annotations

from typing import Any

from farm.core.components import podspec as p
from farm.core.components.deployment import SHARED_KEYS, Role, build_workload, check_unknown, object_name
from farm.core.components.service import (
    build_service,
    check_service_name,
    http_service_spec,
    is_dns1035_label,
)
from farm.core.components.serviceaccount import build_service_account
from farm.core.errors import FieldError
from farm.core.fields import parse_bool_field, parse_int32_field
from farm.core.model import BuildContext, ComponentSpec, Generated, NameClaim
from farm.core.registry import ComponentType

ROLE_KEYS = SHARED_KEYS + (
    "affinity",
    "tolerations",
    "topologySpread",
    "deploymentObjectName",
    "serviceAccountObjectName",
)
WEBSERVICE_KEYS = ROLE_KEYS + ("port", "serviceObjectName")
DEFAULT_PORT = 80


def _account_name(props: dict[str, Any], component: str) -> str | None:
    """The account the role generates, or None when the component runs as an authored one."""
    if props.get("serviceAccountName") is not None:
        if props.get("serviceAccountObjectName") is not None:
            raise FieldError(
                "serviceAccountObjectName and serviceAccountName are both set: serviceAccountName names an "
                "existing account, so the component generates none to name"
            )
        return None
    return object_name(props, "serviceAccountObjectName", component)


def _web_port(props: dict[str, Any]) -> int:
    port, present = parse_int32_field(props, "port", "port")
    if not present:
        return DEFAULT_PORT
    if not 1 <= port <= 65535:
        raise FieldError(f"port: must be between 1 and 65535, got {port}")
    return port


def _build_role(component: ComponentSpec, ctx: BuildContext, web: bool) -> Generated:
    props = component.properties
    name = component.name
    if web:
        check_service_name(name)
    check_unknown(props, WEBSERVICE_KEYS if web else ROLE_KEYS)
    port = _web_port(props) if web else None
    spread, present = parse_bool_field(props, "topologySpread", "topologySpread")
    account = _account_name(props, name)
    service_object = None
    if web:
        service_object = props.get("serviceObjectName") or name
        if not isinstance(service_object, str) or not is_dns1035_label(service_object):
            raise FieldError(
                f'serviceObjectName "{service_object}" cannot be the name for role "workload-service": '
                "not a valid DNS-1035 label"
            )
    role = Role(
        object_name=object_name(props, "deploymentObjectName", name),
        ports=[{"containerPort": port, "name": "http", "protocol": "TCP"}] if web else [],
        tolerations=p.parse_tolerations(props.get("tolerations")),
        default_spread=spread or not present,
        service_account=account or "",
        generates_claims=True,
    )
    workload = build_workload(component, props, ctx, role)
    # The shorthand is validated last, as the role kinds do, after every other property.
    affinity = p.parse_affinity_shorthand(props.get("affinity"), name)
    if affinity:
        workload.deployment["spec"]["template"]["spec"]["affinity"] = affinity
    objects = [workload.deployment]
    claims = [_claim(workload.deployment, "workload-deployment", props, "deploymentObjectName")]
    if web and port is not None and service_object is not None:
        service = build_service(service_object, name, ctx.namespace, http_service_spec(name, port))
        objects.append(service)
        claims.append(_claim(service, "workload-service", props, "serviceObjectName"))
    if account is not None:
        account_object = build_service_account(account, name, ctx.namespace, False, [])
        objects.append(account_object)
        claims.append(_claim(account_object, "workload-serviceaccount", props, "serviceAccountObjectName"))
    default_class = (ctx.capabilities.get("pvc") or {}).get("storageClassName")
    for claim in workload.volumes.claims:
        if claim.described:
            pvc = p.build_claim(claim, name, ctx.namespace, default_class)
            objects.append(pvc)
            set_by = f"properties.{claim.named_by}" if claim.named_by else None
            claims.append(NameClaim(pvc, "workload-volume-claim", set_by))
    facts: dict[str, Any] = {"replicas": workload.replicas}
    non_rwx = p.non_rwx_claim(workload.volumes)
    if non_rwx is not None:
        facts["non_rwx_claim"] = non_rwx.volume
    return Generated(
        objects=objects,
        workload=workload.deployment,
        service_name=service_object if web else None,
        service_port=port,
        service_port_name="http" if web else None,
        facts=facts,
        claims=claims,
    )


def _claim(obj: dict[str, Any], role: str, props: dict[str, Any], key: str) -> NameClaim:
    """The name role of one member's object: set by its property, else the component name."""
    return NameClaim(obj, role, f"properties.{key}" if props.get(key) is not None else None)


def build_webservice(component: ComponentSpec, ctx: BuildContext) -> Generated:
    return _build_role(component, ctx, web=True)


def build_worker(component: ComponentSpec, ctx: BuildContext) -> Generated:
    return _build_role(component, ctx, web=False)


WEBSERVICE = ComponentType(
    name="webservice",
    build=build_webservice,
    emits=("apps/v1 Deployment", "v1 Service", "v1 ServiceAccount", "v1 PersistentVolumeClaim"),
    decode="lowering rule: deployment + service + serviceaccount members",
    lowering_rule=True,
)
WORKER = ComponentType(
    name="worker",
    build=build_worker,
    emits=("apps/v1 Deployment", "v1 ServiceAccount", "v1 PersistentVolumeClaim"),
    decode="lowering rule: deployment + serviceaccount members",
    lowering_rule=True,
)
