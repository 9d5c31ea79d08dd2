"""The shared container surface every hand-parsed workload kind reads (seed 002, "Common config",
"Container fields", "Policy defaults & enforcement ordering").

What it offers, for webservice, worker, deployment, statefulset, daemonset, job and cronjob:

- :func:`validate_image` — the tag rule (no untagged image, no ``:latest``);
- :func:`check_container_name` — the main container is named after the component (DNS-1123 label);
- :func:`parse_env`, :func:`parse_env_from` — corev1.EnvVar / EnvFromSource with the seed's messages;
- :func:`parse_resources` and :func:`build_resource_requirements` — authored requests/limits,
  then the policy-default tier, then the intrinsic tier (cpu 100m, memory 128Mi, memory limit
  mirroring the memory request), all printed as canonical quantities; :func:`enforce_resource_maximum`
  holds the effective values to the policy maxima;
- :func:`parse_ports` — a corev1.ContainerPort list (deployment's ``ports``, a sidecar's ``ports``);
- :func:`parse_probes`, :func:`parse_lifecycle`, :func:`parse_security_context`;
- :func:`parse_container_fields` — imagePullPolicy, terminationMessagePath/Policy, resizePolicy,
  tty, stdin, stdinOnce;
- :func:`parse_volume_mounts`, :func:`parse_extra_containers` — initContainers / sidecars entries;
- :func:`build_container` — the main container from a component's properties.

Every parser takes the authored value and the path it was read at, raises ``FieldError`` naming
that path, and returns plain dicts shaped like the Go JSON (omitempty fields left out).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from farm.core.errors import FieldError, PolicyRefusal
from farm.core.fields import (
    go_type_name,
    parse_bool_field,
    parse_int32_field,
    parse_int64_field,
    parse_list_field,
    parse_object_field,
    parse_string_field,
    required_string_field,
)
from farm.core.names import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from farm.core.policy import REFUSAL_RESOURCE_MAXIMUM, Policy
from farm.core.quantity import QuantityError, canonical_quantity, parse_quantity

DEFAULT_CPU_REQUEST = "100m"
DEFAULT_MEMORY_REQUEST = "128Mi"

# ---------------------------------------------------------------------------------------------
# small helpers


def reject_unknown_keys(obj: dict[str, Any], allowed: tuple[str, ...] | frozenset[str], path: str) -> None:
    """Refuse the alphabetically first key outside ``allowed``."""
    unknown = sorted(k for k in obj if k not in allowed)
    if unknown:
        raise FieldError(f'{path}: unrecognized key "{unknown[0]}"')


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _object(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FieldError(f"{path}: must be an object, got {go_type_name(value)}")
    return value


def _string_list(value: Any, path: str) -> list[str]:
    if not isinstance(value, list):
        raise FieldError(f"{path}: must be a list, got {go_type_name(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise FieldError(f"{path}[{index}]: must be a string, got {go_type_name(item)}")
    return list(value)


def _nonneg_int(obj: dict[str, Any], key: str, path: str, minimum: int = 0) -> tuple[int, bool]:
    value, present = parse_int32_field(obj, key, _join(path, key))
    if present and value < minimum:
        raise FieldError(f"{_join(path, key)}: must be >= {minimum}, got {value}")
    return value, present


# ---------------------------------------------------------------------------------------------
# image and names

_DIGEST = re.compile(r"@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}\Z")
_REFERENCE = re.compile(
    r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*\Z"
)
_TAG = re.compile(r"^[\w][\w.-]{0,127}\Z", re.ASCII)


def _split_image(image: str) -> tuple[str, str, str]:
    """``(repository, tag, digest)`` of an image reference; raises ValueError when it is none."""
    repository, digest = image, ""
    if "@" in image:
        repository, _, digest = image.partition("@")
        if not _DIGEST.match("@" + digest):
            raise ValueError("invalid digest")
    tag = ""
    last = repository.rsplit("/", 1)[-1]
    if ":" in last:
        repository, _, tag = repository.rpartition(":")
        if not _TAG.match(tag):
            raise ValueError("invalid tag")
    host, _, rest = repository.partition("/")
    checked = repository
    if rest and ("." in host or ":" in host or host == "localhost" or host != host.lower()):
        checked = rest
        if not re.match(r"^[A-Za-z0-9.-]+(?::[0-9]+)?\Z", host):
            raise ValueError("invalid registry")
    if not checked or not _REFERENCE.match(checked):
        raise ValueError("invalid repository")
    return repository, tag, digest


def validate_image(image: str, path: str = "image") -> None:
    """The tag rule: an image needs an explicit tag or digest, and ``:latest`` is refused."""
    try:
        _, tag, digest = _split_image(image)
    except ValueError:
        raise FieldError(f'{path}: image "{image}" rejected: not a valid image reference') from None
    if tag == "latest":
        raise FieldError(
            f'{path}: image "{image}" rejected: :latest tag not allowed; use an explicit version tag or digest'
        )
    if not tag and not digest:
        raise FieldError(
            f'{path}: image "{image}" rejected: no tag or digest specified; use an explicit version tag or digest'
        )


def check_container_name(name: str) -> None:
    """The main container is named after the component, so the name must be a DNS-1123 label."""
    if not is_dns1123_label(name):
        raise FieldError(
            f'component name "{name}" cannot name the main container: a container name must be a '
            "DNS-1123 label (lowercase letters, digits and '-', at most 63 characters, no dots)"
        )


def read_image(props: dict[str, Any], path: str = "image") -> str:
    image, present = parse_string_field(props, "image", path)
    if not present:
        raise FieldError(f"{path} is required")
    validate_image(image, path)
    return image


# ---------------------------------------------------------------------------------------------
# env

_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*\Z")
_FIELD_PATHS = frozenset(
    {
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.serviceAccountName",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    }
)
_SUBSCRIPT = re.compile(r"^metadata\.(labels|annotations)\['(.*)'\]\Z")
_RESOURCE_FIELDS = ("cpu", "memory", "ephemeral-storage")
_CPU_DIVISORS = ("1m", "1")
_MEMORY_DIVISORS = ("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
_VALUE_FROM_KEYS = ("secretKeyRef", "configMapKeyRef", "fieldRef", "resourceFieldRef", "fileKeyRef")


def _key_ref(ref: Any, kind: str) -> dict[str, Any]:
    ref = _object(ref, kind)
    reject_unknown_keys(ref, ("name", "key", "optional"), kind)
    key = required_string_field(ref, "key", kind)
    out: dict[str, Any] = {"key": key}
    name, present = parse_string_field(ref, "name", f"{kind}.name")
    if present:
        out["name"] = name
    optional, present = parse_bool_field(ref, "optional", f"{kind}.optional")
    if present:
        out["optional"] = optional
    return out


def _field_ref(ref: Any) -> dict[str, Any]:
    ref = _object(ref, "fieldRef")
    reject_unknown_keys(ref, ("fieldPath", "apiVersion"), "fieldRef")
    api_version, present = parse_string_field(ref, "apiVersion", "fieldRef.apiVersion")
    if present and api_version != "v1":
        raise FieldError(f'fieldRef.apiVersion: unsupported value "{api_version}", must be v1')
    field_path = required_string_field(ref, "fieldPath", "fieldRef")
    subscript = _SUBSCRIPT.match(field_path)
    if subscript:
        if not is_qualified_name(subscript.group(2)):
            raise FieldError(f'fieldRef.fieldPath: invalid key in "{field_path}": not a qualified name')
    elif field_path not in _FIELD_PATHS:
        raise FieldError(f'fieldRef.fieldPath: unsupported value "{field_path}"')
    out = {"fieldPath": field_path}
    if present:
        out["apiVersion"] = api_version
    return out


def _resource_field_ref(ref: Any) -> dict[str, Any]:
    ref = _object(ref, "resourceFieldRef")
    reject_unknown_keys(ref, ("resource", "containerName", "divisor"), "resourceFieldRef")
    resource = required_string_field(ref, "resource", "resourceFieldRef")
    scope, _, name = resource.partition(".")
    if scope not in ("limits", "requests") or not (name in _RESOURCE_FIELDS or name.startswith("hugepages-")):
        raise FieldError(f'resourceFieldRef.resource: unsupported value "{resource}"')
    out: dict[str, Any] = {"resource": resource}
    container, present = parse_string_field(ref, "containerName", "resourceFieldRef.containerName")
    if present:
        if not is_dns1123_label(container):
            raise FieldError(f'resourceFieldRef.containerName: "{container}" is not a valid DNS-1123 label')
        out["containerName"] = container
    if ref.get("divisor") is not None:
        divisor = ref["divisor"]
        if not isinstance(divisor, str):
            raise FieldError(f"resourceFieldRef.divisor: must be a string, got {go_type_name(divisor)}")
        allowed = _CPU_DIVISORS if name == "cpu" else _MEMORY_DIVISORS
        if divisor not in allowed:
            raise FieldError(
                f'resourceFieldRef.divisor: unsupported value "{divisor}" for {name}, must be one of '
                + ", ".join(allowed)
            )
        out["divisor"] = divisor
    return out


def _file_key_ref(ref: Any) -> dict[str, Any]:
    ref = _object(ref, "fileKeyRef")
    reject_unknown_keys(ref, ("volumeName", "path", "key", "optional"), "fileKeyRef")
    volume = required_string_field(ref, "volumeName", "fileKeyRef")
    path = required_string_field(ref, "path", "fileKeyRef")
    key = required_string_field(ref, "key", "fileKeyRef")
    if not is_dns1123_label(volume):
        raise FieldError(f'fileKeyRef.volumeName: "{volume}" is not a valid DNS-1123 label')
    if path.startswith("/") or ".." in path.split("/"):
        raise FieldError(f'fileKeyRef.path: "{path}" must be a relative path without ".."')
    if not _ENV_NAME.match(key):
        raise FieldError(f'fileKeyRef.key: "{key}" is not a valid environment variable name')
    out: dict[str, Any] = {"volumeName": volume, "path": path, "key": key}
    optional, present = parse_bool_field(ref, "optional", "fileKeyRef.optional")
    if present:
        out["optional"] = optional
    return out


def _value_from(value: Any) -> dict[str, Any]:
    value = _object(value, "valueFrom")
    reject_unknown_keys(value, _VALUE_FROM_KEYS, "valueFrom")
    present = [k for k in _VALUE_FROM_KEYS if value.get(k) is not None]
    if len(present) != 1:
        raise FieldError("valueFrom: exactly one of " + ", ".join(_VALUE_FROM_KEYS) + " must be set")
    kind = present[0]
    parsers = {
        "secretKeyRef": lambda v: _key_ref(v, "secretKeyRef"),
        "configMapKeyRef": lambda v: _key_ref(v, "configMapKeyRef"),
        "fieldRef": _field_ref,
        "resourceFieldRef": _resource_field_ref,
        "fileKeyRef": _file_key_ref,
    }
    return {kind: parsers[kind](value[kind])}


def _env_var(entry: Any, label: str) -> dict[str, Any]:
    entry = _object(entry, label)
    reject_unknown_keys(entry, ("name", "value", "valueFrom"), label)
    name, present = parse_string_field(entry, "name", f"{label}.name")
    if not present:
        raise FieldError(f"{label}: name is required")
    out: dict[str, Any] = {"name": name}
    value = entry.get("value")
    if value is not None and not isinstance(value, str):
        raise FieldError(f"{label}.value: must be a string, got {go_type_name(value)}")
    if entry.get("valueFrom") is not None:
        if value:
            raise FieldError(f"{label}: value and valueFrom are mutually exclusive")
        try:
            out["valueFrom"] = _value_from(entry["valueFrom"])
        except FieldError as exc:
            raise FieldError(f"{label}: {exc.message}") from None
    elif value:
        out["value"] = value
    return out


def parse_env(value: Any, path: str = "env") -> list[dict[str, Any]]:
    """An env list: every entry named, value xor valueFrom, valueFrom exactly one source."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(f"{path}: must be a list, got {go_type_name(value)}")
    return [_env_var(entry, f"{path}[{index}]") for index, entry in enumerate(value)]


def _env_from_ref(ref: Any, kind: str) -> dict[str, Any]:
    ref = _object(ref, kind)
    reject_unknown_keys(ref, ("name", "optional"), kind)
    name = required_string_field(ref, "name", kind)
    if not is_dns1123_subdomain(name):
        raise FieldError(f'{kind}.name: "{name}" is not a valid DNS-1123 subdomain')
    out: dict[str, Any] = {"name": name}
    optional, present = parse_bool_field(ref, "optional", f"{kind}.optional")
    if present:
        out["optional"] = optional
    return out


def _env_from_entry(entry: Any, label: str) -> dict[str, Any]:
    entry = _object(entry, label)
    reject_unknown_keys(entry, ("prefix", "configMapRef", "secretRef"), label)
    out: dict[str, Any] = {}
    prefix, present = parse_string_field(entry, "prefix", f"{label}.prefix")
    if present:
        if any(ch == "=" or not (32 <= ord(ch) < 127) for ch in prefix):
            raise FieldError(f'{label}.prefix: "{prefix}" must be printable ASCII characters other than "="')
        out["prefix"] = prefix
    refs = [k for k in ("configMapRef", "secretRef") if entry.get(k) is not None]
    if len(refs) != 1:
        raise FieldError(f"{label}: exactly one of configMapRef and secretRef must be set")
    try:
        out[refs[0]] = _env_from_ref(entry[refs[0]], refs[0])
    except FieldError as exc:
        raise FieldError(f"{label}: {exc.message}") from None
    return out


def parse_env_from(value: Any, path: str = "envFrom") -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(f"{path}: must be a list, got {go_type_name(value)}")
    return [_env_from_entry(entry, f"{path}[{index}]") for index, entry in enumerate(value)]


# ---------------------------------------------------------------------------------------------
# resources

_FRACTIONAL = frozenset({"cpu", "memory", "storage", "ephemeral-storage"})


def _check_resource_name(name: str, path: str) -> None:
    if "/" not in name:
        if name in ("cpu", "memory", "ephemeral-storage") or name.startswith("hugepages-"):
            return
        raise FieldError(f'{path}: unsupported resource name "{name}"')
    if "kubernetes.io/" in name or name.startswith("requests.") or not is_qualified_name(name):
        raise FieldError(f'{path}: unsupported resource name "{name}"')


def _resource_list(value: Any, path: str) -> dict[str, str]:
    """A requests or limits map, every quantity canonical."""
    if value is None:
        return {}
    value = _object(value, path)
    out: dict[str, str] = {}
    for name in sorted(value):
        quantity = value[name]
        if quantity is None:
            continue
        entry_path = f"{path}.{name}"
        _check_resource_name(name, entry_path)
        if isinstance(quantity, bool) or not isinstance(quantity, (str, int, float)):
            raise FieldError(f"{entry_path}: must be a quantity, got {go_type_name(quantity)}")
        try:
            amount = parse_quantity(quantity)
        except QuantityError:
            raise FieldError(f"{entry_path}: invalid quantity {quantity!r}") from None
        if amount < 0:
            raise FieldError(f"{entry_path}: must be non-negative, got {quantity}")
        if name not in _FRACTIONAL and not name.startswith("hugepages-") and amount.denominator != 1:
            raise FieldError(f"{entry_path}: must be a whole number, got {quantity}")
        if name.startswith("hugepages-"):
            try:
                page = parse_quantity(name.removeprefix("hugepages-"))
            except QuantityError:
                raise FieldError(f'{entry_path}: unsupported resource name "{name}"') from None
            if page <= 0 or (amount / page).denominator != 1:
                raise FieldError(f"{entry_path}: {quantity} is not a whole number of {name} pages")
        out[name] = canonical_quantity(quantity)
    return out


def parse_resources(value: Any, path: str = "resources") -> dict[str, dict[str, str]]:
    """The authored requests/limits (canonical quantities), checked as admission checks them."""
    if value is None:
        return {}
    value = _object(value, path)
    if "claims" in value:
        raise FieldError(
            f"{path}.claims: not read by this component — declare pod-level claims with resourceClaims; "
            "container claim references are not supported"
        )
    reject_unknown_keys(value, ("requests", "limits"), path)
    requests = _resource_list(value.get("requests"), f"{path}.requests")
    limits = _resource_list(value.get("limits"), f"{path}.limits")
    for name, request in requests.items():
        overcommittable = name in _FRACTIONAL
        if name in limits:
            if parse_quantity(request) > parse_quantity(limits[name]):
                raise FieldError(f"{path}: {name}: request {request} must not exceed limit {limits[name]}")
            if not overcommittable and parse_quantity(request) != parse_quantity(limits[name]):
                raise FieldError(f"{path}: {name}: request {request} must equal limit {limits[name]}")
        elif not overcommittable:
            raise FieldError(f"{path}: {name}: a request needs an equal limit (not overcommittable)")
    out: dict[str, dict[str, str]] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


@dataclass
class EffectiveResources:
    """The effective requests/limits and which entries came from the intrinsic tier."""

    resources: dict[str, dict[str, str]]
    generated: set[tuple[str, str]] = field(default_factory=set)


def _policy_default(policy: Policy, section: str, name: str) -> str | None:
    defaults = {
        ("requests", "cpu"): policy.default_cpu_request,
        ("requests", "memory"): policy.default_memory_request,
        ("limits", "cpu"): policy.default_cpu_limit,
        ("limits", "memory"): policy.default_memory_limit,
    }
    value = defaults[(section, name)]
    if not value:
        return None
    if parse_quantity(value) < 0:
        raise FieldError(f"resources.{section}.{name}: policy default {value} must not be negative")
    return canonical_quantity(value)


def build_resource_requirements(authored: dict[str, dict[str, str]], policy: Policy) -> EffectiveResources:
    """Authored, then the policy defaults, then the intrinsic tier: cpu request 100m, memory
    request 128Mi, and a memory limit mirroring the (possibly defaulted) memory request."""
    requests = dict(authored.get("requests") or {})
    limits = dict(authored.get("limits") or {})
    for section, target in (("requests", requests), ("limits", limits)):
        for name in ("cpu", "memory"):
            if name not in target:
                default = _policy_default(policy, section, name)
                if default is not None:
                    target[name] = default
    generated: set[tuple[str, str]] = set()
    if "cpu" not in requests:
        requests["cpu"] = DEFAULT_CPU_REQUEST
        generated.add(("requests", "cpu"))
    if "memory" not in requests:
        requests["memory"] = DEFAULT_MEMORY_REQUEST
        generated.add(("requests", "memory"))
    if "memory" not in limits:
        limits["memory"] = requests["memory"]
        generated.add(("limits", "memory"))
    return EffectiveResources({"limits": limits, "requests": requests}, generated)


def enforce_resource_maximum(effective: EffectiveResources, policy: Policy, where: str) -> None:
    """MaxCPU/MaxMemory against the effective values; an intrinsic value is named as such."""
    maxima = {"cpu": policy.max_cpu, "memory": policy.max_memory}
    for section in ("requests", "limits"):
        for name, maximum in maxima.items():
            value = effective.resources.get(section, {}).get(name)
            if not maximum or value is None:
                continue
            if parse_quantity(value) > parse_quantity(maximum):
                origin = " (generated default)" if (section, name) in effective.generated else ""
                raise PolicyRefusal(
                    f"{where}resources.{section}.{name}: {value}{origin} exceeds enforced maximum {maximum}",
                    REFUSAL_RESOURCE_MAXIMUM,
                )


# ---------------------------------------------------------------------------------------------
# ports

_PORT_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?\Z")
_PROTOCOLS = ("TCP", "UDP", "SCTP")


def is_valid_port_name(name: str) -> bool:
    """IANA service name: [-a-z0-9], at least one letter, no leading/trailing/adjacent '-', <= 15."""
    return (
        0 < len(name) <= 15
        and bool(_PORT_NAME.match(name))
        and "--" not in name
        and any(c.isalpha() for c in name)
    )


def read_port_number(obj: dict[str, Any], key: str, path: str) -> tuple[int, bool]:
    value, present = parse_int32_field(obj, key, path)
    if present and not 1 <= value <= 65535:
        raise FieldError(f"{path}: must be between 1 and 65535, got {value}")
    return value, present


def parse_ports(value: Any, path: str = "ports") -> list[dict[str, Any]]:
    """A corev1.ContainerPort list: closed entries, IANA names, TCP/UDP/SCTP, no repeats."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(f"{path}: must be a list, got {go_type_name(value)}")
    ports: list[dict[str, Any]] = []
    for index, entry in enumerate(value):
        label = f"{path}[{index}]"
        entry = _object(entry, label)
        reject_unknown_keys(entry, ("name", "containerPort", "protocol", "hostPort", "hostIP"), label)
        number, present = read_port_number(entry, "containerPort", f"{label}.containerPort")
        if not present:
            raise FieldError(f"{label}: containerPort is required")
        port: dict[str, Any] = {"containerPort": number}
        name, named = parse_string_field(entry, "name", f"{label}.name")
        if entry.get("name") == "":
            raise FieldError(f'{label}.name: "" is not a valid port name')
        if named:
            if not is_valid_port_name(name):
                raise FieldError(f'{label}.name: "{name}" is not a valid port name (IANA service name)')
            port["name"] = name
        protocol = entry.get("protocol")
        if protocol is not None:
            if not isinstance(protocol, str):
                raise FieldError(f"{label}.protocol: must be a string, got {go_type_name(protocol)}")
            if protocol not in _PROTOCOLS:
                raise FieldError(
                    f'{label}.protocol: invalid value "{protocol}", must be one of TCP, UDP, SCTP'
                )
            port["protocol"] = protocol
        host_port, present = read_port_number(entry, "hostPort", f"{label}.hostPort")
        if present:
            port["hostPort"] = host_port
        host_ip, present = parse_string_field(entry, "hostIP", f"{label}.hostIP")
        if present:
            port["hostIP"] = host_ip
        _check_repeat(ports, port, label)
        ports.append(port)
    return ports


def _check_repeat(ports: list[dict[str, Any]], port: dict[str, Any], label: str) -> None:
    for earlier in ports:
        if port.get("name") and earlier.get("name") == port["name"]:
            raise FieldError(f'{label}.name: "{port["name"]}" is named by an earlier port')
        same_protocol = earlier.get("protocol", "TCP") == port.get("protocol", "TCP")
        if earlier["containerPort"] == port["containerPort"] and same_protocol:
            raise FieldError(
                f"{label}: containerPort {port['containerPort']}/{port.get('protocol', 'TCP')} "
                "is declared by an earlier port"
            )


# ---------------------------------------------------------------------------------------------
# probes and lifecycle

_PROBE_KEYS = ("readiness", "liveness", "startup")
_PROBE_HANDLERS = ("httpGet", "tcpSocket", "exec", "grpc")
_PROBE_TIMING = (
    "initialDelaySeconds",
    "periodSeconds",
    "timeoutSeconds",
    "successThreshold",
    "failureThreshold",
    "terminationGracePeriodSeconds",
)
_HEADER_NAME = re.compile(r"^[-!#$%&'*+.^_`|~0-9A-Za-z]+\Z")


@dataclass(frozen=True)
class PortNames:
    """The names a named probe/hook port may resolve against, and why none may."""

    names: tuple[str, ...]
    kind: str = ""


def _probe_port(obj: dict[str, Any], path: str, ports: PortNames) -> int | str:
    value = obj.get("port")
    if value is None:
        raise FieldError(f"{path}: port is required")
    if isinstance(value, str):
        if not is_valid_port_name(value):
            raise FieldError(f'{path}.port: "{value}" is not a valid port name')
        if not ports.names:
            raise FieldError(
                f'{path}.port: named port "{value}" cannot resolve: the container declares no ports'
            )
        if value not in ports.names:
            raise FieldError(
                f'{path}.port: named port "{value}" is not declared by the container '
                f"(declared: {', '.join(ports.names)})"
            )
        return value
    number, _ = read_port_number(obj, "port", f"{path}.port")
    return number


def _exec_action(value: Any, path: str) -> dict[str, Any]:
    value = _object(value, path)
    reject_unknown_keys(value, ("command",), path)
    command = (
        _string_list(value.get("command"), f"{path}.command") if value.get("command") is not None else []
    )
    return {"command": command} if command else {}


def _http_get(value: Any, path: str, ports: PortNames) -> dict[str, Any]:
    value = _object(value, path)
    reject_unknown_keys(value, ("port", "path", "host", "scheme", "httpHeaders"), path)
    out: dict[str, Any] = {"port": _probe_port(value, path, ports)}
    for key in ("path", "host"):
        text, present = parse_string_field(value, key, f"{path}.{key}")
        if present:
            out[key] = text
    scheme, present = parse_string_field(value, "scheme", f"{path}.scheme")
    if present:
        if scheme.upper() not in ("HTTP", "HTTPS"):
            raise FieldError(f'{path}.scheme: invalid value "{scheme}", must be HTTP or HTTPS')
        out["scheme"] = scheme.upper()
    headers, present = parse_list_field(value, "httpHeaders", f"{path}.httpHeaders")
    if present and headers:
        out["httpHeaders"] = [_http_header(h, f"{path}.httpHeaders[{i}]") for i, h in enumerate(headers)]
    return out


def _http_header(value: Any, path: str) -> dict[str, Any]:
    value = _object(value, path)
    reject_unknown_keys(value, ("name", "value"), path)
    name, present = parse_string_field(value, "name", f"{path}.name")
    if not present:
        raise FieldError(f"{path}: name is required")
    if not _HEADER_NAME.match(name):
        raise FieldError(f'{path}.name: "{name}" is not a valid HTTP header name')
    text = value.get("value")
    if text is not None and not isinstance(text, str):
        raise FieldError(f"{path}.value: must be a string, got {go_type_name(text)}")
    return {"name": name, "value": text or ""}


def _tcp_socket(value: Any, path: str, ports: PortNames) -> dict[str, Any]:
    value = _object(value, path)
    reject_unknown_keys(value, ("port", "host"), path)
    out: dict[str, Any] = {"port": _probe_port(value, path, ports)}
    host, present = parse_string_field(value, "host", f"{path}.host")
    if present:
        out["host"] = host
    return out


def _grpc(value: Any, path: str) -> dict[str, Any]:
    value = _object(value, path)
    reject_unknown_keys(value, ("port", "service"), path)
    if isinstance(value.get("port"), str):
        raise FieldError(f"{path}.port: a grpc port must be a number, not a named port")
    port, present = read_port_number(value, "port", f"{path}.port")
    if not present:
        raise FieldError(f"{path}: port is required")
    out: dict[str, Any] = {"port": port}
    service = value.get("service")
    if service is not None:
        if not isinstance(service, str):
            raise FieldError(f"{path}.service: must be a string, got {go_type_name(service)}")
        if len(service) > 63:
            raise FieldError(f"{path}.service: must be no more than 63 characters")
        out["service"] = service
    return out


def _probe(value: Any, path: str, which: str, ports: PortNames) -> dict[str, Any]:
    value = _object(value, path)
    reject_unknown_keys(value, _PROBE_HANDLERS + _PROBE_TIMING, path)
    handlers = [k for k in _PROBE_HANDLERS if value.get(k) is not None]
    for key in handlers:
        _object(value[key], f"{path}.{key}")
    if not handlers:
        raise FieldError(f"{path}: must specify a handler (one of httpGet, tcpSocket, exec, grpc)")
    if len(handlers) > 1:
        raise FieldError(f"{path}: may not specify more than one handler, got {', '.join(handlers)}")
    key = handlers[0]
    out: dict[str, Any] = {}
    if key == "exec":
        action = _exec_action(value[key], f"{path}.exec")
        if not action:
            raise FieldError(f"{path}.exec.command: must be a non-empty list of strings")
        out["exec"] = action
    elif key == "httpGet":
        out["httpGet"] = _http_get(value[key], f"{path}.httpGet", ports)
    elif key == "tcpSocket":
        out["tcpSocket"] = _tcp_socket(value[key], f"{path}.tcpSocket", ports)
    else:
        out["grpc"] = _grpc(value[key], f"{path}.grpc")
    out.update(_probe_timing(value, path, which))
    return out


def _probe_timing(value: dict[str, Any], path: str, which: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    minimums = {"initialDelaySeconds": 0, "terminationGracePeriodSeconds": 1}
    for key in _PROBE_TIMING:
        number, present = _nonneg_int(value, key, path, minimums.get(key, 1))
        if not present:
            continue
        if key == "successThreshold" and which != "readiness" and number != 1:
            raise FieldError(f"{path}.successThreshold: must be 1 on a {which} probe, got {number}")
        if key == "terminationGracePeriodSeconds":
            if which == "readiness":
                raise FieldError(f"{path}.terminationGracePeriodSeconds: not allowed on a readiness probe")
            out[key] = number
        elif number:
            out[key] = number
    return out


def parse_probes(value: Any, ports: PortNames, path: str = "probes") -> dict[str, Any]:
    """``probes: {readiness, liveness, startup}`` as container probe fields."""
    if value is None:
        return {}
    value = _object(value, path)
    reject_unknown_keys(value, _PROBE_KEYS, path)
    out: dict[str, Any] = {}
    for which in _PROBE_KEYS:
        if value.get(which) is not None:
            out[f"{which}Probe"] = _probe(value[which], f"{path}.{which}", which, ports)
    return out


def _hook(value: Any, path: str, ports: PortNames) -> dict[str, Any]:
    value = _object(value, path)
    if "tcpSocket" in value:
        raise FieldError(f"{path}.tcpSocket: not supported on a lifecycle hook")
    reject_unknown_keys(value, ("exec", "httpGet", "sleep"), path)
    handlers = [k for k in ("exec", "httpGet", "sleep") if value.get(k) is not None]
    for key in handlers:
        _object(value[key], f"{path}.{key}")
    if len(handlers) > 1:
        raise FieldError(f"{path}: may not specify more than one handler, got {', '.join(handlers)}")
    if not handlers:
        raise FieldError(f"{path}: must specify a handler (one of exec, httpGet, sleep)")
    key = handlers[0]
    if key == "exec":
        return {"exec": _exec_action(value[key], f"{path}.exec")}
    if key == "httpGet":
        return {"httpGet": _http_get(value[key], f"{path}.httpGet", ports)}
    sleep = value[key]
    reject_unknown_keys(sleep, ("seconds",), f"{path}.sleep")
    seconds, present = parse_int64_field(sleep, "seconds", f"{path}.sleep.seconds")
    if not present:
        raise FieldError(f"{path}.sleep: seconds is required")
    if seconds < 0:
        raise FieldError(f"{path}.sleep.seconds: must be >= 0, got {seconds}")
    return {"sleep": {"seconds": seconds}}


def parse_lifecycle(value: Any, ports: PortNames, path: str = "lifecycle") -> dict[str, Any]:
    if value is None:
        return {}
    value = _object(value, path)
    reject_unknown_keys(value, ("postStart", "preStop"), path)
    out = {
        k: _hook(value[k], f"{path}.{k}", ports) for k in ("postStart", "preStop") if value.get(k) is not None
    }
    return out


# ---------------------------------------------------------------------------------------------
# securityContext

_SECURITY_KEYS = (
    "runAsUser",
    "runAsGroup",
    "runAsNonRoot",
    "readOnlyRootFilesystem",
    "allowPrivilegeEscalation",
    "privileged",
    "capabilities",
    "seccompProfile",
    "seLinuxOptions",
    "appArmorProfile",
    "procMount",
    "windowsOptions",
)


def _profile(value: Any, path: str, types: tuple[str, ...]) -> dict[str, Any]:
    value = _object(value, path)
    reject_unknown_keys(value, ("type", "localhostProfile"), path)
    kind, present = parse_string_field(value, "type", f"{path}.type")
    if not present:
        raise FieldError(f"{path}: type is required")
    if kind not in types:
        raise FieldError(f'{path}.type: invalid value "{kind}", must be one of {", ".join(types)}')
    out: dict[str, Any] = {"type": kind}
    localhost = value.get("localhostProfile")
    if kind != "Localhost":
        if localhost is not None:
            parse_string_field(value, "localhostProfile", f"{path}.localhostProfile")
            raise FieldError(f"{path}.localhostProfile: may only be set with type Localhost")
        return out
    profile, present = parse_string_field(value, "localhostProfile", f"{path}.localhostProfile")
    if not present:
        raise FieldError(f"{path}: localhostProfile is required with type Localhost")
    if profile.startswith("/") or ".." in profile.split("/"):
        raise FieldError(f'{path}.localhostProfile: "{profile}" must be a relative path without ".."')
    out["localhostProfile"] = profile
    return out


def _capabilities(value: Any, path: str) -> dict[str, Any]:
    value = _object(value, path)
    reject_unknown_keys(value, ("add", "drop"), path)
    out: dict[str, Any] = {}
    for key in ("add", "drop"):
        if value.get(key) is not None:
            items = [c for c in _string_list(value[key], f"{path}.{key}") if c]
            if items:
                out[key] = items
    return out


def _se_linux(value: Any, path: str) -> dict[str, Any]:
    value = _object(value, path)
    reject_unknown_keys(value, ("user", "role", "type", "level"), path)
    out = {}
    for key in ("user", "role", "type", "level"):
        text, present = parse_string_field(value, key, f"{path}.{key}")
        if present:
            out[key] = text
    return out


def parse_windows_options(value: Any, path: str) -> dict[str, Any]:
    value = _object(value, path)
    keys = ("gmsaCredentialSpecName", "gmsaCredentialSpec", "runAsUserName", "hostProcess")
    reject_unknown_keys(value, keys, path)
    out: dict[str, Any] = {}
    name, present = parse_string_field(value, "gmsaCredentialSpecName", f"{path}.gmsaCredentialSpecName")
    if present:
        if not is_dns1123_subdomain(name):
            raise FieldError(f'{path}.gmsaCredentialSpecName: "{name}" is not a valid DNS-1123 subdomain')
        out["gmsaCredentialSpecName"] = name
    spec, present = parse_string_field(value, "gmsaCredentialSpec", f"{path}.gmsaCredentialSpec")
    if present:
        if len(spec.encode()) > 64 * 1024:
            raise FieldError(f"{path}.gmsaCredentialSpec: must be at most 64 KiB")
        out["gmsaCredentialSpec"] = spec
    user, present = parse_string_field(value, "runAsUserName", f"{path}.runAsUserName")
    if present:
        _check_windows_user(user, f"{path}.runAsUserName")
        out["runAsUserName"] = user
    host_process, present = parse_bool_field(value, "hostProcess", f"{path}.hostProcess")
    if present:
        out["hostProcess"] = host_process
    return out


def _check_windows_user(user: str, path: str) -> None:
    domain, _, name = user.rpartition("\\")
    invalid = any(ord(c) < 32 or ord(c) == 127 for c in user)
    invalid = invalid or len(domain) >= 256 or not name or len(name) > 104
    invalid = invalid or set(name) <= {".", " "} or any(c in '"/\\:;|=,+*?<>@[]' for c in name)
    if invalid:
        raise FieldError(f'{path}: "{user}" is not a valid Windows user name (USER or DOMAIN\\USER)')


def parse_security_context(value: Any, path: str = "securityContext") -> dict[str, Any] | None:
    """A container securityContext, closed, with its contradictions refused."""
    if value is None:
        return None
    value = _object(value, path)
    reject_unknown_keys(value, _SECURITY_KEYS, path)
    out: dict[str, Any] = {}
    for key in ("runAsUser", "runAsGroup"):
        number, present = parse_int64_field(value, key, f"{path}.{key}")
        if present:
            if number < 0:
                raise FieldError(f"{path}.{key}: must be >= 0, got {number}")
            out[key] = number
    for key in ("runAsNonRoot", "readOnlyRootFilesystem", "allowPrivilegeEscalation", "privileged"):
        flag, present = parse_bool_field(value, key, f"{path}.{key}")
        if present:
            out[key] = flag
    nested = {
        "capabilities": lambda v: _capabilities(v, f"{path}.capabilities"),
        "seccompProfile": lambda v: _profile(
            v, f"{path}.seccompProfile", ("RuntimeDefault", "Unconfined", "Localhost")
        ),
        "appArmorProfile": lambda v: _profile(
            v, f"{path}.appArmorProfile", ("RuntimeDefault", "Unconfined", "Localhost")
        ),
        "seLinuxOptions": lambda v: _se_linux(v, f"{path}.seLinuxOptions"),
        "windowsOptions": lambda v: parse_windows_options(v, f"{path}.windowsOptions"),
    }
    for key, parser in nested.items():
        if value.get(key) is not None:
            out[key] = parser(value[key])
    proc_mount, present = parse_string_field(value, "procMount", f"{path}.procMount")
    if present:
        if proc_mount not in ("Default", "Unmasked"):
            raise FieldError(
                f'{path}.procMount: invalid value "{proc_mount}", must be one of Default, Unmasked'
            )
        out["procMount"] = proc_mount
    _check_contradictions(out, path)
    return out


def _check_contradictions(ctx: dict[str, Any], path: str) -> None:
    if ctx.get("runAsUser") == 0 and ctx.get("runAsNonRoot") is True:
        raise FieldError(
            f"{path}: runAsUser 0 contradicts runAsNonRoot: true (the container could never start)"
        )
    if ctx.get("privileged") is True and ctx.get("allowPrivilegeEscalation") is False:
        raise FieldError(f"{path}: privileged: true contradicts allowPrivilegeEscalation: false")
    if (
        "CAP_SYS_ADMIN" in (ctx.get("capabilities") or {}).get("add", [])
        and ctx.get("allowPrivilegeEscalation") is False
    ):
        raise FieldError(
            f"{path}: capabilities.add CAP_SYS_ADMIN contradicts allowPrivilegeEscalation: false"
        )


# ---------------------------------------------------------------------------------------------
# the seven container fields

CONTAINER_FIELD_KEYS = (
    "imagePullPolicy",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "resizePolicy",
    "tty",
    "stdin",
    "stdinOnce",
)


def _enum(obj: dict[str, Any], key: str, allowed: tuple[str, ...], path: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise FieldError(f"{path}: must be a string, got {go_type_name(value)}")
    if value not in allowed:
        raise FieldError(f'{path}: invalid value "{value}", must be one of {", ".join(allowed)}')
    return value


def parse_container_fields(props: dict[str, Any], init: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    policy = _enum(props, "imagePullPolicy", ("Always", "IfNotPresent", "Never"), "imagePullPolicy")
    if policy:
        out["imagePullPolicy"] = policy
    path, present = parse_string_field(props, "terminationMessagePath", "terminationMessagePath")
    if present:
        out["terminationMessagePath"] = path
    message_policy = _enum(
        props, "terminationMessagePolicy", ("File", "FallbackToLogsOnError"), "terminationMessagePolicy"
    )
    if message_policy:
        out["terminationMessagePolicy"] = message_policy
    for key in ("tty", "stdin", "stdinOnce"):
        flag, _ = parse_bool_field(props, key, key)
        if flag:
            out[key] = True
    resize = _resize_policy(props.get("resizePolicy"), init)
    if resize:
        out["resizePolicy"] = resize
    return out


def _resize_policy(value: Any, init: bool) -> list[dict[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(f"resizePolicy: must be a list, got {go_type_name(value)}")
    out: list[dict[str, str]] = []
    for index, entry in enumerate(value):
        label = f"resizePolicy[{index}]"
        entry = _object(entry, label)
        reject_unknown_keys(entry, ("resourceName", "restartPolicy"), label)
        name = _enum(entry, "resourceName", ("cpu", "memory"), f"{label}.resourceName")
        restart = _enum(entry, "restartPolicy", ("NotRequired", "RestartContainer"), f"{label}.restartPolicy")
        if name is None:
            raise FieldError(f"{label}: resourceName is required")
        if restart is None:
            raise FieldError(f"{label}: restartPolicy is required")
        if any(e["resourceName"] == name for e in out):
            raise FieldError(
                f'{label}.resourceName: "{name}" is named by an earlier entry; name each resource once'
            )
        if init and restart == "RestartContainer":
            raise FieldError(f"{label}.restartPolicy: RestartContainer is not allowed on an init container")
        out.append({"resourceName": name, "restartPolicy": restart})
    return out


# ---------------------------------------------------------------------------------------------
# volumeMounts, volumeDevices and extra containers


def parse_volume_mounts(value: Any, path: str = "volumeMounts") -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(f"{path}: must be a list, got {go_type_name(value)}")
    mounts: list[dict[str, Any]] = []
    for index, entry in enumerate(value):
        label = f"{path}[{index}]"
        entry = _object(entry, label)
        reject_unknown_keys(entry, ("name", "mountPath", "readOnly", "subPath"), label)
        mount: dict[str, Any] = {
            "name": required_string_field(entry, "name", label),
            "mountPath": required_string_field(entry, "mountPath", label),
        }
        read_only, _ = parse_bool_field(entry, "readOnly", f"{label}.readOnly")
        if read_only:
            mount["readOnly"] = True
        sub_path, present = parse_string_field(entry, "subPath", f"{label}.subPath")
        if present:
            mount["subPath"] = sub_path
        if any(m["mountPath"] == mount["mountPath"] for m in mounts):
            raise FieldError(f'{label}.mountPath: "{mount["mountPath"]}" is already mounted')
        mounts.append(mount)
    return mounts


def parse_volume_devices(value: Any, path: str = "volumeDevices") -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(f"{path}: must be a list, got {go_type_name(value)}")
    devices: list[dict[str, Any]] = []
    for index, entry in enumerate(value):
        label = f"{path}[{index}]"
        entry = _object(entry, label)
        reject_unknown_keys(entry, ("name", "devicePath"), label)
        devices.append(
            {
                "name": required_string_field(entry, "name", label),
                "devicePath": required_string_field(entry, "devicePath", label),
            }
        )
    return devices


_COMMON_EXTRA_KEYS = (
    "name",
    "image",
    "command",
    "args",
    "env",
    "envFrom",
    "resources",
    "volumeMounts",
    "volumeDevices",
    "securityContext",
    "workingDir",
) + CONTAINER_FIELD_KEYS
INIT_KEYS = _COMMON_EXTRA_KEYS + ("restartPolicy", "restartPolicyRules")
SIDECAR_KEYS = _COMMON_EXTRA_KEYS + ("ports", "probes", "lifecycle")


@dataclass
class ExtraContainer:
    """An initContainers/sidecars entry, before the policy and resource tiers are applied."""

    label: str
    container: dict[str, Any]
    resources: dict[str, dict[str, str]]


def read_command_args(props: dict[str, Any], container: dict[str, Any]) -> None:
    for key in ("command", "args"):
        if props.get(key) is not None:
            items = _string_list(props[key], key)
            if items:
                container[key] = items


def read_working_dir(props: dict[str, Any], container: dict[str, Any]) -> None:
    working_dir, present = parse_string_field(props, "workingDir", "workingDir")
    if present:
        container["workingDir"] = working_dir


def _init_restart(entry: dict[str, Any], container: dict[str, Any]) -> None:
    restart = entry.get("restartPolicy")
    if restart is not None:
        if restart == "Always":
            raise FieldError(
                "restartPolicy: Always is not supported: a restartable init container (native sidecar) "
                "is not modeled; author it under sidecars"
            )
        if restart not in ("Never", "OnFailure"):
            raise FieldError(f'restartPolicy: invalid value "{restart}", must be one of Never, OnFailure')
        container["restartPolicy"] = restart
    rules = entry.get("restartPolicyRules")
    if rules is None:
        return
    if restart is None:
        raise FieldError("restartPolicyRules: requires restartPolicy")
    if not isinstance(rules, list):
        raise FieldError(f"restartPolicyRules: must be a list, got {go_type_name(rules)}")
    if len(rules) > 20:
        raise FieldError(f"restartPolicyRules: must have at most 20 rules, got {len(rules)}")
    container["restartPolicyRules"] = [
        _restart_rule(r, f"restartPolicyRules[{i}]") for i, r in enumerate(rules)
    ]


def _restart_rule(rule: Any, path: str) -> dict[str, Any]:
    rule = _object(rule, path)
    reject_unknown_keys(rule, ("action", "exitCodes"), path)
    action = rule.get("action")
    if action is None:
        raise FieldError(f"{path}: action is required")
    if action != "Restart":
        raise FieldError(f'{path}.action: invalid value "{action}", must be Restart')
    codes = rule.get("exitCodes")
    if codes is None:
        raise FieldError(f"{path}: exitCodes is required")
    codes = _object(codes, f"{path}.exitCodes")
    reject_unknown_keys(codes, ("operator", "values"), f"{path}.exitCodes")
    operator = _enum(codes, "operator", ("In", "NotIn"), f"{path}.exitCodes.operator")
    if operator is None:
        raise FieldError(f"{path}.exitCodes: operator is required")
    out: dict[str, Any] = {"operator": operator}
    values, present = parse_list_field(codes, "values", f"{path}.exitCodes.values")
    if present and values:
        numbers = [
            parse_int32_field({"v": v}, "v", f"{path}.exitCodes.values[{i}]")[0] for i, v in enumerate(values)
        ]
        if len(numbers) > 255:
            raise FieldError(f"{path}.exitCodes.values: must have at most 255 values")
        if len(set(numbers)) != len(numbers):
            raise FieldError(f"{path}.exitCodes.values: values must be unique")
        out["values"] = numbers
    return {"action": action, "exitCodes": out}


def _extra_container(entry: Any, label: str, sidecar: bool) -> ExtraContainer:
    entry = _object(entry, label)
    if not sidecar:
        for key in ("probes", "lifecycle"):
            if key in entry:
                raise FieldError(
                    f"{key}: not allowed on an init container, which runs to completion before the app "
                    "containers start; author them on a sidecar"
                )
    reject_unknown_keys(entry, SIDECAR_KEYS if sidecar else INIT_KEYS, "entry")
    name = required_string_field(entry, "name", "")
    if not is_dns1123_label(name):
        raise FieldError(f'name: "{name}" is not a valid container name (DNS-1123 label)')
    image = required_string_field(entry, "image", "")
    validate_image(image)
    container: dict[str, Any] = {"name": name, "image": image}
    read_command_args(entry, container)
    read_working_dir(entry, container)
    _put(container, "env", parse_env(entry.get("env")))
    _put(container, "envFrom", parse_env_from(entry.get("envFrom")))
    resources = parse_resources(entry.get("resources"))
    _put(container, "volumeMounts", parse_volume_mounts(entry.get("volumeMounts")))
    _put(container, "volumeDevices", parse_volume_devices(entry.get("volumeDevices")))
    security = parse_security_context(entry.get("securityContext"))
    if security is not None:
        container["securityContext"] = security
    container.update(parse_container_fields(entry, init=not sidecar))
    if sidecar:
        ports = parse_ports(entry.get("ports"))
        _put(container, "ports", ports)
        names = PortNames(tuple(p["name"] for p in ports if "name" in p))
        container.update(parse_probes(entry.get("probes"), names))
        lifecycle = parse_lifecycle(entry.get("lifecycle"), names)
        if lifecycle:
            container["lifecycle"] = lifecycle
    else:
        _init_restart(entry, container)
    return ExtraContainer(label=f'{label} "{name}"', container=container, resources=resources)


def _put(container: dict[str, Any], key: str, value: list[Any]) -> None:
    if value:
        container[key] = value


def parse_extra_containers(value: Any, key: str) -> list[ExtraContainer]:
    """``initContainers`` or ``sidecars``: closed entries, messages prefixed by the entry label."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(f"{key}: must be a list, got {go_type_name(value)}")
    entries = []
    for index, entry in enumerate(value):
        label = f"{key}[{index}]"
        name = entry.get("name") if isinstance(entry, dict) else None
        prefix = f'{label} "{name}"' if isinstance(name, str) and name else label
        try:
            entries.append(_extra_container(entry, label, sidecar=(key == "sidecars")))
        except FieldError as exc:
            raise FieldError(f"{prefix}: {exc.message}") from None
    return entries


# ---------------------------------------------------------------------------------------------
# the main container


@dataclass
class ContainerSpec:
    """A main container as parsed, before the resource tiers are applied."""

    container: dict[str, Any]
    resources: dict[str, dict[str, str]]


def parse_main_container(name: str, props: dict[str, Any], ports: list[dict[str, Any]]) -> ContainerSpec:
    """The main container of a workload kind: named after the component, every shared field read."""
    check_container_name(name)
    image = read_image(props)
    container: dict[str, Any] = {"name": name, "image": image}
    read_command_args(props, container)
    read_working_dir(props, container)
    _put(container, "env", parse_env(props.get("env")))
    _put(container, "envFrom", parse_env_from(props.get("envFrom")))
    resources_value, _ = parse_object_field(props, "resources", "resources")
    resources = parse_resources(props.get("resources") if resources_value else None)
    _put(container, "ports", ports)
    names = PortNames(tuple(p["name"] for p in ports if "name" in p))
    container.update(parse_probes(props.get("probes"), names))
    lifecycle = parse_lifecycle(props.get("lifecycle"), names)
    if lifecycle:
        container["lifecycle"] = lifecycle
    security = parse_security_context(props.get("securityContext"))
    if security is not None:
        container["securityContext"] = security
    container.update(parse_container_fields(props))
    return ContainerSpec(container=container, resources=resources)


def finish_container(
    container: dict[str, Any], resources: dict[str, dict[str, str]], policy: Policy, where: str = ""
) -> dict[str, Any]:
    """Apply the policy and intrinsic resource tiers, enforce the maxima, and return the container."""
    effective = build_resource_requirements(resources, policy)
    enforce_resource_maximum(effective, policy, where)
    container["resources"] = effective.resources
    return container
