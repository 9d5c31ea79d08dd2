"""Flux sources: the objects the helm and oci rules generate, and the shared Flux checks.

The helm rule's inline source and the oci rule's OCIRepository are built here (seed 002, helm
"An inline source also emits the source", oci "Lowering"), together with what every Flux kind
shares: the Flux duration check, the generated-source name ``<document>-source-<digest10>``, and
the registry allowlist on the host a source is fetched from.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any
from urllib.parse import urlsplit

from farm.core.durations import DurationError, format_duration, parse_duration
from farm.core.errors import FieldError
from farm.core.fields import go_type_name
from farm.core.policy import REFUSAL_REGISTRY, Policy, refuse

SOURCE_API = "source.toolkit.fluxcd.io/v1"
HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
DEFAULT_INTERVAL = "1h0m0s"  # 60m, written as Go's Duration.String()
MAX_NAME = 253

_FLUX_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$")


def flux_duration(value: Any, field: str) -> str:
    """An authored Flux duration, checked on its text and on the form it is written in, and
    returned in that form (``10m`` -> ``10m0s``)."""
    if not isinstance(value, str):
        raise FieldError(f"{field}: must be a duration string, got {go_type_name(value)}")
    if not _FLUX_DURATION.match(value):
        raise FieldError(
            f"{field}: {value!r} is not a duration Flux accepts "
            r"(unsigned, in ms, s, m or h: ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$)"
        )
    try:
        nanoseconds = parse_duration(value)
    except DurationError as exc:
        raise FieldError(f"{field}: {exc}") from None
    written = format_duration(nanoseconds)
    if not _FLUX_DURATION.match(written):
        raise FieldError(
            f"{field}: {value!r} is below Flux's millisecond resolution (it would be written as {written})"
        )
    return written


def interval_or_default(value: Any, field: str = "interval") -> str:
    """``interval``: unset, null or a zero duration takes the 60m default."""
    if value is None or value == "":
        return DEFAULT_INTERVAL
    written = flux_duration(value, field)
    return DEFAULT_INTERVAL if written == "0s" else written


def shorten_name_with_suffix(base: str, suffix: str, limit: int = MAX_NAME) -> str:
    """``oam.ShortenNameWithSuffix``: keep the suffix; cut ``base`` to a prefix plus the first 10
    hex digits of the sha256 of the whole base when the name would exceed ``limit``."""
    name = base + suffix
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(base.encode()).hexdigest()[:10]
    keep = limit - len(suffix) - len(digest) - 1
    return f"{base[:keep].rstrip('-.')}-{digest}{suffix}"


def generated_source_name(document: str, identity: str) -> str:
    """``<document>-source-<first 10 hex of sha256(identity)>``."""
    digest = hashlib.sha256(identity.encode()).hexdigest()[:10]
    return shorten_name_with_suffix(document, f"-source-{digest}")


def json_identity(prefix: str, fields: dict[str, str]) -> str:
    """``git:<JSON>`` / ``bucket:<JSON>``: JSON so a ``:`` inside a value cannot collide."""
    return f"{prefix}:{json.dumps(fields, separators=(',', ':'))}"


def source_object(kind: str, name: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": SOURCE_API,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def helm_repository_spec(url: str) -> dict[str, Any]:
    return {"interval": DEFAULT_INTERVAL, "url": url}


def oci_chart_repository_spec(url: str, version: str) -> dict[str, Any]:
    """The OCIRepository the helm rule generates: the chart content layer, copied unchanged."""
    return {
        "interval": DEFAULT_INTERVAL,
        "url": url,
        "ref": {"tag": version} if version else {},
        "layerSelector": {"mediaType": HELM_CHART_LAYER, "operation": "copy"},
    }


def git_repository_spec(url: str, ref: dict[str, str]) -> dict[str, Any]:
    return {"interval": DEFAULT_INTERVAL, "url": url, "ref": dict(ref)}


def bucket_spec(fields: dict[str, str]) -> dict[str, Any]:
    return {"interval": DEFAULT_INTERVAL, **{k: v for k, v in fields.items() if v}}


# --- registry allowlist -------------------------------------------------------------------


def url_host(url: str) -> str | None:
    """The host[:port] a source URL is fetched from; None when the URL names no plain host.
    An ssh user is dropped (``ssh://git@github.com/org`` -> ``github.com``)."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
    except ValueError:
        return None
    userinfo, at, hostport = netloc.rpartition("@")
    if at and parts.scheme != "ssh":
        return None  # a user or password never matches an entry
    return hostport or None


def check_allowed_host(policy: Policy, host: str | None, where: str) -> None:
    """The host must equal an allowed registry exactly (port included). Never echoes a URL."""
    if not policy.allowed_registries:
        return
    allowed = [entry.rstrip("/") for entry in policy.allowed_registries]
    if host is None or host not in allowed:
        shown = f"host {host!r}" if host else "the host"
        raise refuse(
            f"{where}: {shown} is not in the allowed registries {list(policy.allowed_registries)}",
            REFUSAL_REGISTRY,
        )


def check_oci_registry_named(policy: Policy, url: str, where: str) -> None:
    """Under a non-empty allowlist an ``oci://`` URL must name its registry explicitly."""
    if not policy.allowed_registries:
        return
    rest = url[len("oci://") :]
    registry, slash, _ = rest.partition("/")
    explicit = slash and (registry == "localhost" or "." in registry or ":" in registry)
    if not explicit:
        raise refuse(
            f"{where}: an oci:// URL must name its registry explicitly "
            "(oci://<registry>/<repository>, e.g. oci://docker.io/library/app)",
            REFUSAL_REGISTRY,
        )
