"""``render``: the one entry point the rest of the farm calls. Bytes in, bytes out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from farm.core import yamlio
from farm.core.charts import ChartRender
from farm.core.documents import load_application_data, load_cluster_profile, load_package
from farm.core.errors import DocumentError, ObjectTooLarge, ParameterError
from farm.core.names import DNS1123_LABEL_RULE, is_dns1123_label
from farm.core.params import merge_values, parse_set_flags, parse_values_file, resolve_parameters, substitute
from farm.core.policy import DEFAULT_POLICY, Policy
from farm.core.request import RenderRequest, ValuesLayer
from farm.core.transform import transform

NO_RESOURCES_WARNING = "no resources generated"
# The API server refuses a request body (one object) over 1.5 MiB (etcd's default request limit);
# an object whose emitted YAML is larger could never be applied.
MAX_OBJECT_BYTES = 1_572_864


@dataclass(frozen=True)
class Rendered:
    """A build's result: the manifests exactly as the reference prints them, and its warnings."""

    app_name: str
    manifests: bytes
    objects: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...] = ()


def load_app_document(request: RenderRequest, memo: yamlio.DocumentMemo | None = None) -> dict[str, Any]:
    """The request's application document with its parameters substituted, before validation."""
    try:
        raw = yamlio.load(request.app, source=request.app_source, memo=memo)
    except yamlio.YAMLError as exc:
        raise DocumentError(str(exc)) from None
    if request.package is None:
        if request.values or request.sets:
            raise ParameterError("--values and --set need a kurel.yaml beside the application")
        return raw
    package_doc = load_package(request.package, source=request.package_source, memo=memo)
    layers = [(layer.source, parse_values_file(layer.data, layer.source, memo)) for layer in request.values]
    values, origins = merge_values(layers)
    params = resolve_parameters(package_doc, values, parse_set_flags(request.sets), origins)
    return substitute(raw, params)


def render(
    request: RenderRequest,
    *,
    policy: Policy = DEFAULT_POLICY,
    charts: Mapping[str, ChartRender] | None = None,
    memo: yamlio.DocumentMemo | None = None,
) -> Rendered:
    """Render one request (an Application for one ClusterProfile). Raises a :class:`CoreError` subclass;
    ``farm.core.charts.ChartRenderNeeded`` when a chart must be rendered first and ``charts``, the
    chart renders the caller answered by request key, lacks it.

    ``memo`` (a ``yamlio.DocumentMemo`` the caller keeps across renders) parses each document it
    has seen once: a worker rendering a batch of one application's targets parses the application
    once, and each ClusterProfile once. The bytes rendered are the same with or without it."""
    if request.namespace and not is_dns1123_label(request.namespace):
        raise ParameterError(f'namespace "{request.namespace}": must be {DNS1123_LABEL_RULE}')
    raw = load_app_document(request, memo)
    application = load_application_data(raw, source=request.app_source)
    cluster = load_cluster_profile(request.cluster_profile, request.cluster_profile_source, memo)
    objects = transform(application, cluster, namespace=request.namespace, policy=policy, charts=charts)
    warnings = () if objects else (NO_RESOURCES_WARNING,)
    manifests = yamlio.dump_manifests(objects).encode("utf-8")
    if len(manifests) > MAX_OBJECT_BYTES:
        _refuse_oversized(objects)
    return Rendered(application.metadata.name, manifests, tuple(objects), warnings)


def _refuse_oversized(objects: list[dict[str, Any]]) -> None:
    """Raise :class:`ObjectTooLarge` for the first object whose emitted YAML is over the limit
    (only called when the whole output is, so a build of small objects never pays for it)."""
    for document in objects:
        size = len(yamlio.dump_manifests([document]).encode("utf-8"))
        if size > MAX_OBJECT_BYTES:
            metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
            namespace = f"{metadata['namespace']}/" if metadata.get("namespace") else ""
            raise ObjectTooLarge(
                f'{document.get("kind", "object")} "{namespace}{metadata.get("name", "")}": its YAML is'
                f" {size} bytes, over the {MAX_OBJECT_BYTES} bytes the Kubernetes API server accepts"
                " for one object"
            )


__all__ = ["MAX_OBJECT_BYTES", "NO_RESOURCES_WARNING", "RenderRequest", "Rendered", "ValuesLayer", "render"]
