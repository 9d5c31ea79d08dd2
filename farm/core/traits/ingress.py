"""The ingress trait: a networking.k8s.io/v1 Ingress ``<component>-ingress`` routing to the
component's Service (launcher-pipeline §2 "ingress")."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import parse_object_list, parse_string_list
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import (
    COMMON_KEYS,
    app_labels,
    check_known_keys,
    metadata,
    string_map,
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

KEYS = COMMON_KEYS | {
    "name",
    "ingressClassName",
    "annotations",
    "rules",
    "tls",
    "serviceName",
    "servicePort",
    "networkPolicy",
}
RULE_KEYS = {"host", "paths"}
PATH_KEYS = {"path", "pathType", "backend", "port", "portName"}
PATH_TYPES = ("Exact", "Prefix", "ImplementationSpecific")


def _service_port(port: int | None, port_name: str | None) -> dict[str, Any]:
    return {"name": port_name} if port_name else {"number": port}


def _path(entry: dict[str, Any], where: str, backend: Backend, routed: list[int]) -> dict[str, Any]:
    check_known_keys(entry, PATH_KEYS, where)
    path = string_prop(entry, "path", f"{where}.path") or "/"
    path_type = string_prop(entry, "pathType", f"{where}.pathType") or "Prefix"
    if path_type not in PATH_TYPES:
        raise FieldError(f'{where}.pathType: must be one of {", ".join(PATH_TYPES)}, got "{path_type}"')
    service = string_prop(entry, "backend", f"{where}.backend")
    port = port_number(entry.get("port"), f"{where}.port")
    port_name = string_prop(entry, "portName", f"{where}.portName") or None
    if service and service != backend.name:
        if port is None and port_name is None:
            raise FieldError(f'{where}: backend "{service}" needs port or portName')
        ref = {"name": service, "port": _service_port(port, port_name)}
    else:
        check_implicit_port(backend, port, port_name)
        if port_name is None and port is None:
            port = backend.port
        if backend.local:
            routed.append(backend.port if port is None else port)
        ref = {"name": backend.name, "port": _service_port(port, port_name)}
    return {"backend": {"service": ref}, "path": path, "pathType": path_type}


def _rules(app: TraitApplication, backend: Backend, routed: list[int]) -> list[dict[str, Any]]:
    rules, present = parse_object_list(app.properties, "rules")
    if not present or not rules:
        raise FieldError("rules: at least one rule is required")
    out = []
    for index, rule in enumerate(rules):
        where = f"rules[{index}]"
        check_known_keys(rule, RULE_KEYS, where)
        paths, _ = parse_object_list(rule, "paths", f"{where}.paths")
        if not paths:
            paths = [{}]
        built: dict[str, Any] = {
            "http": {"paths": [_path(p, f"{where}.paths[{i}]", backend, routed) for i, p in enumerate(paths)]}
        }
        host = string_prop(rule, "host", f"{where}.host")
        if host:
            built["host"] = host
        out.append(built)
    return out


def _tls(props: dict[str, Any]) -> list[dict[str, Any]]:
    entries, _ = parse_object_list(props, "tls")
    out = []
    for index, entry in enumerate(entries):
        where = f"tls[{index}]"
        check_known_keys(entry, {"hosts", "secretName"}, where)
        item: dict[str, Any] = {}
        hosts, _ = parse_string_list(entry, "hosts", f"{where}.hosts")
        if hosts:
            item["hosts"] = list(hosts)
        secret = string_prop(entry, "secretName", f"{where}.secretName")
        if secret:
            item["secretName"] = secret
        out.append(item)
    return out


def build_ingress(app: TraitApplication) -> tuple[dict[str, Any], list[int]]:
    """The Ingress and the ports of the component's own Service it routes to."""
    props = app.properties
    check_known_keys(props, KEYS)
    backend = default_backend(app)
    routed: list[int] = []
    spec: dict[str, Any] = {"rules": _rules(app, backend, routed)}
    class_name = string_prop(props, "ingressClassName")
    if class_name:
        spec["ingressClassName"] = class_name
    tls = _tls(props)
    if tls:
        spec["tls"] = tls
    meta = metadata(trait_object_name(app, "ingress"), app.ctx.namespace, app_labels(app.component.name))
    annotations = string_map(props, "annotations")
    if annotations:
        meta["annotations"] = annotations
    obj = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": meta,
        "spec": without_nulls(spec),
    }
    return obj, routed


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    if not app.trait.sealed:
        refuse_reserved(app.trait.properties)
    ingress, routed = build_ingress(app)
    synthesize_ingress_policy(app, routed)
    return [ingress]


HANDLER = TraitType(
    name="ingress",
    apply=apply,
    capability="none",
    emits=("networking.k8s.io/v1 Ingress", "networking.k8s.io/v1 NetworkPolicy"),
)
