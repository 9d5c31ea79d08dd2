"""The ``service`` component: one Service named after the component (seed 002, "service").
webservice builds its Service member with :func:`build_service`."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from farm.core.components.containers import is_valid_port_name, reject_unknown_keys
from farm.core.components.podspec import parse_node_selector
from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_bool_field, parse_int32_field, parse_string_field
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.names import is_dns1123_subdomain, is_qualified_name
from farm.core.registry import ComponentType

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")
_PORT_KEYS = ("name", "port", "targetPort", "protocol", "nodePort", "appProtocol")
_LB_ONLY = (
    "loadBalancerClass",
    "loadBalancerSourceRanges",
    "loadBalancerIP",
    "allocateLoadBalancerNodePorts",
)
PROPERTIES = (
    "objectName",
    "selector",
    "ports",
    "type",
    "externalName",
    "clusterIP",
    "externalTrafficPolicy",
    "internalTrafficPolicy",
    "trafficDistribution",
    "sessionAffinity",
    "sessionAffinityConfig",
    "publishNotReadyAddresses",
    "ipFamilies",
    "ipFamilyPolicy",
    "healthCheckNodePort",
) + _LB_ONLY
_REFUSED = {
    "externalIPs": "externalIPs routes traffic for addresses the cluster does not manage",
    "clusterIPs": "a Service's cluster IPs are the cluster's to allocate",
}


def is_dns1035_label(name: str) -> bool:
    return len(name) <= 63 and bool(_DNS1035.match(name))


def check_service_name(name: str, field: str = "name") -> None:
    if not is_dns1035_label(name):
        raise FieldError(f'{field}: "{name}" is not a valid Service name, which must be a DNS-1035 label')


def build_service(name: str, component: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"labels": {"app": component}, "name": name, "namespace": namespace},
        "spec": spec,
    }


def http_service_spec(component: str, port: int) -> dict[str, Any]:
    """webservice's Service: one http port in front of the pods labelled app: <component>."""
    return {
        "ports": [{"name": "http", "port": port, "protocol": "TCP", "targetPort": port}],
        "selector": {"app": component},
        "type": "ClusterIP",
    }


def _enum(props: dict[str, Any], key: str, allowed: tuple[str, ...]) -> str | None:
    value = props.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or value not in allowed:
        raise FieldError(f'{key}: invalid value "{value}", must be one of {", ".join(allowed)}')
    return value


def _port_number(entry: dict[str, Any], key: str, path: str) -> tuple[int, bool]:
    value, present = parse_int32_field(entry, key, path)
    if present and not 1 <= value <= 65535:
        raise FieldError(f"{path}: must be between 1 and 65535, got {value}")
    return value, present


def _service_port(entry: Any, label: str, service_type: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise FieldError(f"{label}: must be an object, got {go_type_name(entry)}")
    reject_unknown_keys(entry, _PORT_KEYS, label)
    port, present = _port_number(entry, "port", f"{label}.port")
    if not present:
        raise FieldError(f"{label}: port is required")
    out: dict[str, Any] = {"port": port}
    name, present = parse_string_field(entry, "name", f"{label}.name")
    if present:
        if not is_valid_port_name(name):
            raise FieldError(f'{label}.name: "{name}" is not a valid port name')
        out["name"] = name
    protocol = entry.get("protocol", "TCP") or "TCP"
    if protocol not in ("TCP", "UDP", "SCTP"):
        raise FieldError(f'{label}.protocol: invalid value "{protocol}", must be one of TCP, UDP, SCTP')
    out["protocol"] = protocol
    target = entry.get("targetPort")
    if target is None:
        out["targetPort"] = port
    elif isinstance(target, str):
        if not is_valid_port_name(target):
            raise FieldError(f'{label}.targetPort: "{target}" is not a valid port name')
        out["targetPort"] = target
    else:
        out["targetPort"], _ = _port_number(entry, "targetPort", f"{label}.targetPort")
    if entry.get("nodePort") is not None:
        if entry["nodePort"] == 0:
            raise FieldError(f"{label}.nodePort: 0 is not allowed; leave the key out to have one allocated")
        if service_type not in ("NodePort", "LoadBalancer"):
            raise FieldError(f"{label}.nodePort: only allowed with type NodePort or LoadBalancer")
        out["nodePort"], _ = _port_number(entry, "nodePort", f"{label}.nodePort")
    app_protocol, present = parse_string_field(entry, "appProtocol", f"{label}.appProtocol")
    if present:
        if not is_qualified_name(app_protocol):
            raise FieldError(f'{label}.appProtocol: "{app_protocol}" is not a valid qualified name')
        out["appProtocol"] = app_protocol
    return out


def _ports(value: Any, service_type: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(f"ports: must be a list, got {go_type_name(value)}")
    ports = [_service_port(entry, f"ports[{i}]", service_type) for i, entry in enumerate(value)]
    seen_names: set[str] = set()
    seen_pairs: set[tuple[int, str]] = set()
    for index, port in enumerate(ports):
        if len(ports) > 1 and "name" not in port:
            raise FieldError(f"ports[{index}]: name is required when there is more than one port")
        if port.get("name") in seen_names:
            raise FieldError(f'ports[{index}].name: "{port["name"]}" is used by an earlier port')
        pair = (port["port"], port["protocol"])
        if pair in seen_pairs:
            raise FieldError(f"ports[{index}]: port {pair[0]}/{pair[1]} is used by an earlier port")
        seen_names.add(port.get("name", ""))
        seen_pairs.add(pair)
    return ports


def _external_name(props: dict[str, Any], spec: dict[str, Any]) -> None:
    name, present = parse_string_field(props, "externalName", "externalName")
    if not present:
        raise FieldError("externalName: required with type ExternalName")
    if not is_dns1123_subdomain(name.removesuffix(".")):
        raise FieldError(f'externalName: "{name}" is not a valid DNS-1123 subdomain')
    for key in ("selector", "ipFamilies", "ipFamilyPolicy"):
        if props.get(key) is not None:
            raise FieldError(f"{key}: not allowed with type ExternalName")
    if props.get("clusterIP") is not None:
        raise FieldError("clusterIP: not allowed with type ExternalName")
    spec["externalName"] = name


def _optional_fields(props: dict[str, Any], spec: dict[str, Any], service_type: str) -> None:
    enums = {
        "externalTrafficPolicy": ("Cluster", "Local"),
        "internalTrafficPolicy": ("Cluster", "Local"),
        "trafficDistribution": ("PreferSameZone", "PreferSameNode", "PreferClose"),
        "sessionAffinity": ("None", "ClientIP"),
        "ipFamilyPolicy": ("SingleStack", "PreferDualStack", "RequireDualStack"),
    }
    for key, allowed in enums.items():
        value = _enum(props, key, allowed)
        if value is not None:
            spec[key] = value
    if "externalTrafficPolicy" in spec and service_type not in ("NodePort", "LoadBalancer"):
        raise FieldError("externalTrafficPolicy: only allowed with type NodePort or LoadBalancer")
    for key in _LB_ONLY + ("healthCheckNodePort",):
        if props.get(key) is not None and service_type != "LoadBalancer":
            raise FieldError(f"{key}: only allowed with type LoadBalancer")
    published, _ = parse_bool_field(props, "publishNotReadyAddresses")
    if published:
        spec["publishNotReadyAddresses"] = True
    allocate, present = parse_bool_field(props, "allocateLoadBalancerNodePorts")
    if present:
        spec["allocateLoadBalancerNodePorts"] = allocate
    for key in ("loadBalancerClass", "loadBalancerIP"):
        text, present = parse_string_field(props, key)
        if present:
            spec[key] = text
    if props.get("loadBalancerSourceRanges") is not None:
        ranges = props["loadBalancerSourceRanges"]
        for cidr in ranges:
            if not isinstance(cidr, str) or str(_network(cidr)) != cidr:
                raise FieldError(f'loadBalancerSourceRanges: "{cidr}" is not a CIDR in canonical form')
        spec["loadBalancerSourceRanges"] = list(ranges)
    _ip_families(props, spec)
    _session_affinity_config(props, spec)
    if props.get("healthCheckNodePort") is not None:
        if spec.get("externalTrafficPolicy") != "Local":
            raise FieldError("healthCheckNodePort: only allowed with externalTrafficPolicy: Local")
        spec["healthCheckNodePort"], _ = _port_number(props, "healthCheckNodePort", "healthCheckNodePort")


def _network(cidr: str) -> Any:
    try:
        return ipaddress.ip_network(cidr)
    except ValueError:
        return None


def _ip_families(props: dict[str, Any], spec: dict[str, Any]) -> None:
    families = props.get("ipFamilies")
    if families is None:
        return
    if not isinstance(families, list) or len(families) > 2 or len(set(families)) != len(families):
        raise FieldError("ipFamilies: must list IPv4 and/or IPv6, each at most once")
    for family in families:
        if family not in ("IPv4", "IPv6"):
            raise FieldError(f'ipFamilies: invalid value "{family}", must be one of IPv4, IPv6')
    if len(families) == 2 and spec.get("ipFamilyPolicy") == "SingleStack":
        raise FieldError("ipFamilyPolicy: SingleStack cannot be used with two ipFamilies")
    spec["ipFamilies"] = list(families)


def _session_affinity_config(props: dict[str, Any], spec: dict[str, Any]) -> None:
    config = props.get("sessionAffinityConfig")
    if config is None:
        return
    if spec.get("sessionAffinity") != "ClientIP":
        raise FieldError("sessionAffinityConfig: only allowed with sessionAffinity: ClientIP")
    client_ip = (config or {}).get("clientIP") if isinstance(config, dict) else None
    if not isinstance(client_ip, dict):
        raise FieldError("sessionAffinityConfig.clientIP: timeoutSeconds is required")
    timeout, present = parse_int32_field(
        client_ip, "timeoutSeconds", "sessionAffinityConfig.clientIP.timeoutSeconds"
    )
    if not present:
        raise FieldError("sessionAffinityConfig.clientIP: timeoutSeconds is required")
    if not 1 <= timeout <= 86400:
        raise FieldError(
            f"sessionAffinityConfig.clientIP.timeoutSeconds: must be between 1 and 86400, got {timeout}"
        )
    spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": timeout}}


def _check_keys(props: dict[str, Any]) -> None:
    for key in sorted(props):
        if key in _REFUSED:
            raise FieldError(f"{key}: not accepted: {_REFUSED[key]}")
        if key not in PROPERTIES:
            raise FieldError(f'unknown property "{key}"')


def _object_name(component: ComponentSpec) -> str:
    """The Service's name: objectName, else the component's. Either becomes the Service's
    metadata.name, so it is held to the DNS-1035 label the API server requires."""
    name, present = parse_string_field(component.properties, "objectName", "objectName")
    if present and name:
        check_service_name(name, "objectName")
        return name
    check_service_name(component.name)
    return component.name


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = component.properties
    object_name = _object_name(component)
    _check_keys(props)
    service_type = _enum(props, "type", _TYPES) or "ClusterIP"
    spec: dict[str, Any] = {"type": service_type}
    cluster_ip = props.get("clusterIP")
    if cluster_ip is not None:
        if cluster_ip != "None":
            raise FieldError(f'clusterIP: invalid value "{cluster_ip}", must be None (a headless Service)')
        if service_type != "ClusterIP":
            raise FieldError("clusterIP: None requires type ClusterIP")
        spec["clusterIP"] = "None"
    if service_type == "ExternalName":
        _external_name(props, spec)
    else:
        if props.get("externalName") is not None:
            raise FieldError("externalName: only allowed with type ExternalName")
        selector = (
            parse_node_selector(props["selector"], "selector") if props.get("selector") is not None else None
        )
        if selector is not None and not selector:
            raise FieldError("selector: must not be empty")
        spec["selector"] = selector or {"app": component.name}
    ports = _ports(props.get("ports"), service_type)
    if not ports and service_type != "ExternalName" and "clusterIP" not in spec:
        raise FieldError("ports: at least one port is required")
    if ports:
        spec["ports"] = ports
    _optional_fields(props, spec, service_type)
    service = build_service(object_name, component.name, ctx.namespace, spec)
    first = ports[0] if ports and service_type != "ExternalName" else None
    return Generated(
        objects=[service],
        service_name=object_name if first else None,
        service_port=first["port"] if first else None,
        service_port_name=first.get("name") if first else None,
    )


HANDLER = ComponentType(name="service", build=build, emits=("v1 Service",))
