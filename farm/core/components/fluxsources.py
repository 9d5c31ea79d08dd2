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
from farm.core.errors import FieldError, PolicyRefusal
from farm.core.fields import go_type_name
from farm.core.names import shorten_name_with_suffix
from farm.core.policy import REFUSAL_REGISTRY, Policy, refuse

SOURCE_API = "source.toolkit.fluxcd.io/v1"
HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
DEFAULT_INTERVAL = "1h0m0s"  # 60m, written as Go's Duration.String()
GCS_HOST = "storage.googleapis.com"

_FLUX_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$")


def flux_duration(value: Any, field: str) -> str:
    """An authored Flux duration, checked on its text and on the form it is written in, and
    returned in that form (``10m`` -> ``10m0s``)."""
    if not isinstance(value, str):
        raise FieldError(f"{field}: must be a duration string, got {go_type_name(value)}")
    if not _FLUX_DURATION.fullmatch(value):
        raise FieldError(
            f'{field}: "{value}" is not a duration Flux accepts '
            r"(unsigned, in ms, s, m or h: ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$)"
        )
    try:
        nanoseconds = parse_duration(value)
    except DurationError as exc:
        raise FieldError(f"{field}: {exc}") from None
    written = format_duration(nanoseconds)
    if not _FLUX_DURATION.fullmatch(written):
        raise FieldError(
            f'{field}: "{value}" is below Flux\'s millisecond resolution (it would be written as {written})'
        )
    return written


def interval_or_default(value: Any, field: str = "interval") -> str:
    """``interval``: unset, null or a zero duration takes the 60m default."""
    if value is None or value == "":
        return DEFAULT_INTERVAL
    written = flux_duration(value, field)
    return DEFAULT_INTERVAL if written == "0s" else written


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


# --- the source kinds' allowlist (seed 002, helmrepository … helmchart, "Policy") ------------

_PLAIN_HOST = re.compile(
    r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
    r"|\[[0-9A-Fa-f:.]+\])(?::[0-9]+)?\Z"
)
_ZONE = re.compile(r"%[^\]]*(?=\])")


def raw_authority(url: str) -> str:
    """The text between ``scheme://`` and the first ``/`` (or the whole text when it has no scheme)."""
    rest = url.split("://", 1)[1] if "://" in url else url
    return rest.split("/", 1)[0]


def display_host(authority: str) -> tuple[str | None, tuple[str, ...]]:
    """``displayHost``: the authority reduced for a message, without userinfo, query, fragment or
    IPv6 zone (port kept), and what was dropped. None when the rest is no plain host (a DNS name,
    an IPv4 address or a bracketed IPv6 address, with an optional numeric port), or when a ``[``,
    ``]``, ``?`` or ``#``, which no userinfo holds, precedes the last ``@``."""
    dropped: list[str] = []
    at = authority.rfind("@")
    if at >= 0:
        if any(mark in authority[:at] for mark in "[]?#"):
            return None, ()
        authority = authority[at + 1 :]
        dropped.append("userinfo")
    for mark, what in (("#", "fragment"), ("?", "query")):
        if mark in authority:
            authority = authority.split(mark, 1)[0]
            dropped.append(what)
    if _ZONE.search(authority):
        authority = _ZONE.sub("", authority)
        dropped.append("zone")
    if not _PLAIN_HOST.match(authority):
        return None, tuple(dropped)
    return authority, tuple(dropped)


def _allowed_list(policy: Policy) -> str:
    return "[" + ", ".join(policy.allowed_registries) + "]"


def refuse_unlisted_host(policy: Policy, host: str | None, authority: str, where: str) -> None:
    """The host a source is fetched from must equal an allowed registry exactly, port included.
    The refusal names the host as :func:`display_host` reduces ``authority``, never the URL."""
    if not policy.allowed_registries:
        return
    if host is not None and host in {entry.rstrip("/") for entry in policy.allowed_registries}:
        return
    shown, dropped = display_host(authority)
    if shown is None:
        named = "the host (not shown: the URL names no plain host)"
    else:
        named = f'host "{shown}"' + (f" (shown without its {', '.join(dropped)})" if dropped else "")
    raise refuse(
        f"{where}: {named} is not in the allowed registries {_allowed_list(policy)}", REFUSAL_REGISTRY
    )


def _oci_registry(url: str) -> tuple[str, bool, str]:
    """(first segment, whether a / follows it, the rest) of an ``oci://`` URL."""
    registry, slash, repository = url[len("oci://") :].partition("/")
    return registry, bool(slash), repository


def _explicit_registry(registry: str) -> bool:
    return registry == "localhost" or "." in registry or ":" in registry


def _refuse_implicit_registry(where: str) -> PolicyRefusal:
    return refuse(
        f"{where}: an oci:// URL must name its registry explicitly, or Flux pulls it from Docker Hub "
        "(oci://<registry>/<repository>, e.g. oci://docker.io/library/app or "
        "oci://registry.example:5000/org/app)",
        REFUSAL_REGISTRY,
    )


def check_oci_source_url(policy: Policy, url: str, where: str, *, repository_required: bool) -> None:
    """An ``oci://`` source URL under a non-empty allowlist: an explicit registry (go-containerregistry
    reads any other first segment as a Docker Hub repository), a repository path where the source
    pulls the URL itself (an OCIRepository; a Helm repository may stop at the registry, since Flux
    appends the chart name), and a listed registry."""
    if not policy.allowed_registries:
        return
    registry, slash, repository = _oci_registry(url)
    if repository_required:
        if not slash or not _explicit_registry(registry):
            raise _refuse_implicit_registry(where)
        if not repository.strip("/"):
            raise refuse(
                f"{where}: an oci:// URL must name a repository after its registry (oci://<registry>/<repository>)",
                REFUSAL_REGISTRY,
            )
    elif not _explicit_registry(registry):
        raise _refuse_implicit_registry(where)
    refuse_unlisted_host(policy, url_host(url), raw_authority(url), where)


def check_bucket_endpoint(policy: Policy, endpoint: str, provider: str, where: str) -> None:
    """A Bucket is fetched from its endpoint, except under provider gcp (Google Cloud Storage's own
    host); an Amazon S3 endpoint is refused unless the provider is azure or gcp, since the S3 client
    then contacts the host of a region chosen at runtime."""
    if not policy.allowed_registries:
        return
    if provider == "gcp":
        refuse_unlisted_host(policy, GCS_HOST, GCS_HOST, where)
        return
    authority = raw_authority(endpoint)
    if "amazonaws" in endpoint.lower() and provider != "azure":
        shown, _ = display_host(authority)
        named = f'host "{shown}"' if shown else "the host"
        raise refuse(
            f"{where}: {named} is an Amazon S3 endpoint: the S3 client fetches from the host of the bucket's "
            "region, chosen at runtime, which the allowed registries cannot hold; use provider azure or gcp, "
            "or an endpoint that is not Amazon S3",
            REFUSAL_REGISTRY,
        )
    host = authority if "@" not in authority else None
    refuse_unlisted_host(policy, host, authority, where)


def check_source_policy(policy: Policy, kind: str, spec: dict[str, Any]) -> None:
    """The allowlist a source terminal holds its spec to, whoever built the spec (an authored
    source kind, or the helm and oci rules' generated sources): the url host of the three
    repositories, the endpoint of a Bucket; a HelmChart fetches nothing itself."""
    if kind == "HelmChart":
        return
    if kind == "Bucket":
        check_bucket_endpoint(policy, spec.get("endpoint", ""), spec.get("provider", ""), "bucket: endpoint")
        return
    url = spec.get("url", "")
    where = f"{kind.lower()}: url"
    if url.startswith("oci://"):
        check_oci_source_url(policy, url, where, repository_required=kind == "OCIRepository")
    else:
        refuse_unlisted_host(policy, url_host(url), raw_authority(url), where)
