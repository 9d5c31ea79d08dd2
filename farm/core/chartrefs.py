"""The charts an application's client-side chart renders read, found without rendering.

A fleet catalog must name every byte a render reads (see ``farm/identity``), so before any render
the shell asks which charts an application's ``helmtemplate`` components (authored, or lowered
from ``helm`` with ``delivery: template``) will ask ``helm template`` for: their repository, chart
and version after parameter substitution. :func:`chart_components` answers with the handlers' own
parsing of those properties (so the answer is the :class:`~farm.core.charts.ChartRequest` the
render builds, without values), and :func:`check_chart_reference` refuses what is not a chart
reference, so it never reaches a helm command line: a chart name that is a flag (``-…``), a path
(``/``, ``..``) or a URL, a repository that is not ``http(s)://`` or ``oci://``, text with
whitespace or control characters, and a chart without a version (a repository may re-publish
"latest" at any time, so an unpinned chart is not an input anyone can name).

Pure: a document in, values out. It lives apart from :mod:`farm.core.charts` because it imports
the helm handlers, which import that module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from farm.core.components import helm, helmtemplate
from farm.core.errors import FieldError

_SCHEMES = ("http://", "https://", "oci://")


class ChartReferenceError(FieldError):
    """A chart component whose repository, chart or version is not a chart reference."""

    code = "chart.invalid_reference"


class ChartUnpinned(FieldError):
    """A chart component without a version."""

    code = "chart.unpinned"


@dataclass(frozen=True, order=True)
class ChartComponent:
    """One chart component's reference: what ``ChartRequest`` names besides release and values."""

    repository: str  # an http(s):// Helm repository, or the oci:// URL of the chart
    chart: str  # the chart's name in a HelmRepository; "" for an OCI chart
    version: str
    component: str
    source_kind: str  # HelmRepository or OCIRepository

    @property
    def chart_name(self) -> str:
        """The chart's own name: the chart of a HelmRepository, the last segment of an OCI URL."""
        return self.chart or self.repository.rstrip("/").rsplit("/", 1)[-1]

    @property
    def shown(self) -> str:
        return f"{self.chart_name} {self.version}".strip()


def _template_properties(component: dict[str, Any]) -> dict[str, Any] | None:
    """The helmtemplate properties of a chart component, None for any other component."""
    kind, props = component.get("type"), component.get("properties")
    if not isinstance(props, dict):
        return None
    if kind == "helmtemplate":
        return props
    if kind == "helm" and props.get("delivery") == "template":
        try:
            return helm._template_properties(props)
        except FieldError as exc:
            raise helmtemplate._fail(exc.message.removeprefix("helm: ")) from None
    return None


def chart_components(document: Any) -> list[ChartComponent]:
    """Every chart component of an application document (parameters already substituted), in
    document order. A chart component whose source, chart or version does not parse raises the
    handler's own error (``helmtemplate: …``), prefixed with ``component "NAME": ``."""
    spec = document.get("spec") if isinstance(document, dict) else None
    components = spec.get("components") if isinstance(spec, dict) else None
    found = []
    for entry in components if isinstance(components, list) else []:
        if not isinstance(entry, dict):
            continue
        name = entry.get("name") if isinstance(entry.get("name"), str) else ""
        try:
            props = _template_properties(entry)
            if props is None:
                continue
            url, kind = helmtemplate._source(props)
            chart, version = helmtemplate._chart_and_version(props, kind)
            found.append(ChartComponent(url, chart, version, name, kind))
        except FieldError as exc:
            raise exc.with_prefix(f'component "{name}": ') from None
    return found


def _plain(text: str) -> bool:
    """No whitespace, no control character, not a flag."""
    return bool(text) and not text.startswith("-") and not any(c.isspace() or ord(c) < 32 for c in text)


def check_chart_reference(ref: ChartComponent) -> None:
    """Refuse a reference that is not one: raises :class:`ChartUnpinned` or
    :class:`ChartReferenceError`, the message opening ``component "NAME": helmtemplate: ``."""
    prefix = f'component "{ref.component}": {helmtemplate.PREFIX}'
    if not ref.repository.startswith(_SCHEMES) or not _plain(ref.repository):
        raise ChartReferenceError(
            f"{prefix}source.url {ref.repository!r}: not a chart repository (an http:// or https:// "
            "Helm repository, or an oci:// chart URL, without whitespace)"
        )
    name = ref.chart_name
    if not _plain(name) or "/" in name or ".." in name or ":" in name or "\\" in name:
        raise ChartReferenceError(
            f"{prefix}chart {name!r}: not a chart reference (a chart's name in its repository: no leading "
            "'-', no '/', '..', ':', whitespace or scheme)"
        )
    if not ref.version:
        raise ChartUnpinned(
            f"{prefix}chart {name}: no version; a chart render must pin the chart's version, since a "
            "repository can publish another chart under no version at any time"
        )
    if not _plain(ref.version) or "/" in ref.version:
        raise ChartReferenceError(
            f"{prefix}version {ref.version!r}: not a chart version (no leading '-', '/' or whitespace)"
        )
