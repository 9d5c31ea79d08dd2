"""The certificate trait: a cert-manager Certificate named after its ``secretName``, issued by the
issuer the ClusterProfile's certificate capability names (launcher-pipeline §1.4, §2)."""

from __future__ import annotations

from typing import Any

from farm.core.durations import DurationError, normalize_duration
from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_object_field, parse_string_list
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import (
    COMMON_KEYS,
    check_known_keys,
    check_rendering_keys,
    metadata,
    required_string,
    string_prop,
)

DEFAULT_ISSUER_KIND = "ClusterIssuer"
DEFAULT_DURATION = "2160h"
DEFAULT_RENEW_BEFORE = "360h"
ISSUER_KEYS = ("name", "kind", "group")
KEYS = COMMON_KEYS | {"secretName", "dnsNames", "commonName", "duration", "renewBefore", "issuerRef"}


def _issuer_ref(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FieldError(f"{path}: must be an object, got {go_type_name(value)}")
    check_known_keys(value, ISSUER_KEYS, path)
    ref = {"name": required_string(value, "name", f"{path}.name")}
    ref["kind"] = string_prop(value, "kind", f"{path}.kind") or DEFAULT_ISSUER_KIND
    group = string_prop(value, "group", f"{path}.group")
    if group:
        ref["group"] = group
    return ref


def validate_rendering(rendering: dict[str, Any], key: str) -> dict[str, Any]:
    """``issuerRef.name`` is required; ``issuerRef.kind`` defaults to ClusterIssuer."""
    check_rendering_keys(rendering, ("issuerRef",), "certificate")
    if rendering.get("issuerRef") is None:
        raise FieldError("issuerRef.name is required")
    rendering["issuerRef"] = _issuer_ref(rendering["issuerRef"], "issuerRef")
    return rendering


def _duration(props: dict[str, Any], key: str, default: str) -> str:
    value = string_prop(props, key) or default
    try:
        return normalize_duration(value)
    except DurationError as exc:
        raise FieldError(f"{key}: {exc}") from None


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    props = app.properties
    check_known_keys(props, KEYS)
    secret_name = required_string(props, "secretName")
    issuer, present = parse_object_field(props, "issuerRef")
    if not present:
        raise FieldError("issuerRef.name is required")
    spec: dict[str, Any] = {
        "secretName": secret_name,
        "issuerRef": _issuer_ref(issuer, "issuerRef"),
        "duration": _duration(props, "duration", DEFAULT_DURATION),
        "renewBefore": _duration(props, "renewBefore", DEFAULT_RENEW_BEFORE),
    }
    dns_names, _ = parse_string_list(props, "dnsNames")
    if dns_names:
        spec["dnsNames"] = list(dns_names)
    common_name = string_prop(props, "commonName")
    if common_name:
        spec["commonName"] = common_name
    certificate = {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": metadata(secret_name, app.ctx.namespace),
        "spec": spec,
    }
    return [certificate]


HANDLER = TraitType(
    name="certificate",
    apply=apply,
    capability="required",
    validate_rendering=validate_rendering,
    emits=("cert-manager.io/v1 Certificate",),
)
