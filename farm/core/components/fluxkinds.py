"""The kind-named Flux delivery terminals (seed 002): helmrelease, fluxcd-kustomization and the
source kinds helmrepository, ocirepository, gitrepository, bucket and helmchart (Flux's HelmChart,
which builds a chart artifact from a source a sourceRef names; not the removed composite).

Each decodes its whole property map strictly into its upstream spec type (field tables in
farm/core/kinds/fluxdelivery.py) and emits that one object, named after the component (or its
objectName). On top of the decode each holds what its seed entry states and nothing more:

- ``interval`` defaults to 60m, a zero duration counting as unset (a helmrepository of
  ``type: oci`` takes no default and writes ``0s``); every duration is a Flux duration.
- The required fields the seed lists: url (helmrepository, ocirepository, gitrepository),
  bucketName and endpoint (bucket), chart and sourceRef.kind/name (helmchart), sourceRef.kind and
  .name (fluxcd-kustomization, kind one of the CRD's enum), and chart.spec.sourceRef.kind under a
  helmrelease's chart. An empty value is refused as an unauthored one.
- A url's scheme, as the source CRD's pattern admits it.
- An authored ``verify`` without a provider is written with the API's default ``cosign`` (the Go
  type always writes the field); an authored empty provider is refused.
- The sources' registry allowlist on the host they fetch from (helmchart checks nothing).
- The helmrelease: values and valuesFrom checks, exactly one of chart and chartRef, and the
  component-label post-renderer every HelmRelease carries (shared with the helm rule).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from farm.core.components import fluxsources as sources
from farm.core.components.helmrelease import HELMRELEASE_API, check_spec, component_label_post_renderers
from farm.core.errors import FieldError
from farm.core.kinds import fluxdelivery as types
from farm.core.kinds.engine import KindContext, kind_component, required_error
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.registry import ComponentType

KUSTOMIZE_API = "kustomize.toolkit.fluxcd.io/v1"
KUSTOMIZATION_SOURCE_KINDS = ("OCIRepository", "GitRepository", "Bucket", "ExternalArtifact")
VERIFY_PROVIDER_DEFAULT = "cosign"
ZERO_INTERVAL = "0s"

# --- shared checks -------------------------------------------------------------------------------


def _dig(node: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _authored(node: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    """Whether ``path`` was authored (not null), keys matched ignoring case as the decode matches
    them (the decode has refused two spellings of one key), and the authored value."""
    for key in path:
        if not isinstance(node, dict):
            return False, None
        node = next((value for name, value in node.items() if str(name).lower() == key.lower()), None)
    return node is not None, node


def _default_interval(spec: dict[str, Any]) -> None:
    if spec.get("interval") in (None, ZERO_INTERVAL):
        spec["interval"] = sources.DEFAULT_INTERVAL


def _require(spec: dict[str, Any], *path: str) -> None:
    if not _dig(spec, path):
        raise required_error(".".join(path), types.FLUX)


def _fill_verify_provider(kc: KindContext, *path: str) -> None:
    """verify.provider: the type writes it whether or not it was authored, so the API's default
    would never apply; unauthored it is written as that default, and an authored "" is refused."""
    verify = _dig(kc.decoded, path)
    if verify is None:
        return
    authored, value = _authored(kc.authored, (*path, "provider"))
    if not authored:
        verify["provider"] = VERIFY_PROVIDER_DEFAULT
    elif value == "":
        where = ".".join((*path, "provider"))
        raise FieldError(
            f'{where}: "" cannot be carried by the Flux API types (the type writes the field whether or not '
            "it is authored, so an empty provider reads as an unauthored one; write cosign or notation, or "
            "leave it out for the API's default cosign)"
        )


def _with_unknown_key_hint(handler: ComponentType, keys: tuple[str, ...], hint: str) -> ComponentType:
    """Adds ``hint`` to the unknown-field refusal of one of ``keys`` at the top level."""
    inner = handler.build
    refused = {f'unknown field "{key}"' for key in keys}

    def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
        try:
            return inner(component, ctx)
        except FieldError as exc:
            if exc.message in refused:
                raise FieldError(f"{exc.message}; {hint}") from None
            raise

    return dataclasses.replace(handler, build=build)


# --- helmrelease ---------------------------------------------------------------------------------


def _check_helm_release(kc: KindContext) -> None:
    spec = kc.decoded
    _default_interval(spec)
    check_spec(spec)
    if "chart" in spec:
        if not _dig(spec, ("chart", "spec", "sourceRef", "kind")):
            raise required_error("chart.spec.sourceRef.kind", types.FLUX)
        _fill_verify_provider(kc, "chart", "spec", "verify")
    spec["postRenderers"] = component_label_post_renderers(kc.component.name, spec) + list(
        spec.get("postRenderers") or []
    )


HELM_RELEASE = _with_unknown_key_hint(
    kind_component(
        "helmrelease",
        HELMRELEASE_API,
        "HelmRelease",
        "helmv2.HelmReleaseSpec",
        spec=types.HELM_RELEASE_SPEC,
        api=types.FLUX,
        check=_check_helm_release,
    ),
    ("valuesMode",),
    "values in a ConfigMap come from the helm component's valuesMode: configMap, or from a configmap "
    "trait and a valuesFrom entry naming its ConfigMap",
)

# --- fluxcd-kustomization ------------------------------------------------------------------------


def _check_kustomization(kc: KindContext) -> None:
    spec = kc.decoded
    _default_interval(spec)
    _require(spec, "sourceRef", "kind")
    kind = spec["sourceRef"]["kind"]
    if kind not in KUSTOMIZATION_SOURCE_KINDS:
        allowed = ", ".join(f'"{k}"' for k in KUSTOMIZATION_SOURCE_KINDS)
        raise FieldError(f'sourceRef.kind: unsupported value "{kind}" (must be one of {allowed})')
    _require(spec, "sourceRef", "name")


FLUX_KUSTOMIZATION = kind_component(
    "fluxcd-kustomization",
    KUSTOMIZE_API,
    "Kustomization",
    "kustomizev1.KustomizationSpec",
    spec=types.KUSTOMIZATION_SPEC,
    api=types.FLUX,
    check=_check_kustomization,
)

# --- the sources ---------------------------------------------------------------------------------


def _scheme_error(form: str) -> FieldError:
    return FieldError(f"url: must start with {form}")


def _check_helm_repository(kc: KindContext) -> None:
    spec = kc.decoded
    oci = spec.get("type") == "oci"
    if oci:
        if spec.get("interval") is None:
            spec["interval"] = ZERO_INTERVAL
    else:
        _default_interval(spec)
    _require(spec, "url")
    url = spec["url"]
    if oci and not url.startswith("oci://"):
        raise _scheme_error("oci:// under type: oci")
    if not url.startswith(("http://", "https://", "oci://")):
        raise _scheme_error("http://, https:// or oci://")
    sources.check_source_policy(kc.build.policy, "HelmRepository", spec)


def _check_oci_repository(kc: KindContext) -> None:
    spec = kc.decoded
    _default_interval(spec)
    _require(spec, "url")
    if not spec["url"].startswith("oci://"):
        raise _scheme_error("oci://")
    _fill_verify_provider(kc, "verify")
    sources.check_source_policy(kc.build.policy, "OCIRepository", spec)


def _check_git_repository(kc: KindContext) -> None:
    spec = kc.decoded
    _default_interval(spec)
    _require(spec, "url")
    url = spec["url"]
    if not url.startswith(("http://", "https://", "ssh://")):
        raise FieldError(
            "url: must start with http://, https:// or ssh:// (write an scp-style git@host:org/repo as "
            "ssh://git@host/org/repo)"
        )
    sources.check_source_policy(kc.build.policy, "GitRepository", spec)


def _check_bucket(kc: KindContext) -> None:
    spec = kc.decoded
    _default_interval(spec)
    _require(spec, "bucketName")
    _require(spec, "endpoint")
    sources.check_source_policy(kc.build.policy, "Bucket", spec)


def _check_helm_chart(kc: KindContext) -> None:
    spec = kc.decoded
    _default_interval(spec)
    _require(spec, "chart")
    _require(spec, "sourceRef", "kind")
    _require(spec, "sourceRef", "name")
    _fill_verify_provider(kc, "verify")


def _source_kind(name: str, kind: str, spec_type: Any, check: Any) -> ComponentType:
    return kind_component(
        name,
        sources.SOURCE_API,
        kind,
        f"sourcev1.{spec_type.name}",
        spec=spec_type,
        api=types.FLUX,
        check=check,
    )


HELM_REPOSITORY = _source_kind(
    "helmrepository", "HelmRepository", types.HELM_REPOSITORY_SPEC, _check_helm_repository
)
OCI_REPOSITORY = _source_kind(
    "ocirepository", "OCIRepository", types.OCI_REPOSITORY_SPEC, _check_oci_repository
)
GIT_REPOSITORY = _source_kind(
    "gitrepository", "GitRepository", types.GIT_REPOSITORY_SPEC, _check_git_repository
)
BUCKET = _source_kind("bucket", "Bucket", types.BUCKET_SPEC, _check_bucket)

# Keys of the removed role-level helmchart composite (go-kure/launcher#350) that HelmChartSpec lacks.
COMPOSITE_KEYS = (
    "delivery",
    "releaseName",
    "targetNamespace",
    "source",
    "values",
    "valuesMode",
    "driftDetection",
    "install",
    "upgrade",
    "valuesFrom",
)

HELM_CHART = _with_unknown_key_hint(
    _source_kind("helmchart", "HelmChart", types.HELM_CHART_SPEC, _check_helm_chart),
    COMPOSITE_KEYS,
    "helmchart is Flux's HelmChart source kind (its properties are HelmChartSpec's); the former chart "
    "composite is the helm component: write type: helm (delivery: native is delivery: flux there)",
)
