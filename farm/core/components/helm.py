"""helm: the role-named Helm component (seed 002, "helm", HelmRule).

Under ``delivery: flux`` (the default) a helm component becomes one HelmRelease, carrying the
component's traits, plus, for an inline source, a source object that belongs to the document:
a HelmRepository for an ``http(s)://`` URL, an OCIRepository for ``oci://``, a GitRepository
(``kind: GitRepository``) or a Bucket (``kind: Bucket``). The source is named
``<document>-source-<first 10 hex of sha256(identity)>`` with the identity ``helm:<url>``,
``oci:<url>:<version>``, ``git:<JSON of url and ref>`` or ``bucket:<JSON of provider, endpoint,
bucketName, region, prefix>``; components of one document with one identity share it.

``delivery: template`` lowers to a helmtemplate (:mod:`helmtemplate`) with the inline source's URL
and resolved kind, chart, version, values, secretValues, scopeOverrides, an authored releaseName,
hookGroupNamePrefix and layoutKustomizationName, after refusing what a client-side render cannot
honour: a source reference, valuesMode: configMap, the names of objects only Flux delivery
generates, a Git or Bucket source, an OCI chart without version, and the keys only a
Flux-reconciled release reads.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from farm.core.components import fluxsources as sources
from farm.core.components import helmtemplate, rawobjects
from farm.core.components.helmrelease import check_values, finish_spec, helmrelease_object
from farm.core.components.helmshared import check_keys, check_no_userinfo, check_secret_values, inline_kind
from farm.core.errors import CoreError, FieldError, PolicyRefusal, from_terminal
from farm.core.fields import go_type_name
from farm.core.model import BuildContext, ComponentSpec, Generated, NameClaim
from farm.core.names import is_dns1123_subdomain
from farm.core.policy import REFUSAL_EXPLICIT_SECRET, Policy
from farm.core.registry import ComponentType

PROPERTIES = (
    "chart",
    "version",
    "delivery",
    "source",
    "values",
    "valuesMode",
    "valuesConfigMapName",
    "secretValues",
    "valuesSecretName",
    "helmReleaseName",
    "scopeOverrides",
    "hookGroupNamePrefix",
    "layoutKustomizationName",
    "interval",
    "releaseName",
    "targetNamespace",
    "driftDetection",
    "install",
    "upgrade",
    "valuesFrom",
)
SOURCE_PROPERTIES = (
    "url",
    "kind",
    "ref",
    "endpoint",
    "bucketName",
    "provider",
    "region",
    "prefix",
    "name",
    "namespace",
)
FORWARDED = ("interval", "releaseName", "targetNamespace", "driftDetection", "install", "upgrade")
SOURCE_KINDS = ("HelmRepository", "GitRepository", "Bucket", "OCIRepository", "HelmChart")
CHART_REF_KINDS = ("OCIRepository", "HelmChart")
GIT_REF_FIELDS = ("branch", "tag", "semver", "name", "commit")
BUCKET_FIELDS = ("endpoint", "bucketName", "provider", "region", "prefix")
BUCKET_PROVIDERS = ("generic", "aws", "gcp", "azure")
VALUES_KEY = "values.json"
ROLE_OF_VALUES = {
    "ConfigMap": ("values-configmap", "valuesConfigMapName"),
    "Secret": ("values-secret", "valuesSecretName"),
}


def _fail(message: str) -> FieldError:
    return FieldError(f"helm: {message}")


@dataclass
class Source:
    """The chart's source: generated (``spec`` set) or referenced."""

    kind: str
    name: str
    namespace: str = ""
    spec: dict[str, Any] | None = None
    identity: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


# --- strict keys ----------------------------------------------------------------------------


def _string(props: dict[str, Any], key: str, path: str) -> str:
    value = props.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(f"{path}: must be a string, got {go_type_name(value)}")
    return value


# --- the source -----------------------------------------------------------------------------


def _check_host_port(hostport: str, where: str) -> None:
    host, colon, port = hostport.rpartition(":") if hostport.count(":") == 1 else (hostport, "", "")
    if not host:
        raise _fail(f"{where}: names no host")
    if colon and not (port.isdigit() and 1 <= int(port) <= 65535):
        raise _fail(f"{where}: port must be within 1-65535")


def _git_source(src: dict[str, Any], url: str) -> tuple[dict[str, Any], str]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise _fail(
            "source.url: an inline GitRepository takes an http:// or https:// URL "
            "(an ssh:// repository needs credentials: author a gitrepository component and reference it)"
        )
    if "@" in parts.netloc or parts.query or parts.fragment or "?" in url or "#" in url:
        raise _fail("source.url: an inline GitRepository URL is a host, an optional port and a path only")
    _check_host_port(parts.netloc, "source.url")
    if not parts.path.strip("/"):
        raise _fail("source.url: an inline GitRepository URL must name a repository path")
    ref = src.get("ref")
    if not isinstance(ref, dict):
        raise _fail(
            "source.ref: an inline GitRepository needs exactly one of branch, tag, semver, name, commit"
            + ("" if ref is None else f", got {go_type_name(ref)}")
        )
    check_keys(ref, GIT_REF_FIELDS, "source.ref.")
    present = [key for key in GIT_REF_FIELDS if key in ref and ref[key] is not None]
    if len(present) != 1:
        raise _fail(
            "source.ref: an inline GitRepository needs exactly one of branch, tag, semver, name, commit, "
            f"got {len(present)}"
        )
    value = _string(ref, present[0], f"source.ref.{present[0]}")
    identity = sources.json_identity("git", {"url": url, present[0]: value})
    return sources.git_repository_spec(url, {present[0]: value}), identity


def _bucket_source(src: dict[str, Any]) -> tuple[dict[str, Any], str]:
    if src.get("url") is not None:
        raise _fail("source.url: an inline Bucket takes endpoint and bucketName, not url")
    fields = {key: _string(src, key, f"source.{key}") for key in BUCKET_FIELDS}
    for key in ("endpoint", "bucketName"):
        if not fields[key]:
            raise _fail(f"source.{key}: required for an inline Bucket")
    endpoint = fields["endpoint"]
    hostport = endpoint
    if "://" in endpoint:
        parts = urlsplit(endpoint)
        if parts.scheme != "https" or parts.path or parts.query or parts.fragment or "@" in parts.netloc:
            raise _fail(
                "source.endpoint: must be a host[:port] or an https:// URL of a host and port "
                "(a non-TLS endpoint needs insecure: true, which only an authored bucket takes)"
            )
        hostport = parts.netloc
    elif any(ch in endpoint for ch in "/@?#"):
        raise _fail("source.endpoint: must be a host[:port] or an https:// URL of a host and port")
    _check_host_port(hostport, "source.endpoint")
    if fields["provider"] and fields["provider"] not in BUCKET_PROVIDERS:
        raise _fail(
            f"source.provider: must be one of {', '.join(BUCKET_PROVIDERS)}, got {fields['provider']!r}"
        )
    identity = sources.json_identity(
        "bucket", {key: fields[key] for key in ("provider", "endpoint", "bucketName", "region", "prefix")}
    )
    return sources.bucket_spec(fields), identity


def _refuse_misplaced(src: dict[str, Any], kind: str) -> None:
    if src.get("ref") is not None and kind != "GitRepository":
        raise _fail("source.ref: only an inline GitRepository takes ref")
    if kind != "Bucket":
        for key in BUCKET_FIELDS:
            if src.get(key) is not None:
                raise _fail(f"source.{key}: only an inline Bucket takes {key}")


def _inline_source(src: dict[str, Any], version: str) -> Source:
    if src.get("namespace") is not None:
        raise _fail(
            "source.namespace is only valid with a reference to an existing source (source.name and no "
            "inline source); a generated source is created beside the HelmRelease"
        )
    kind = _string(src, "kind", "source.kind")
    if kind == "Bucket":
        _refuse_misplaced(src, kind)
        spec, identity = _bucket_source(src)
    else:
        url = _string(src, "url", "source.url")
        if not url:
            raise _fail("source.url: required for an inline source")
        if kind != "GitRepository":
            check_no_userinfo(url)
            kind = inline_kind(url, kind)
        _refuse_misplaced(src, kind)
        if kind == "GitRepository":
            spec, identity = _git_source(src, url)
        elif kind == "OCIRepository":
            spec, identity = sources.oci_chart_repository_spec(url, version), f"oci:{url}:{version}"
        else:
            spec, identity = sources.helm_repository_spec(url), f"helm:{url}"
    return Source(kind=kind, name="", spec=spec, identity=identity)


def _parse_source(props: dict[str, Any]) -> Source:
    src = props.get("source")
    if src is None:
        raise _fail("source: required (an inline url, an inline Bucket, or a reference by source.name)")
    if not isinstance(src, dict):
        raise _fail(f"source: must be an object, got {go_type_name(src)}")
    check_keys(src, SOURCE_PROPERTIES, "source.")
    kind = _string(src, "kind", "source.kind")
    if kind and kind not in SOURCE_KINDS:
        raise _fail(f"source.kind: must be one of {', '.join(SOURCE_KINDS)}, got {kind!r}")
    version = _string(props, "version", "version")
    name = _string(src, "name", "source.name")
    if src.get("url") is not None or kind == "Bucket":
        source = _inline_source(src, version)
        source.name = name
        return source
    if not name:
        raise _fail("source: set url (an inline source) or name (a reference to an existing source)")
    _refuse_misplaced(src, "")
    return Source(
        kind=kind or "HelmRepository", name=name, namespace=_string(src, "namespace", "source.namespace")
    )


# --- naming ---------------------------------------------------------------------------------


def _check_source_name(name: str, component: ComponentSpec, ctx: BuildContext, authored: bool) -> None:
    if not is_dns1123_subdomain(name):
        raise _fail(f"source.name {name!r}: must be a DNS-1123 subdomain of at most 253 characters")
    for other in ctx.components:
        if other.name != name:
            continue
        if authored and other.name == component.name:
            raise _fail(
                f'source.name "{name}" is the component\'s own name; the generated source is a component '
                "of the document too, so give it another name"
            )
        if authored:
            raise _fail(
                f'source.name "{name}" is the name of component "{other.name}" of the document; the '
                "generated source is a component of the document too, so give it another name"
            )
        raise _fail(
            f'the generated source would be named "{name}", the name of a {other.type} component of the '
            "document; so rename that component, name the source with source.name, or have the Naming "
            'hook return another name for role "helm-source"'
        )


def _resolve_source_name(source: Source, component: ComponentSpec, ctx: BuildContext) -> None:
    authored = bool(source.name)
    if not authored:
        source.name = sources.generated_source_name(ctx.app_name, source.identity)
    _check_source_name(source.name, component, ctx, authored)


# --- values ---------------------------------------------------------------------------------


def _go_json(value: Any) -> str:
    """Indented JSON with sorted keys, as Go's json.MarshalIndent writes a map (HTML-escaped)."""
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _values_name(component: str, kind: str, text: str) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    return sources.shorten_name_with_suffix(component, f"-{kind}-{digest}")


def _optional_object(props: dict[str, Any], key: str) -> dict[str, Any]:
    value = props.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(f"{key}: must be a JSON object, got {go_type_name(value)}")
    try:
        return check_values(value, key)
    except FieldError as exc:
        raise _fail(exc.message) from None


def _values_object(kind: str, name: str, namespace: str, component: str, text: str) -> dict[str, Any]:
    metadata = {"name": name, "namespace": namespace, "labels": {"app": component}}
    if kind == "ConfigMap":
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {VALUES_KEY: text}}
    encoded = base64.b64encode(text.encode()).decode()
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata,
        "data": {VALUES_KEY: encoded},
        "type": "Opaque",
    }


def _values_setup(
    props: dict[str, Any], component: ComponentSpec, ctx: BuildContext, policy: Policy
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], list[NameClaim]]:
    """Inline values (or None), the valuesFrom entries the rule prepends, and the values
    ConfigMap / Secret it emits, each with its name claim."""
    values = _optional_object(props, "values")
    secret_values = _optional_object(props, "secretValues")
    mode = props.get("valuesMode")
    if mode not in (None, "inline", "configMap"):
        raise _fail(f'valuesMode: must be "inline" or "configMap", got {mode!r}')
    cm_name = _string(props, "valuesConfigMapName", "valuesConfigMapName")
    secret_name = _string(props, "valuesSecretName", "valuesSecretName")
    if cm_name and (mode != "configMap" or not values):
        raise _fail("valuesConfigMapName names nothing: it needs valuesMode: configMap and non-empty values")
    if secret_name and not secret_values:
        raise _fail("valuesSecretName names nothing: it needs non-empty secretValues")
    if secret_values:
        check_secret_values(values, secret_values)
        if not policy.explicit_secrets_allowed:
            raise PolicyRefusal(
                "helm: secretValues is set and the environment policy forbids explicit secrets; name a "
                "Secret created out of band in valuesFrom instead",
                REFUSAL_EXPLICIT_SECRET,
            )
    entries: list[dict[str, Any]] = []
    claims: list[NameClaim] = []
    for kind, tree, suffix, name in (
        ("ConfigMap", values if mode == "configMap" else {}, "values", cm_name),
        ("Secret", secret_values, "secret-values", secret_name),
    ):
        if not tree:
            continue
        text = _go_json(tree)
        if name and not is_dns1123_subdomain(name):
            raise _fail(f"{suffix} name {name!r}: must be a DNS-1123 subdomain of at most 253 characters")
        resolved = name or _values_name(component.name, suffix, text)
        entries.append({"kind": kind, "name": resolved, "valuesKey": VALUES_KEY})
        obj = _values_object(kind, resolved, ctx.namespace, component.name, text)
        claims.append(_values_claim(obj, kind, authored=bool(name)))
    inline = values if values and mode != "configMap" else None
    return inline, entries, claims


def _values_claim(obj: dict[str, Any], kind: str, authored: bool) -> NameClaim:
    """The values ConfigMap / Secret is claimed, its default included; the seed words a collision
    ``helm: naming the values ConfigMap: name collision: … (role "values-configmap", set by
    valuesConfigMapName) …``."""
    role, key = ROLE_OF_VALUES[kind]
    return NameClaim(obj, role, key if authored else None, context=f"helm: naming the values {kind}: ")


# --- the release ----------------------------------------------------------------------------


def _chart_fields(props: dict[str, Any], source: Source, generated: bool) -> dict[str, Any]:
    chart = _string(props, "chart", "chart")
    version = _string(props, "version", "version")
    ref = {"kind": source.kind, "name": source.name}
    if source.namespace:
        ref["namespace"] = source.namespace
    if source.kind in CHART_REF_KINDS:
        if chart:
            raise _fail(f"chart: not used with an {source.kind} source, whose artifact is the chart")
        if version and not generated:
            raise _fail(f"version: a referenced {source.kind} source pins its own version")
        return {"chartRef": ref}
    if not chart:
        what = (
            "the chart name"
            if source.kind == "HelmRepository"
            else "the chart's path in the fetched artifact"
        )
        raise _fail(f"chart: required with a {source.kind} source ({what})")
    spec: dict[str, Any] = {"chart": chart, "sourceRef": ref}
    if source.kind in ("GitRepository", "Bucket"):
        if version:
            raise _fail(
                f"version: Flux reads the chart of a {source.kind} source at the fetched revision and ignores version"
            )
        spec["reconcileStrategy"] = "Revision"
    elif version:
        spec["version"] = version
    return {"chart": {"spec": spec}}


def _delivery(props: dict[str, Any]) -> str:
    delivery = props.get("delivery")
    if delivery in (None, "flux", "template"):
        return delivery or "flux"
    if delivery == "native":
        raise _fail("delivery: native is no longer supported; use delivery: flux")
    raise _fail(f'delivery: must be "flux" or "template", got {delivery!r}')


def _check_flux_only(props: dict[str, Any]) -> None:
    if props.get("scopeOverrides") is not None:
        raise _fail("delivery: flux does not support scopeOverrides (only a client-side render reads it)")
    for key in ("hookGroupNamePrefix", "layoutKustomizationName"):
        if props.get(key) is not None:
            raise _fail(
                f"{key}: only delivery: template takes it; a HelmRelease has no layout of its own to name"
            )


def _release_name(props: dict[str, Any], component: ComponentSpec) -> str:
    name = _string(props, "helmReleaseName", "helmReleaseName")
    if name and not is_dns1123_subdomain(name):
        raise _fail(f"helmReleaseName {name!r}: must be a DNS-1123 subdomain of at most 253 characters")
    return name or component.name


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = component.properties
    check_keys(props, PROPERTIES, "")
    if _delivery(props) == "template":
        properties = _template_properties(props)
        try:
            return helmtemplate.build_template(properties, component, ctx)
        except CoreError as exc:  # the helmtemplate terminal's own refusal
            raise from_terminal(exc) from None
    _check_flux_only(props)
    source = _parse_source(props)
    generated = source.spec is not None
    if generated:
        _resolve_source_name(source, component, ctx)
        _check_source_policy(ctx.policy, source)
    inline_values, prepended, values_claims = _values_setup(props, component, ctx, ctx.policy)
    spec: dict[str, Any] = {key: props[key] for key in FORWARDED if props.get(key) is not None}
    spec.update(_chart_fields(props, source, generated))
    if inline_values is not None:
        spec["values"] = inline_values
    authored_from = props.get("valuesFrom")
    if authored_from is not None and not isinstance(authored_from, list):
        raise _fail(f"valuesFrom: must be a list, got {go_type_name(authored_from)}")
    if prepended or authored_from:
        spec["valuesFrom"] = prepended + list(authored_from or [])
    try:
        spec = finish_spec(spec)
    except FieldError as exc:
        raise _fail(exc.message) from None
    release = helmrelease_object(_release_name(props, component), ctx.namespace, spec, component.name)
    document_objects = []
    if generated:
        document_objects.append(
            sources.source_object(source.kind, source.name, ctx.namespace, source.spec or {})
        )
    authored_release = bool(_string(props, "helmReleaseName", "helmReleaseName"))
    claims = [NameClaim(release, "helm-release", "properties.helmReleaseName" if authored_release else None)]
    claims += values_claims
    return Generated(
        objects=[claim.obj for claim in claims], document_objects=document_objects, claims=claims
    )


# --- delivery: template ---------------------------------------------------------------------

# what names an object only delivery: flux generates, and what only a Flux-reconciled release reads
_TEMPLATE_NAMES_NOTHING = {
    "valuesConfigMapName": "values ConfigMap",
    "valuesSecretName": "values Secret",
    "helmReleaseName": "HelmRelease",
}
_TEMPLATE_FLUX_ONLY = ("interval", "targetNamespace", "driftDetection", "install", "upgrade", "valuesFrom")
# every property helmtemplate takes; the source is built here from the helm component's own
_TEMPLATE_FORWARDED = tuple(name for name in helmtemplate.PROPERTIES if name != "source")


def _template_source(props: dict[str, Any]) -> dict[str, str]:
    authored = props.get("source")
    kind = authored.get("kind") if isinstance(authored, dict) else None
    if kind in ("GitRepository", "Bucket"):
        raise _fail(
            f"source.kind: {kind}: delivery: template renders only from a Helm repository or an OCI "
            "registry; use delivery: flux"
        )
    src = _parse_source(props)
    if src.spec is None:
        raise _fail(
            "source: delivery: template renders a chart from an inline source (source.url); a reference to "
            "an existing source (source.name alone) is for delivery: flux"
        )
    if src.name:
        raise _fail("source.name: delivery: template generates no source, so the name would name nothing")
    url = props["source"]["url"]
    if src.kind == "OCIRepository" and not _string(props, "version", "version"):
        raise _fail("version: required for an OCI chart under delivery: template (the chart's tag)")
    return {"url": url, "kind": src.kind}


def _template_properties(props: dict[str, Any]) -> dict[str, Any]:
    """The helmtemplate the rule lowers to, after refusing what a client-side render cannot honour."""
    if props.get("valuesMode") == "configMap":
        raise _fail(
            "valuesMode: configMap: delivery: template generates no values ConfigMap (the chart is rendered "
            "with the values); remove valuesMode or use delivery: flux"
        )
    if props.get("valuesMode") not in (None, "inline"):
        raise _fail(f'valuesMode: must be "inline" or "configMap", got {props["valuesMode"]!r}')
    for key, what in _TEMPLATE_NAMES_NOTHING.items():
        if props.get(key) is not None:
            raise _fail(f"{key}: delivery: template generates no {what}, so {key} would name nothing")
    for key in _TEMPLATE_FLUX_ONLY:
        if props.get(key) is not None:
            raise _fail(
                f"{key}: only a Flux-reconciled release reads it, and delivery: template renders the chart at "
                "build time; remove it or use delivery: flux"
            )
    source = _template_source(props)
    secret_values = _optional_object(props, "secretValues")
    check_secret_values(_optional_object(props, "values"), secret_values)
    if props.get("scopeOverrides") is not None:
        try:
            rawobjects._parse_overrides(props)  # the parser manifests and helmtemplate use
        except FieldError as exc:
            raise _fail(exc.message) from None
    forwarded = {key: props[key] for key in _TEMPLATE_FORWARDED if props.get(key) is not None}
    return {"source": source, **forwarded}


def _check_source_policy(policy: Policy, source: Source) -> None:
    """The generated source is held to its terminal's allowlist, with the terminal's refusal."""
    try:
        sources.check_source_policy(policy, source.kind, source.spec or {})
    except CoreError as exc:
        raise from_terminal(exc) from None


HANDLER = ComponentType(
    name="helm",
    build=build,
    emits=(
        "helm.toolkit.fluxcd.io/v2 HelmRelease",
        "source.toolkit.fluxcd.io/v1 HelmRepository",
        "source.toolkit.fluxcd.io/v1 OCIRepository",
        "source.toolkit.fluxcd.io/v1 GitRepository",
        "source.toolkit.fluxcd.io/v1 Bucket",
        "v1 ConfigMap",
        "v1 Secret",
    ),
    decode="lowering rule (hand-written, strict keys)",
    lowering_rule=True,
)
