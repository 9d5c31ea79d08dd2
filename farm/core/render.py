"""``render``: the one entry point the rest of the farm calls. Bytes in, bytes out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from farm.core import yamlio
from farm.core.documents import ClusterProfile, load_application_data, load_cluster_profile, load_package
from farm.core.errors import DocumentError, ParameterError
from farm.core.params import parse_set_flags, parse_values_file, resolve_parameters, substitute
from farm.core.policy import DEFAULT_POLICY, Policy
from farm.core.transform import transform

NO_RESOURCES_WARNING = "no resources generated"


@dataclass(frozen=True)
class Rendered:
    """A build's result: the manifests exactly as the reference prints them, and its warnings."""

    app_name: str
    manifests: bytes
    objects: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...] = ()


def _load_app_document(
    app: bytes,
    app_source: str,
    package: bytes | None,
    values: bytes | None,
    sets: Sequence[str],
    values_source: str,
    package_source: str,
) -> dict[str, Any]:
    try:
        raw = yamlio.load(app, source=app_source)
    except yamlio.YAMLError as exc:
        raise DocumentError(str(exc)) from None
    if package is None:
        if values is not None or sets:
            raise ParameterError("--values and --set need a kurel.yaml beside the application")
        return raw
    package_doc = load_package(package, source=package_source)
    params = resolve_parameters(
        package_doc, parse_values_file(values, values_source), parse_set_flags(sets), values_source
    )
    return substitute(raw, params)


def render(
    app: bytes,
    profile: bytes | ClusterProfile,
    *,
    package: bytes | None = None,
    values: bytes | None = None,
    sets: Sequence[str] = (),
    namespace: str | None = None,
    policy: Policy = DEFAULT_POLICY,
    app_source: str = "app.yaml",
    profile_source: str = "cluster.yaml",
    values_source: str = "values.yaml",
    package_source: str = "kurel.yaml",
) -> Rendered:
    """Render one Application for one ClusterProfile. Raises a :class:`CoreError` subclass."""
    raw = _load_app_document(app, app_source, package, values, sets, values_source, package_source)
    application = load_application_data(raw, source=app_source)
    cluster = (
        profile if isinstance(profile, ClusterProfile) else load_cluster_profile(profile, profile_source)
    )
    objects = transform(application, cluster, namespace=namespace, policy=policy)
    warnings = () if objects else (NO_RESOURCES_WARNING,)
    text = yamlio.dump_documents(objects)
    return Rendered(application.metadata.name, text.encode("utf-8"), tuple(objects), warnings)
