"""The httproute trait: a gateway.networking.k8s.io/v1 HTTPRoute ``<component>-httproute`` routing
to the component's Service (launcher-pipeline §2 "httproute")."""

from __future__ import annotations

from typing import Any

from farm.core.durations import DurationError, normalize_duration
from farm.core.errors import FieldError
from farm.core.fields import parse_object_field, parse_object_list, parse_string_list
from farm.core.kinds.engine import GATEWAY, decode_value
from farm.core.kinds.gateway import HTTP_ROUTES
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import (
    COMMON_KEYS,
    app_labels,
    check_known_keys,
    metadata,
    required_string,
    string_prop,
    trait_object_name,
    without_nulls,
)
from farm.core.traits._routing import (
    Backend,
    check_implicit_port,
    default_backend,
    port_number,
    refuse_reserved,
    synthesize_ingress_policy,
)

DEFAULT_GATEWAY_NAMESPACE = "gateway-system"
KEYS = COMMON_KEYS | {
    "name",
    "parentRefs",
    "hostnames",
    "rules",
    "gatewayName",
    "gatewayNamespace",
    "serviceName",
    "servicePort",
    "networkPolicy",
}
PARENT_KEYS = {"name", "namespace", "sectionName", "port", "kind", "group"}
RULE_KEYS = {"name", "matches", "filters", "backendRefs", "timeouts"}
MATCH_KEYS = {"path", "headers", "queryParams", "method"}
BACKEND_KEYS = {"name", "port", "weight", "namespace", "kind", "group", "filters"}
PATH_TYPES = ("Exact", "PathPrefix", "RegularExpression")
VALUE_MATCH_TYPES = ("Exact", "RegularExpression")
METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH")
FILTER_TYPES = {
    "RequestHeaderModifier": "requestHeaderModifier",
    "ResponseHeaderModifier": "responseHeaderModifier",
    "RequestMirror": "requestMirror",
    "RequestRedirect": "requestRedirect",
    "URLRewrite": "urlRewrite",
    "ExtensionRef": "extensionRef",
    "CORS": "cors",
    "ExternalAuth": "externalAuth",
}


def _enum(value: str, allowed: tuple[str, ...], where: str) -> str:
    if value not in allowed:
        raise FieldError(f'{where}: must be one of {", ".join(allowed)}, got "{value}"')
    return value


def _parent_refs(props: dict[str, Any]) -> list[dict[str, Any]]:
    refs, present = parse_object_list(props, "parentRefs")
    if present and refs:
        out = []
        for index, ref in enumerate(refs):
            where = f"parentRefs[{index}]"
            check_known_keys(ref, PARENT_KEYS, where)
            required_string(ref, "name", f"{where}.name")
            if ref.get("port") is not None:
                port_number(ref["port"], f"{where}.port")
            out.append(without_nulls(ref))
        return out
    gateway = string_prop(props, "gatewayName")
    if not gateway:
        return []
    namespace = string_prop(props, "gatewayNamespace") or DEFAULT_GATEWAY_NAMESPACE
    return [{"name": gateway, "namespace": namespace}]


def _value_matches(match: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    entries, _ = parse_object_list(match, key, f"{where}.{key}")
    out = []
    for index, entry in enumerate(entries):
        path = f"{where}.{key}[{index}]"
        check_known_keys(entry, {"name", "value", "type"}, path)
        item = {
            "name": required_string(entry, "name", f"{path}.name"),
            "value": string_prop(entry, "value", f"{path}.value"),
            "type": _enum(
                string_prop(entry, "type", f"{path}.type") or "Exact", VALUE_MATCH_TYPES, f"{path}.type"
            ),
        }
        out.append(item)
    return out


def _match(match: dict[str, Any], where: str) -> dict[str, Any]:
    check_known_keys(match, MATCH_KEYS, where)
    out: dict[str, Any] = {}
    path, has_path = parse_object_field(match, "path", f"{where}.path")
    if has_path:
        check_known_keys(path, {"type", "value"}, f"{where}.path")
        path_type = string_prop(path, "type", f"{where}.path.type") or "PathPrefix"
        out["path"] = {
            "type": _enum(path_type, PATH_TYPES, f"{where}.path.type"),
            "value": string_prop(path, "value", f"{where}.path.value") or "/",
        }
    for key in ("headers", "queryParams"):
        values = _value_matches(match, key, where)
        if values:
            out[key] = values
    method = string_prop(match, "method", f"{where}.method")
    if method:
        out["method"] = _enum(method, METHODS, f"{where}.method")
    return out


def _filters(holder: dict[str, Any], where: str) -> list[dict[str, Any]]:
    filters, _ = parse_object_list(holder, "filters", f"{where}.filters")
    out = []
    for index, item in enumerate(filters):
        path = f"{where}.filters[{index}]"
        kind = required_string(item, "type", f"{path}.type")
        field = FILTER_TYPES.get(kind)
        if field is None:
            raise FieldError(f'{path}.type: must be one of {", ".join(FILTER_TYPES)}, got "{kind}"')
        check_known_keys(item, {"type", field}, path)
        # The Gateway API's HTTPRouteFilter table gives the filter its Go shape: unknown or
        # mistyped keys at any depth are refused and omitempty fields are dropped.
        out.append(decode_value(item, HTTP_ROUTES.http_filter, path, GATEWAY))
    return out


def _timeouts(rule: dict[str, Any], where: str) -> dict[str, str]:
    timeouts, present = parse_object_field(rule, "timeouts", f"{where}.timeouts")
    if not present:
        return {}
    check_known_keys(timeouts, {"request", "backendRequest"}, f"{where}.timeouts")
    out = {}
    for key in ("request", "backendRequest"):
        value = string_prop(timeouts, key, f"{where}.timeouts.{key}")
        if value:
            try:
                out[key] = normalize_duration(value)
            except DurationError as exc:
                raise FieldError(f"{where}.timeouts.{key}: {exc}") from None
    return out


def _backend_refs(
    rule: dict[str, Any], where: str, backend: Backend, routed: list[int]
) -> list[dict[str, Any]]:
    refs, _ = parse_object_list(rule, "backendRefs", f"{where}.backendRefs")
    if not refs:
        if backend.local:
            routed.append(backend.port)
        return [{"name": backend.name, "port": backend.port}]
    out = []
    for index, ref in enumerate(refs):
        path = f"{where}.backendRefs[{index}]"
        check_known_keys(ref, BACKEND_KEYS, path)
        item = without_nulls(ref)
        filters = _filters(ref, path)
        item.pop("filters", None)
        if filters:
            item["filters"] = filters
        name = string_prop(ref, "name", f"{path}.name") or backend.name
        port = port_number(ref.get("port"), f"{path}.port")
        if name == backend.name and not ref.get("namespace"):
            check_implicit_port(backend, port, None)
            port = backend.port if port is None else port
            if backend.local:
                routed.append(port)
        item["name"] = name
        if port is not None:
            item["port"] = port
        out.append(item)
    return out


def _rules(app: TraitApplication, backend: Backend, routed: list[int]) -> list[dict[str, Any]]:
    rules, _ = parse_object_list(app.properties, "rules")
    if not rules:
        rules = [{}]
    out = []
    for index, rule in enumerate(rules):
        where = f"rules[{index}]"
        check_known_keys(rule, RULE_KEYS, where)
        built: dict[str, Any] = {"backendRefs": _backend_refs(rule, where, backend, routed)}
        matches, _ = parse_object_list(rule, "matches", f"{where}.matches")
        if matches:
            built["matches"] = [_match(m, f"{where}.matches[{i}]") for i, m in enumerate(matches)]
        filters = _filters(rule, where)
        if filters:
            built["filters"] = filters
        timeouts = _timeouts(rule, where)
        if timeouts:
            built["timeouts"] = timeouts
        name = string_prop(rule, "name", f"{where}.name")
        if name:
            built["name"] = name
        out.append(built)
    return out


def build_httproute(app: TraitApplication) -> tuple[dict[str, Any], list[int]]:
    props = app.properties
    check_known_keys(props, KEYS)
    backend = default_backend(app)
    routed: list[int] = []
    spec: dict[str, Any] = {"rules": _rules(app, backend, routed)}
    parents = _parent_refs(props)
    if parents:
        spec["parentRefs"] = parents
    hostnames, _ = parse_string_list(props, "hostnames")
    if hostnames:
        spec["hostnames"] = list(hostnames)
    obj = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": metadata(
            trait_object_name(app, "httproute"), app.ctx.namespace, app_labels(app.component.name)
        ),
        "spec": spec,
    }
    return obj, routed


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    if not app.trait.sealed:
        refuse_reserved(app.trait.properties)
    route, routed = build_httproute(app)
    synthesize_ingress_policy(app, routed)
    return [route]


HANDLER = TraitType(
    name="httproute",
    apply=apply,
    capability="none",
    emits=("gateway.networking.k8s.io/v1 HTTPRoute", "networking.k8s.io/v1 NetworkPolicy"),
)
