"""oci: the role-named OCI artifact component (seed 002, "oci", OCIRule).

It stands for an OCIRepository (url, ``ref.tag`` = version, or ``ref.digest`` for a
``sha256:`` version, interval) and a Flux Kustomization applying it (path, prune default true,
sourceRef, interval, and targetNamespace / wait / healthChecks when set).

- Alone on its artifact, both objects belong to the component and are named after it (or
  ``source.objectName`` / ``kustomizationName``), the OCIRepository first.
- Two or more oci components of one document on the same identity (url, version and effective
  interval), or a component naming its source with ``source.name``, share one OCIRepository that
  belongs to the document: ``source.name``, else ``<document>-source-<digest10>``. Each component
  then emits its Kustomization only.
"""

from __future__ import annotations

from typing import Any

from farm.core.components import fluxsources as sources
from farm.core.errors import CoreError, FieldError, from_terminal
from farm.core.fields import go_type_name, parse_bool_field, parse_list_field, parse_object_field
from farm.core.model import BuildContext, ComponentSpec, Generated, NameClaim
from farm.core.names import is_dns1123_subdomain
from farm.core.registry import ComponentType

KUSTOMIZE_API = "kustomize.toolkit.fluxcd.io/v1"
PROPERTIES = (
    "source",
    "kustomizationName",
    "version",
    "path",
    "prune",
    "interval",
    "targetNamespace",
    "wait",
    "healthChecks",
)
SOURCE_PROPERTIES = ("url", "name", "objectName")
HEALTH_CHECK_KEYS = ("apiVersion", "kind", "name", "namespace")


def _fail(message: str) -> FieldError:
    return FieldError(f"oci: {message}")


def _string(props: dict[str, Any], key: str, path: str) -> str:
    value = props.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(f"{path}: must be a string, got {go_type_name(value)}")
    return value


def _check_keys(props: dict[str, Any], allowed: tuple[str, ...], prefix: str) -> None:
    for key in props:
        if key not in allowed:
            raise _fail(f'unknown field "{prefix}{key}"')


def _source(props: dict[str, Any]) -> dict[str, Any]:
    src, present = parse_object_field(props, "source")
    if not present:
        raise _fail("source.url is required (an oci:// URL of the artifact)")
    _check_keys(src, SOURCE_PROPERTIES, "source.")
    return src


def _identity(component: ComponentSpec) -> tuple[str, str, str] | None:
    """(url, version, effective interval) of an oci component, or None when it does not parse."""
    props = component.properties
    src = props.get("source")
    if not isinstance(src, dict) or not isinstance(src.get("url"), str):
        return None
    version = props.get("version")
    try:
        interval = sources.interval_or_default(props.get("interval"))
    except FieldError:
        return None
    return src["url"], version if isinstance(version, str) else "", interval


def _shares(component: ComponentSpec, ctx: BuildContext, identity: tuple[str, str, str]) -> bool:
    """Whether another oci component naming no source has the same identity."""
    consumers = 0
    for other in ctx.components:
        src = other.properties.get("source")
        named = isinstance(src, dict) and (src.get("name") or src.get("objectName"))
        if other.type == "oci" and not named and _identity(other) == identity:
            consumers += 1
    return consumers >= 2


def _health_checks(props: dict[str, Any]) -> list[dict[str, str]]:
    entries, _ = parse_list_field(props, "healthChecks")
    checks = []
    for index, entry in enumerate(entries):
        where = f"healthChecks[{index}]"
        if not isinstance(entry, dict):
            raise _fail(f"{where}: must be an object, got {go_type_name(entry)}")
        _check_keys(entry, HEALTH_CHECK_KEYS, f"{where}.")
        check = {}
        for key in HEALTH_CHECK_KEYS:
            value = entry.get(key)
            if value is None or value == "":
                if key != "namespace":
                    raise _fail(f"{where}.{key}: required (a non-empty string)")
                continue
            if not isinstance(value, str):
                raise _fail(f"{where}.{key}: must be a string, got {go_type_name(value)}")
            check[key] = value
        checks.append(check)
    return checks


def _checked_name(value: str, field: str) -> str:
    if value and not is_dns1123_subdomain(value):
        raise _fail(f"{field} {value!r}: must be a DNS-1123 subdomain of at most 253 characters")
    return value


def _kustomization(
    props: dict[str, Any], name: str, namespace: str, source_name: str, interval: str
) -> dict[str, Any]:
    prune, present = parse_bool_field(props, "prune")
    wait, _ = parse_bool_field(props, "wait")
    checks = _health_checks(props)
    if wait and checks:
        raise _fail(
            "wait: true waits for every object the Kustomization applies, so healthChecks would name nothing "
            "more; set one of them"
        )
    spec: dict[str, Any] = {
        "interval": interval,
        "prune": prune if present else True,
        "sourceRef": {"kind": "OCIRepository", "name": source_name},
    }
    for key in ("path", "targetNamespace"):
        value = _string(props, key, key)
        if value:
            spec[key] = value
    if wait:
        spec["wait"] = True
    if checks:
        spec["healthChecks"] = checks
    return {
        "apiVersion": KUSTOMIZE_API,
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _check_source_name(name: str, ctx: BuildContext, component: ComponentSpec) -> None:
    for other in ctx.components:
        if other.name == name:
            whose = (
                "the component's own name"
                if other.name == component.name
                else f'the name of component "{name}"'
            )
            raise _fail(
                f'source.name "{name}" is {whose}; the generated source is a component of the document too, '
                "so give it another name"
            )


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = component.properties
    _check_keys(props, PROPERTIES, "")
    src = _source(props)
    url = _string(src, "url", "source.url")
    if not url:
        raise _fail("source.url is required (an oci:// URL of the artifact)")
    if not url.startswith("oci://"):
        raise _fail("source.url: must be an oci:// URL")
    version = _string(props, "version", "version")
    if not version:
        raise _fail("version is required (a tag, or a sha256: digest, of the artifact)")
    interval = sources.interval_or_default(props.get("interval"))
    shared_name = _checked_name(_string(src, "name", "source.name"), "source.name")
    object_name = _checked_name(_string(src, "objectName", "source.objectName"), "source.objectName")
    if shared_name and object_name:
        raise _fail(
            "source.objectName and source.name both name the OCIRepository; write source.objectName to rename "
            "the component's own source, or source.name to share one"
        )
    ref = {"digest": version} if version.startswith("sha256:") else {"tag": version}
    source_spec = {"interval": interval, "url": url, "ref": ref}
    identity = (url, version, interval)
    shared = bool(shared_name) or (not object_name and _shares(component, ctx, identity))
    _check_source_policy(ctx, url)
    kustomization_name = _checked_name(
        _string(props, "kustomizationName", "kustomizationName"), "kustomizationName"
    )
    if shared:
        if shared_name:
            _check_source_name(shared_name, ctx, component)
        name = shared_name or sources.generated_source_name(ctx.app_name, f"oci:{url}:{version}:{interval}")
        source = sources.source_object("OCIRepository", name, ctx.namespace, source_spec)
        kustomization = _kustomization(
            props, kustomization_name or component.name, ctx.namespace, name, interval
        )
        claims = [_claim(kustomization, "oci-kustomization", kustomization_name, "kustomizationName")]
        return Generated(objects=[kustomization], document_objects=[source], claims=claims)
    source_name = object_name or component.name
    source = sources.source_object("OCIRepository", source_name, ctx.namespace, source_spec)
    kustomization = _kustomization(
        props, kustomization_name or component.name, ctx.namespace, source_name, interval
    )
    claims = [
        _claim(source, "oci-source", object_name, "source.objectName"),
        _claim(kustomization, "oci-kustomization", kustomization_name, "kustomizationName"),
    ]
    return Generated(objects=[source, kustomization], claims=claims)


def _claim(obj: dict[str, Any], role: str, authored: str, key: str) -> NameClaim:
    """Every name of the rule is claimed, the default included (seed 002, oci)."""
    return NameClaim(obj, role, f"properties.{key}" if authored else None)


def _check_source_policy(ctx: BuildContext, url: str) -> None:
    """The allowlist of the ocirepository terminal, refused in its words (``ocirepository: url: ...``):
    an explicit registry, a repository path, and a listed registry."""
    try:
        sources.check_source_policy(ctx.policy, "OCIRepository", {"url": url})
    except CoreError as exc:
        raise from_terminal(exc) from None


HANDLER = ComponentType(
    name="oci",
    build=build,
    emits=("source.toolkit.fluxcd.io/v1 OCIRepository", "kustomize.toolkit.fluxcd.io/v1 Kustomization"),
    decode="lowering rule (hand-written parser)",
    lowering_rule=True,
)
