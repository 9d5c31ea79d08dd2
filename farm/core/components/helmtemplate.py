"""helmtemplate: a chart rendered at build time (seed 002, "helmtemplate"), and what the helm rule
lowers to under ``delivery: template``.

The core does not run Helm (see :mod:`farm.core.charts`): the handler checks the properties and
the policy's source allowlist, builds the :class:`ChartRequest` and reads the render the caller
handed in for it, or stops the build with :class:`ChartRenderNeeded`. With the render it does what
the seed asks of the rendered objects: decode them (:mod:`helmrendered`), order them by hook phase
and weight and drop delete, rollback and test hooks, give a namespaced object without a namespace
the application namespace (a namespace the chart wrote is kept, an object of unknown scope left
as rendered), and hold every object but a chart's Secret to the environment policy.

With ``secretValues`` a failed render or decode is reported without its cause, which can quote a
value: the chart is rendered again with ``values`` alone (a second request), and that render's
error, or the fact that it renders, is what the message says.

Not done here: the strict re-decode that refuses a workload field the API type does not declare
(the core reads rendered objects as maps), and the hook-group layout names, which only a
layout-walking consumer sees (``farm build`` writes the flat output); ``hookGroupNamePrefix`` and
``layoutKustomizationName`` are checked as names and name nothing else.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from farm.core.charts import ChartRender, ChartRenderNeeded, ChartRequest, canonical_values
from farm.core.components import fluxsources as sources
from farm.core.components import helmrendered, helmshared, objectpolicy, rawobjects
from farm.core.components.helmrelease import check_values
from farm.core.errors import FieldError, PolicyRefusal, TransformError
from farm.core.fields import go_type_name
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.names import is_dns1123_subdomain
from farm.core.policy import REFUSAL_EXPLICIT_SECRET
from farm.core.registry import ComponentType

PREFIX = "helmtemplate: "
PROPERTIES = (
    "source",
    "chart",
    "version",
    "values",
    "secretValues",
    "scopeOverrides",
    "releaseName",
    "hookGroupNamePrefix",
    "layoutKustomizationName",
)
SOURCE_PROPERTIES = ("url", "kind")
SOURCE_KINDS = ("HelmRepository", "OCIRepository")
MAX_RELEASE_NAME = 53
WITHHELD = "the cause is withheld because it can repeat a sensitive value"
NEEDS_HELM = (
    "rendering chart {chart} needs a helm binary (helm template), and this build has none: farm build "
    "and the fleet workers run the helm on their PATH, so install helm there, or have the cluster render "
    "the chart (helm with delivery: flux)"
)


def _fail(message: str) -> FieldError:
    return FieldError(PREFIX + message)


@contextmanager
def _under_own_prefix() -> Iterator[None]:
    """The checks shared with the helm rule, reported under this component's prefix."""
    try:
        yield
    except FieldError as exc:
        raise _fail(exc.message.removeprefix("helm: ")) from None


def _string(props: dict[str, Any], key: str) -> str:
    value = props.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(f"{key}: must be a string, got {go_type_name(value)}")
    return value


# --- properties -----------------------------------------------------------------------------


def _source(props: dict[str, Any]) -> tuple[str, str]:
    """The source URL and its resolved kind."""
    src = props.get("source")
    if src is None:
        raise _fail("source: required (source.url: an http(s):// Helm repository or an oci:// chart URL)")
    if not isinstance(src, dict):
        raise _fail(f"source: must be an object, got {go_type_name(src)}")
    with _under_own_prefix():
        helmshared.check_keys(src, SOURCE_PROPERTIES, "source.")
    kind = _string(src, "kind")
    if kind and kind not in SOURCE_KINDS:
        raise _fail(f"source.kind: must be HelmRepository or OCIRepository, got {kind!r}")
    url = _string(src, "url")
    if not url:
        raise _fail("source.url: required (an http(s):// Helm repository or an oci:// chart URL)")
    with _under_own_prefix():
        helmshared.check_no_userinfo(url)
        resolved = helmshared.inline_kind(url, kind)
    if kind and resolved != kind:
        raise _fail(f"source.kind: {kind} does not agree with the URL's scheme, which is an {resolved}'s")
    return url, resolved


def _chart_and_version(props: dict[str, Any], kind: str) -> tuple[str, str]:
    chart, version = _string(props, "chart"), _string(props, "version")
    if kind == "HelmRepository" and not chart:
        raise _fail("chart: required with a HelmRepository source (the chart's name in the repository)")
    if kind == "OCIRepository":
        if chart:
            raise _fail("chart: not used with an OCIRepository source, whose URL names the chart")
        if not version:
            raise _fail("version: required with an OCIRepository source (the chart's tag)")
    return chart, version


def _values(props: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """values and secretValues, checked: JSON objects, no path in both, no nested global."""
    trees = []
    for key in ("values", "secretValues"):
        value = props.get(key)
        if value is None:
            trees.append({})
            continue
        if not isinstance(value, dict):
            raise _fail(f"{key}: must be an object, got {go_type_name(value)}")
        try:
            trees.append(check_values(value, key))
        except FieldError as exc:
            raise _fail(exc.message) from None
    values, secret_values = trees
    with _under_own_prefix():
        helmshared.check_secret_values(values, secret_values)
    return values, secret_values


def _merged(values: dict[str, Any], secret_values: dict[str, Any]) -> dict[str, Any]:
    """secretValues over values, object by object (no path is set in both)."""
    merged = dict(values)
    for key, value in secret_values.items():
        if isinstance(merged.get(key), dict) and isinstance(value, dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def _release_name(props: dict[str, Any], component: str) -> str:
    authored = _string(props, "releaseName")
    if authored:
        if len(authored) > MAX_RELEASE_NAME or not is_dns1123_subdomain(authored):
            raise _fail(
                f'releaseName "{authored}": must be a DNS-1123 subdomain of at most {MAX_RELEASE_NAME} '
                "characters (Helm's rule for a release name)"
            )
        return authored
    name = component
    if len(name) > MAX_RELEASE_NAME:
        name = f"{name[:40]}-{hashlib.sha256(name.encode()).hexdigest()[:12]}"
    if not is_dns1123_subdomain(name):
        raise _fail(
            f'the default release name "{name}" (the component name, shortened past {MAX_RELEASE_NAME} '
            "characters) is not a valid Helm release name; set releaseName"
        )
    return name


def _hook_group_prefix(component: ComponentSpec, app_name: str) -> str | None:
    """The prefix of a component's hook-group layout names (authored, else
    ``<application>-<component>``), or None for a component that renders no chart."""
    props = component.properties
    if component.type == "helm" and props.get("delivery") != "template":
        return None
    if component.type not in ("helm", "helmtemplate"):
        return None
    prefix = props.get("hookGroupNamePrefix")
    return prefix if isinstance(prefix, str) and prefix else f"{app_name}-{component.name}"


def _check_layout_names(props: dict[str, Any], component: ComponentSpec, ctx: BuildContext) -> None:
    prefix = _string(props, "hookGroupNamePrefix")
    if prefix and not is_dns1123_subdomain(prefix):
        raise _fail(f'hookGroupNamePrefix "{prefix}": must be a DNS-1123 subdomain')
    mine = prefix or f"{ctx.app_name}-{component.name}"
    for other in ctx.components:
        if other.name != component.name and _hook_group_prefix(other, ctx.app_name) == mine:
            raise _fail(
                f'hook-group prefix "{mine}" is also the one of component "{other.name}", so their hook-group '
                "layouts would take the same names; give one of them another hookGroupNamePrefix"
            )
    name = _string(props, "layoutKustomizationName")
    if name and (len(name) > 63 or not is_dns1123_subdomain(name)):
        raise _fail(
            f'layoutKustomizationName "{name}": must be a DNS-1123 subdomain of at most 63 characters'
        )


def _scope_overrides(props: dict[str, Any]) -> dict[tuple[str, str], bool]:
    try:
        return rawobjects._parse_overrides(props)  # the parser manifests uses
    except FieldError as exc:
        raise _fail(exc.message) from None


def _check_source_policy(ctx: BuildContext, url: str) -> None:
    """Step one of the policy: the source's host is on the allowlist, before anything is fetched."""
    where = PREFIX + "source.url"
    if url.startswith("oci://"):
        sources.check_oci_source_url(ctx.policy, url, where, repository_required=True)
    else:
        sources.refuse_unlisted_host(ctx.policy, sources.url_host(url), sources.raw_authority(url), where)


# --- the render -----------------------------------------------------------------------------


class _Failed(Exception):
    """A render or decode failure; str() is what follows ``helmtemplate: ``."""


def _rendered(ctx: BuildContext, request: ChartRequest) -> list[dict[str, Any]]:
    answer: ChartRender | None = ctx.charts.get(request.key)
    if answer is None:
        chart = f"{request.chart_name} {request.version}".strip()
        raise ChartRenderNeeded(PREFIX + NEEDS_HELM.format(chart=chart), (request,))
    if answer.error is not None:
        raise _Failed(f"rendering chart: {answer.error}")
    try:
        return helmrendered.decode(answer.manifests)
    except helmrendered.DecodeError as exc:
        raise _Failed(f"decoding rendered manifests: {exc}") from None


def _render(ctx: BuildContext, request: ChartRequest, values: dict[str, Any], secret: bool) -> list[Any]:
    try:
        return _rendered(ctx, request)
    except _Failed as failure:
        if not secret:
            raise TransformError(PREFIX + str(failure)) from None
    try:
        _rendered(ctx, replace(request, values=canonical_values(values)))
    except _Failed as failure:
        raise TransformError(
            f"{PREFIX}rendering chart with secretValues failed; {WITHHELD}. Without them it fails with: {failure}"
        ) from None
    raise TransformError(
        f"{PREFIX}rendering chart with secretValues failed, and without them it renders; {WITHHELD}"
    )


def _scope_name(cluster: bool) -> str:
    return "Cluster" if cluster else "Namespaced"


def _scope(
    obj: dict[str, Any],
    overrides: dict[tuple[str, str], bool],
    crds: dict[tuple[str, str], bool],
    component: str,
) -> bool | None:
    """resolveObjectScope: True cluster-scoped, False namespaced, None unknown."""
    api_version, kind = obj["apiVersion"], obj["kind"]
    if objectpolicy.is_api_governed(api_version, kind):
        return objectpolicy.table_scope(api_version, kind)
    group = objectpolicy.group_of(api_version)
    crd, override = crds.get((group, kind)), overrides.get((api_version, kind))
    if override is not None and crd is not None and crd != override:
        raise TransformError(
            f'helmtemplate "{component}": object {objectpolicy.describe(obj)}: scopeOverrides says '
            f"{_scope_name(override)} but the CustomResourceDefinition for {kind}.{group} the chart renders "
            f"declares {_scope_name(crd)}; no cluster can serve the kind as the entry says, so correct or "
            "remove the entry"
        )
    for answer in (override, crd):
        if answer is not None:
            return answer
    return objectpolicy.table_scope(api_version, kind)


def _stamp_namespaces(objects: list[dict[str, Any]], overrides: dict, component: str, namespace: str) -> None:
    crds = rawobjects._crd_scopes(objects)
    for obj in objects:
        if _scope(obj, overrides, crds, component) is not False:
            continue  # cluster-scoped or unknown: as rendered
        metadata = obj.get("metadata")
        if not isinstance(metadata, dict):
            metadata = obj["metadata"] = {}
        current = metadata.get("namespace")
        if not (isinstance(current, str) and current) and namespace:
            metadata["namespace"] = namespace


def _check_policy(ctx: BuildContext, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        if obj.get("kind") == "Secret" and obj.get("apiVersion") == "v1":
            continue  # a Secret the chart renders is emitted under any policy (seed: not covered)
        objectpolicy.check_object(ctx.policy, obj, "helmtemplate", noun="rendered")


def build_template(props: dict[str, Any], component: ComponentSpec, ctx: BuildContext) -> Generated:
    """A helmtemplate's objects from its properties (authored, or forwarded by the helm rule)."""
    with _under_own_prefix():
        helmshared.check_keys(props, PROPERTIES, "")
    url, kind = _source(props)
    chart, version = _chart_and_version(props, kind)
    values, secret_values = _values(props)
    overrides = _scope_overrides(props)
    release = _release_name(props, component.name)
    _check_layout_names(props, component, ctx)
    if secret_values and not ctx.policy.explicit_secrets_allowed:
        raise PolicyRefusal(
            f"{PREFIX}secretValues is set and the environment policy forbids explicit secrets; have the chart "
            "read a Secret created out of band (its existing-secret values) instead",
            REFUSAL_EXPLICIT_SECRET,
        )
    _check_source_policy(ctx, url)
    request = ChartRequest(
        component=component.name,
        repository=url,
        source_kind=kind,
        chart=chart,
        version=version,
        release_name=release,
        namespace=ctx.namespace,
        values=canonical_values(_merged(values, secret_values)),
    )
    objects = helmrendered.order_by_hooks(_render(ctx, request, values, bool(secret_values)))
    _stamp_namespaces(objects, overrides, component.name, ctx.namespace)
    _check_policy(ctx, objects)
    return Generated(objects=objects)


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    return build_template(component.properties, component, ctx)


HANDLER = ComponentType(
    name="helmtemplate",
    build=build,
    emits=("* *",),
    decode="hand-written parser (strict keys); the chart's objects as rendered",
)
