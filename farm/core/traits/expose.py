"""The expose lowering rule: an ``expose`` trait becomes an ``ingress`` or an ``httproute`` trait
according to the ClusterProfile's ``controllerType`` (launcher-pipeline §1.4, §1.5 step 2)."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import parse_bool_field, parse_object_list, parse_string_list
from farm.core.model import BuildContext, ComponentSpec, TraitSpec
from farm.core.registry import TraitType
from farm.core.traits._common import COMMON_KEYS, check_known_keys, check_rendering_keys, string_prop
from farm.core.traits._routing import refuse_reserved
from farm.core.traits.httproute import DEFAULT_GATEWAY_NAMESPACE

INGRESS, GATEWAY = "ingress", "gateway"
INGRESS_ONLY = (
    "ingressClassName",
    "certManagerClusterIssuer",
    "sslRedirect",
    "forceSslRedirect",
    "authURL",
    "authSigninURL",
    "authResponseHeaders",
)
GATEWAY_ONLY = ("gatewayName", "gatewayNamespace")
SHARED_RENDERING = ("controllerType", "allowedHostnameWildcard", "networkPolicy")
RENDERING_KEYS = SHARED_RENDERING + INGRESS_ONLY + GATEWAY_ONLY
AUTHORED_KEYS = COMMON_KEYS | {
    "name",
    "hostnames",
    "rules",
    "tls",
    "secretName",
    "allowedGroups",
    "serviceName",
    "servicePort",
    *RENDERING_KEYS,
}
ISSUER_ANNOTATION = "cert-manager.io/cluster-issuer"
NGINX = "nginx.ingress.kubernetes.io/"


def validate_rendering(rendering: dict[str, Any], key: str) -> dict[str, Any]:
    """Check an expose capability: controllerType decides which keys are required and allowed."""
    check_rendering_keys(rendering, RENDERING_KEYS, "expose")
    controller = string_prop(rendering, "controllerType", "controllerType")
    if controller not in (INGRESS, GATEWAY):
        raise FieldError(f'controllerType: must be "ingress" or "gateway", got "{controller}"')
    foreign = GATEWAY_ONLY if controller == INGRESS else INGRESS_ONLY
    for name in foreign:
        if rendering.get(name) is not None:
            raise FieldError(f'{name}: not allowed when controllerType is "{controller}"')
    if controller == INGRESS:
        if not string_prop(rendering, "ingressClassName"):
            raise FieldError('ingressClassName is required when controllerType is "ingress"')
    else:
        if not string_prop(rendering, "gatewayName"):
            raise FieldError('gatewayName is required when controllerType is "gateway"')
        if not string_prop(rendering, "gatewayNamespace"):
            rendering["gatewayNamespace"] = DEFAULT_GATEWAY_NAMESPACE
    return rendering


def _check_host(host: str, wildcard: str, where: str) -> None:
    if not wildcard:
        return
    suffix = wildcard[1:] if wildcard.startswith("*") else "." + wildcard
    if not (host.endswith(suffix) and len(host) > len(suffix)) and host != wildcard:
        raise FieldError(f'{where}: host "{host}" is not allowed by allowedHostnameWildcard "{wildcard}"')


def _ingress_rules(props: dict[str, Any]) -> list[dict[str, Any]]:
    rules, present = parse_object_list(props, "rules")
    if present and rules:
        return [dict(rule) for rule in rules]
    hostnames, _ = parse_string_list(props, "hostnames")
    return [{"host": host, "paths": [{"path": "/"}]} for host in hostnames]


def _bool_annotation(props: dict[str, Any], key: str, annotation: str, out: dict[str, str]) -> None:
    value, present = parse_bool_field(props, key)
    if present:
        out[NGINX + annotation] = "true" if value else "false"


def _auth_annotations(props: dict[str, Any], out: dict[str, str]) -> None:
    groups, present = parse_string_list(props, "allowedGroups")
    auth_url = string_prop(props, "authURL")
    if not present or not groups:
        return
    if not auth_url:
        raise FieldError("allowedGroups: needs the authURL of the expose capability")
    out[NGINX + "auth-url"] = f"{auth_url}?allowed_groups={','.join(groups)}"
    signin = string_prop(props, "authSigninURL")
    if signin:
        out[NGINX + "auth-signin"] = signin
    headers, _ = parse_string_list(props, "authResponseHeaders")
    if headers:
        out[NGINX + "auth-response-headers"] = ",".join(headers)


def _lower_ingress(props: dict[str, Any], component: ComponentSpec) -> dict[str, Any]:
    rules = _ingress_rules(props)
    from_hostnames = not props.get("rules")
    wildcard = string_prop(props, "allowedHostnameWildcard")
    hosts = []
    for index, rule in enumerate(rules):
        where = f"hostnames[{index}]" if from_hostnames else f"rules[{index}].host"
        host = string_prop(rule, "host", where)
        if host:
            _check_host(host, wildcard, where)
            hosts.append(host)
    annotations: dict[str, str] = {}
    issuer = string_prop(props, "certManagerClusterIssuer")
    out: dict[str, Any] = {"ingressClassName": string_prop(props, "ingressClassName"), "rules": rules}
    if issuer:
        annotations[ISSUER_ANNOTATION] = issuer
        secret = string_prop(props, "secretName") or f"{component.name}-tls"
        out["tls"] = [{"hosts": hosts, "secretName": secret}]
    _bool_annotation(props, "sslRedirect", "ssl-redirect", annotations)
    _bool_annotation(props, "forceSslRedirect", "force-ssl-redirect", annotations)
    _auth_annotations(props, annotations)
    if annotations:
        out["annotations"] = annotations
    return out


def _gateway_rules(props: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """Hostnames and HTTPRoute rules from the ingress-shaped ``rules`` or ``hostnames``."""
    hostnames, _ = parse_string_list(props, "hostnames")
    hosts = list(hostnames)
    rules, _ = parse_object_list(props, "rules")
    if not rules:
        return hosts, [{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}]
    out = []
    for index, rule in enumerate(rules):
        host = string_prop(rule, "host", f"rules[{index}].host")
        if host and host not in hosts:
            hosts.append(host)
        paths, _ = parse_object_list(rule, "paths", f"rules[{index}].paths")
        for p_index, path in enumerate(paths or [{}]):
            where = f"rules[{index}].paths[{p_index}]"
            path_type = string_prop(path, "pathType", f"{where}.pathType") or "Prefix"
            match_type = {"Prefix": "PathPrefix", "Exact": "Exact"}.get(path_type)
            if match_type is None:
                raise FieldError(f'{where}.pathType: "{path_type}" has no Gateway API equivalent')
            value = string_prop(path, "path", f"{where}.path") or "/"
            out.append({"matches": [{"path": {"type": match_type, "value": value}}]})
    return hosts, out


def _lower_gateway(props: dict[str, Any], component: ComponentSpec) -> dict[str, Any]:
    hosts, rules = _gateway_rules(props)
    wildcard = string_prop(props, "allowedHostnameWildcard")
    for index, host in enumerate(hosts):
        _check_host(host, wildcard, f"hostnames[{index}]")
    namespace = string_prop(props, "gatewayNamespace") or DEFAULT_GATEWAY_NAMESPACE
    out: dict[str, Any] = {
        "parentRefs": [{"name": string_prop(props, "gatewayName"), "namespace": namespace}],
        "rules": rules,
    }
    if hosts:
        out["hostnames"] = hosts
    return out


def lower(trait: TraitSpec, props: dict[str, Any], component: ComponentSpec, ctx: BuildContext) -> TraitSpec:
    refuse_reserved(trait.properties)
    check_known_keys(props, AUTHORED_KEYS)
    controller = string_prop(props, "controllerType")
    if controller == INGRESS:
        target, lowered = "ingress", _lower_ingress(props, component)
    elif controller == GATEWAY:
        if not string_prop(props, "gatewayName"):
            raise FieldError('gatewayName is required when controllerType is "gateway"')
        target, lowered = "httproute", _lower_gateway(props, component)
    else:
        raise FieldError(f'controllerType: must be "ingress" or "gateway", got "{controller}"')
    for key in ("name", "scope", "serviceName", "servicePort", "networkPolicy"):
        if props.get(key) is not None:
            lowered[key] = props[key]
    return TraitSpec(target, {k: v for k, v in lowered.items() if v not in (None, "")}, sealed=True)


HANDLER = TraitType(
    name="expose",
    lower=lower,
    capability="required",
    validate_rendering=validate_rendering,
    emits=("networking.k8s.io/v1 Ingress", "gateway.networking.k8s.io/v1 HTTPRoute"),
)
