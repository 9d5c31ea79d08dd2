"""The security-context trait: sets the pod and container security contexts for a Pod Security
Admission level. The pod context is backfilled only where unset; every container's context is
replaced (part A §3 "security-context")."""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import parse_bool_field, parse_int64_field
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import COMMON_KEYS, check_known_keys, require_pod_spec, string_prop

LEVELS = ("privileged", "baseline", "restricted")
KEYS = COMMON_KEYS | {"level", "runAsUser", "runAsGroup", "fsGroup", "readOnlyRootFilesystem"}
RUNTIME_DEFAULT = {"type": "RuntimeDefault"}


def _pod_context(level: str, props: dict[str, Any]) -> dict[str, Any]:
    context: dict[str, Any] = {}
    if level == "restricted":
        context = {"runAsNonRoot": True, "seccompProfile": dict(RUNTIME_DEFAULT)}
    for key in ("runAsUser", "runAsGroup", "fsGroup"):
        value, present = parse_int64_field(props, key)
        if present:
            if value < 0:
                raise FieldError(f"{key}: must be >= 0, got {value}")
            context[key] = value
    if level == "restricted" and context.get("runAsUser") == 0:
        raise FieldError('runAsUser: 0 runs as root, which the "restricted" level forbids')
    return context


def _container_context(level: str, props: dict[str, Any]) -> dict[str, Any]:
    context: dict[str, Any] = {}
    if level in ("baseline", "restricted"):
        context["allowPrivilegeEscalation"] = False
        context["privileged"] = False
    if level == "restricted":
        context.update(
            {"capabilities": {"drop": ["ALL"]}, "runAsNonRoot": True, "seccompProfile": dict(RUNTIME_DEFAULT)}
        )
    read_only, present = parse_bool_field(props, "readOnlyRootFilesystem")
    if present:
        context["readOnlyRootFilesystem"] = read_only
    return context


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    props = app.properties
    check_known_keys(props, KEYS)
    level = string_prop(props, "level") or "restricted"
    if level not in LEVELS:
        raise FieldError(f'level: must be one of {", ".join(LEVELS)}, got "{level}"')
    pod = require_pod_spec(app)
    backfill = _pod_context(level, props)
    if backfill:
        current = pod.get("securityContext") or {}
        pod["securityContext"] = {**backfill, **current}
    container_context = _container_context(level, props)
    for key in ("initContainers", "containers"):
        for container in pod.get(key) or []:
            if container_context:  # the privileged level leaves the containers as they are
                container["securityContext"] = {k: _copy(v) for k, v in container_context.items()}
    return []


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return list(value)
    return value


HANDLER = TraitType(name="security-context", apply=apply, capability="none")
