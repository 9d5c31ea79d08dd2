"""The pod family of kind components (seed 002: pod, replicaset, replicationcontroller,
podtemplate; go-kure/launcher#790): strict projections of a v1 Pod, an apps/v1 ReplicaSet, a v1
ReplicationController and a v1 PodTemplate.

Each decodes its properties strictly into the upstream type (the kind engine), then holds what the
pod kind refuses of a pod spec: ephemeralContainers, priority and overhead; an unauthored
containers; the image rule on every container and image volume; the defaulted zeros (in the field
table); a hostPort of 0 under hostNetwork; defective label-selector match expressions. pod,
replicaset and replicationcontroller add ``app: <component>`` (to the Pod, to the template);
podtemplate adds nothing. The policy's pod-template check runs in the transform over every object.
"""

from __future__ import annotations

from typing import Any

from farm.core.components.containers import validate_image
from farm.core.errors import FieldError, PolicyRefusal
from farm.core.fields import go_type_name
from farm.core.kinds.corev1_pod import LABEL_SELECTOR_STRUCT, POD_SPEC, POD_TEMPLATE_SPEC
from farm.core.kinds.engine import (
    INT32,
    KUBERNETES,
    STRING,
    F,
    Struct,
    authored_properties,
    decode_struct,
    map_of,
    object_metadata,
    required_error,
)
from farm.core.kinds.meta import check_match_expressions
from farm.core.model import COMPONENT_LABEL, BuildContext, ComponentSpec, Generated
from farm.core.names import component_label_value
from farm.core.policy import REFUSAL_REPLICA_MAXIMUM
from farm.core.registry import ComponentType

APP_LABEL = "app"
SERVICE_ACCOUNT_FACT = "service_account_name"  # read by the rbac trait

_NOT_AUTHORABLE = {
    "ephemeralContainers": (
        "not authorable: ephemeral containers are added to a running pod through its "
        "ephemeralcontainers subresource, never in a pod spec a document writes"
    ),
    "priority": (
        "not authorable: the Priority admission controller derives it from priorityClassName and "
        "rejects a differing value; set priorityClassName"
    ),
    "overhead": (
        "not authorable: the RuntimeClass admission controller derives it from runtimeClassName and "
        "rejects a differing value; set runtimeClassName"
    ),
}

REPLICA_SET_SPEC = Struct(
    "ReplicaSetSpec",
    [
        F("replicas", INT32, "omit ptr"),
        F("minReadySeconds", INT32, "omit"),
        F("selector", LABEL_SELECTOR_STRUCT, "ptr"),
        F("template", POD_TEMPLATE_SPEC, "omit"),
    ],
)

REPLICATION_CONTROLLER_SPEC = Struct(
    "ReplicationControllerSpec",
    [
        F("replicas", INT32, "omit ptr"),
        F("minReadySeconds", INT32, "omit"),
        F("selector", map_of(STRING), "omit"),
        F("template", POD_TEMPLATE_SPEC, "omit ptr"),
    ],
)

POD_TEMPLATE_BODY = Struct("PodTemplate", [F("template", POD_TEMPLATE_SPEC, "omit")])


# --- the pod-spec checks every kind of the family shares -------------------------------------------


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _authored_key(obj: dict[str, Any], name: str) -> str | None:
    """The authored spelling of a field (keys match case-insensitively), if authored non-null."""
    for key, value in obj.items():
        if str(key).lower() == name.lower() and value is not None:
            return str(key)
    return None


def refuse_not_authorable(authored_spec: dict[str, Any], path: str) -> None:
    for name, reason in _NOT_AUTHORABLE.items():
        for key in authored_spec:
            if str(key).lower() == name.lower():
                raise FieldError(f"{_join(path, name)}: {reason}")


def check_pod_spec(spec: dict[str, Any], path: str) -> None:
    """The rules the pod kind holds on a decoded pod spec, named by path (``template.spec...``)."""
    for list_key in ("initContainers", "containers"):
        for index, container in enumerate(spec.get(list_key) or []):
            where = f'{_join(path, list_key)}[{index}] "{container["name"]}"'
            validate_image(container.get("image", ""), where)
    for index, volume in enumerate(spec.get("volumes") or []):
        reference = (volume.get("image") or {}).get("reference")
        if reference:
            validate_image(reference, f'{_join(path, "volumes")}[{index}] "{volume["name"]}" image.reference')
    _check_selectors(spec, path)


def _check_selectors(spec: dict[str, Any], path: str) -> None:
    affinity = spec.get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind) or {}
        required = terms.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        preferred = terms.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        base = _join(path, f"affinity.{kind}")
        for i, term in enumerate(required):
            _check_term(term, f"{base}.requiredDuringSchedulingIgnoredDuringExecution[{i}]")
        for i, weighted in enumerate(preferred):
            term = weighted.get("podAffinityTerm") or {}
            _check_term(term, f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}].podAffinityTerm")
    for i, constraint in enumerate(spec.get("topologySpreadConstraints") or []):
        where = f"{_join(path, 'topologySpreadConstraints')}[{i}].labelSelector"
        check_match_expressions(constraint.get("labelSelector"), where)
    for i, volume in enumerate(spec.get("volumes") or []):
        where = f"{_join(path, 'volumes')}[{i}]"
        for j, source in enumerate((volume.get("projected") or {}).get("sources") or []):
            bundle = source.get("clusterTrustBundle") or {}
            check_match_expressions(
                bundle.get("labelSelector"),
                f"{where}.projected.sources[{j}].clusterTrustBundle.labelSelector",
            )
        claim = ((volume.get("ephemeral") or {}).get("volumeClaimTemplate") or {}).get("spec") or {}
        check_match_expressions(claim.get("selector"), f"{where}.ephemeral.volumeClaimTemplate.spec.selector")


def _check_term(term: dict[str, Any], path: str) -> None:
    check_match_expressions(term.get("labelSelector"), f"{path}.labelSelector")
    check_match_expressions(term.get("namespaceSelector"), f"{path}.namespaceSelector")


def _authored_list(obj: dict[str, Any], name: str) -> list[Any]:
    """The list authored under ``name`` (any spelling); [] when absent or not a list, which the
    strict decode then refuses with its own words."""
    key = _authored_key(obj, name)
    value = obj.get(key) if key else None
    return value if isinstance(value, list) else []


def _host_port_zero(authored_spec: Any, path: str) -> None:
    """A hostPort authored as 0 under hostNetwork: the API server sets it to the containerPort."""
    if not isinstance(authored_spec, dict):
        return
    network_key = _authored_key(authored_spec, "hostNetwork")
    if network_key is None or authored_spec[network_key] is not True:
        return
    for list_key in ("initContainers", "containers"):
        for index, container in enumerate(_authored_list(authored_spec, list_key)):
            if not isinstance(container, dict):
                continue
            for p_index, port in enumerate(_authored_list(container, "ports")):
                if not isinstance(port, dict):
                    continue
                host_key = _authored_key(port, "hostPort")
                if host_key is not None and port[host_key] == 0:
                    where = f"{_join(path, list_key)}[{index}].ports[{p_index}].hostPort"
                    raise FieldError(
                        f"{where}: 0 cannot be carried by the Kubernetes API types (the field is omitted "
                        "when zero, so the API server would apply its default, the port's containerPort)"
                    )


def decode_pod_spec(authored_spec: dict[str, Any], path: str) -> dict[str, Any]:
    """A pod spec decoded strictly and held to the pod kind's rules."""
    refuse_not_authorable(authored_spec, path)
    _host_port_zero(authored_spec, path)
    spec = decode_struct(authored_spec, POD_SPEC, path, KUBERNETES)
    check_pod_spec(spec, path)
    return spec


def _template_spec(authored: dict[str, Any], path: str) -> dict[str, Any]:
    """The authored ``template.spec`` object (``{}`` when unauthored), for the pre-decode checks."""
    template_key = _authored_key(authored, "template")
    template = authored.get(template_key) if template_key else None
    if not isinstance(template, dict):
        return {}
    spec_key = _authored_key(template, "spec")
    spec = template.get(spec_key) if spec_key else None
    return spec if isinstance(spec, dict) else {}


def _check_template(authored: dict[str, Any], decoded_template: dict[str, Any], allow_deadline: bool) -> None:
    authored_spec = _template_spec(authored, "template")
    refuse_not_authorable(authored_spec, "template.spec")
    _host_port_zero(authored_spec, "template.spec")
    spec = decoded_template.get("spec") or {}
    if spec.get("containers") is None:
        raise required_error("template.spec.containers", KUBERNETES)
    if not allow_deadline and "activeDeadlineSeconds" in spec:
        raise FieldError(
            "template.spec.activeDeadlineSeconds: not allowed on a pod template whose pods a controller "
            "replaces for as long as it exists (the API server refuses it); set it on a pod or a job"
        )
    check_pod_spec(spec, "template.spec")


def _add_template_app_label(template: dict[str, Any], component: str) -> None:
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    value = component_label_value(component)
    authored = labels.get(APP_LABEL)
    if authored is not None and authored != value:
        raise FieldError(
            f'template.metadata.labels.app: "{authored}" is not the `app` label of component '
            f'"{component}" ("{value}")'
        )
    labels[APP_LABEL] = value


def _add_template_component_label(template: dict[str, Any], component: str) -> None:
    template.setdefault("metadata", {}).setdefault("labels", {})[COMPONENT_LABEL] = component


def _check_replicas(ctx: BuildContext, spec: dict[str, Any]) -> None:
    maximum = ctx.policy.max_replicas
    replicas = spec.get("replicas", 1)  # unset counts as the 1 the API server defaults it to
    if maximum is not None and replicas > maximum:
        raise PolicyRefusal(
            f"replicas {replicas} exceeds enforced maximum {maximum}", REFUSAL_REPLICA_MAXIMUM
        )


# --- selectors ------------------------------------------------------------------------------------


def _check_selector_against_app(selector: dict[str, Any], component: str) -> None:
    """A selector that would stop matching once ``app: <component>`` is on the pods is refused."""
    value = component_label_value(component)
    match_value = (selector.get("matchLabels") or {}).get(APP_LABEL)
    if match_value is not None and match_value != value:
        raise FieldError(
            f'selector: rules out the label `app: {value}` the pods carry (matchLabels.app: "{match_value}")'
        )
    for index, expression in enumerate(selector.get("matchExpressions") or []):
        if expression.get("key") != APP_LABEL:
            continue
        operator = expression.get("operator")
        values = expression.get("values") or []
        excluded = (
            operator == "DoesNotExist"
            or (operator == "NotIn" and value in values)
            or (operator == "In" and value not in values)
        )
        if excluded:
            raise FieldError(
                f"selector: rules out the label `app: {value}` the pods carry "
                f"(matchExpressions[{index}]: app {operator}{' [' + ', '.join(values) + ']' if values else ''})"
            )


def _check_selector_readable(selector: dict[str, Any]) -> None:
    for index, expression in enumerate(selector.get("matchExpressions") or []):
        if not expression.get("key"):
            raise FieldError(f"selector: matchExpressions[{index}].key: required")
        if not expression.get("operator"):
            raise FieldError(f"selector: matchExpressions[{index}].operator: required")
    try:
        check_match_expressions(selector, "selector")
    except FieldError as exc:
        message = exc.message
        raise FieldError(message if message.startswith("selector") else f"selector: {message}") from None


# --- builders -------------------------------------------------------------------------------------


def _metadata(component: ComponentSpec, ctx: BuildContext) -> dict[str, Any]:
    return object_metadata(component, ctx, cluster_scoped=False)


def build_pod(component: ComponentSpec, ctx: BuildContext) -> Generated:
    authored = authored_properties(component)
    spec = decode_pod_spec(authored, "")
    metadata = _metadata(component, ctx)
    metadata.setdefault("labels", {})[APP_LABEL] = component_label_value(component.name)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    return Generated(objects=[pod], workload=pod, facts=_account_facts(spec))


def build_replicaset(component: ComponentSpec, ctx: BuildContext) -> Generated:
    authored = authored_properties(component)
    if _authored_key(authored, "selector") is None:
        raise FieldError(
            "selector: required (the ReplicaSet type writes an unset selector as null, and none is derived)"
        )
    spec = _decode_spec(authored, REPLICA_SET_SPEC)
    _check_selector_readable(spec["selector"])
    _check_template(authored, spec["template"], allow_deadline=False)
    _add_template_app_label(spec["template"], component.name)
    _check_selector_against_app(spec["selector"], component.name)
    _check_replicas(ctx, spec)
    _add_template_component_label(spec["template"], component.name)
    obj = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": _metadata(component, ctx), "spec": spec}
    return Generated(objects=[obj], workload=obj, facts=_account_facts(spec["template"].get("spec") or {}))


def build_replicationcontroller(component: ComponentSpec, ctx: BuildContext) -> Generated:
    authored = authored_properties(component)
    _refuse_label_selector_keys(authored)
    if _authored_key(authored, "template") is None:
        raise FieldError("template: required")
    spec = _decode_spec(authored, REPLICATION_CONTROLLER_SPEC)
    _check_template(authored, spec["template"], allow_deadline=False)
    _add_template_app_label(spec["template"], component.name)
    _check_replicas(ctx, spec)
    _add_template_component_label(spec["template"], component.name)
    obj = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": _metadata(component, ctx),
        "spec": spec,
    }
    return Generated(objects=[obj], workload=obj, facts=_account_facts(spec["template"].get("spec") or {}))


def build_podtemplate(component: ComponentSpec, ctx: BuildContext) -> Generated:
    authored = authored_properties(component)
    try:
        body = decode_struct(authored, POD_TEMPLATE_BODY, "", KUBERNETES)
    except FieldError as exc:
        if exc.message.startswith("unknown field"):
            raise FieldError(f"properties do not decode into a v1 PodTemplate: {exc.message}") from None
        raise
    template = body["template"]
    _check_template(authored, template, allow_deadline=True)
    _add_template_component_label(template, component.name)
    obj = {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": _metadata(component, ctx),
        "template": template,
    }
    # Stored, not run: no workload a pod-spec trait could act on, and no ServiceAccountNamer, so an
    # rbac trait binds the component name.
    return Generated(objects=[obj], facts={SERVICE_ACCOUNT_FACT: component.name})


def _refuse_label_selector_keys(authored: dict[str, Any]) -> None:
    """A ReplicationController's selector is a plain map: the label-selector keys are refused."""
    key = _authored_key(authored, "selector")
    selector = authored.get(key) if key else None
    if not isinstance(selector, dict):
        return
    for name in ("matchLabels", "matchExpressions"):
        if name in selector:
            raise FieldError(
                f"selector.{name}: not a ReplicationControllerSpec field: a ReplicationController's "
                "selector is a plain map of label to value"
            )


def _account_facts(pod_spec: dict[str, Any]) -> dict[str, Any]:
    """The ServiceAccountNamer answer: serviceAccountName, else the deprecated serviceAccount."""
    account = pod_spec.get("serviceAccountName") or pod_spec.get("serviceAccount")
    return {SERVICE_ACCOUNT_FACT: account} if account else {}


def _decode_spec(authored: dict[str, Any], struct: Struct) -> dict[str, Any]:
    """Decode a controller spec; the template's own refusals come before a missing-field error."""
    _check_template_shape(authored)
    refuse_not_authorable(_template_spec(authored, "template"), "template.spec")
    return decode_struct(authored, struct, "", KUBERNETES)


def _check_template_shape(authored: dict[str, Any]) -> None:
    key = _authored_key(authored, "template")
    if key is not None and not isinstance(authored[key], dict):
        raise FieldError(f"template: must be an object, got {go_type_name(authored[key])}")


POD = ComponentType(
    name="pod",
    build=build_pod,
    emits=("v1 Pod",),
    decode="strict decode into corev1.PodSpec",
    status="kind",
)
REPLICASET = ComponentType(
    name="replicaset",
    build=build_replicaset,
    emits=("apps/v1 ReplicaSet",),
    decode="strict decode into appsv1.ReplicaSetSpec",
    status="kind",
)
REPLICATIONCONTROLLER = ComponentType(
    name="replicationcontroller",
    build=build_replicationcontroller,
    emits=("v1 ReplicationController",),
    decode="strict decode into corev1.ReplicationControllerSpec",
    status="kind",
)
PODTEMPLATE = ComponentType(
    name="podtemplate",
    build=build_podtemplate,
    emits=("v1 PodTemplate",),
    decode="strict decode into corev1.PodTemplateSpec",
    status="kind",
)
