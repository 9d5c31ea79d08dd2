"""The charts of a catalog, read at load so that every render request names the chart it renders.

For each application with chart components (``helmtemplate``, or ``helm`` with ``delivery:
template``), the loader asks the core which charts they name after parameter substitution
(``farm.core.chartrefs``), once for the shared values and once per cluster values file, and
refuses, naming ``app.yaml`` and the component, a chart that is not a chart reference or has no
version. Each chart then becomes an archive the application's requests hold:

- a chart vendored in the application folder (``charts/<chart>/Chart.yaml``, used for the
  application's chart components of that name) is read like any catalog file and packed
  deterministically (``farm.build.charts.pack_chart``); its Chart.yaml must hold the version the
  component pins;
- any other chart is fetched once per load, per distinct repository, chart and version, with
  ``helm pull`` (:class:`HelmRepositories`), and kept as the bytes the repository served.

The snapshot stores each archive as a content-addressed blob; the request names it by digest, with
the helm version of the planning process (``helm version --short``). A snapshot read back from
storage takes its fetched charts from those blobs (:class:`StoredCharts`), never from the network.
A planning process without helm attaches no charts: its chart targets are refused by the workers
for want of helm (not cached), as they were before charts were named.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from farm.build.charts import (
    ChartFetchError,
    chart_folder_version,
    find_helm,
    helm_pull,
    helm_version,
    pack_chart,
    read_chart_folder,
)
from farm.core.chartrefs import ChartComponent, chart_components, check_chart_reference
from farm.core.errors import CoreError
from farm.core.render import load_app_document
from farm.core.request import ChartArchive, RenderRequest, ValuesLayer

if TYPE_CHECKING:
    from farm.catalog.snapshot import CatalogSnapshot

CHART_FETCH_FAILED = "chart.fetch_failed"
CHART_VENDORED_INVALID = "chart.vendored_invalid"
ChartKey = tuple[str, str, str]  # repository, chart, version


class ChartSource(Protocol):
    """Where the charts of one load come from."""

    def helm_version(self) -> str | None:
        """The helm that renders them (``helm version --short``); None: no helm, no charts."""

    def fetch(self, ref: ChartComponent) -> bytes:
        """The archive of a repository chart; raises ``ChartFetchError``."""


class HelmRepositories:
    """Charts fetched with ``helm pull``, each distinct chart once (a live catalog's load)."""

    def __init__(self, helm: str | None = None) -> None:
        self._helm = helm
        self._looked = helm is not None
        self._version: str | None = None
        self._fetched: dict[ChartKey, bytes | ChartFetchError] = {}
        self.fetches = 0

    def _binary(self) -> str | None:
        if not self._looked:
            self._helm, self._looked = find_helm(), True
        return self._helm

    def helm_version(self) -> str | None:
        helm = self._binary()
        if helm is None:
            return None
        if self._version is None:
            self._version = helm_version(helm)
        return self._version

    def fetch(self, ref: ChartComponent) -> bytes:
        key = (ref.repository, ref.chart, ref.version)
        if key not in self._fetched:
            helm = self._binary()
            assert helm is not None  # asked only once helm_version() found one
            self.fetches += 1
            try:
                self._fetched[key] = helm_pull(helm, ref)
            except ChartFetchError as error:
                self._fetched[key] = error
        found = self._fetched[key]
        if isinstance(found, ChartFetchError):
            raise found
        return found


class StoredCharts:
    """The fetched charts a stored snapshot names, read back by digest (no network)."""

    def __init__(self, fetch: Callable[[str], bytes], version: str, digests: dict[ChartKey, str]) -> None:
        self._fetch, self._version, self._digests = fetch, version, digests

    def helm_version(self) -> str | None:
        return self._version or None

    def fetch(self, ref: ChartComponent) -> bytes:
        digest = self._digests.get((ref.repository, ref.chart, ref.version))
        if digest is None:
            raise ChartFetchError(f"the stored snapshot holds no chart {ref.shown} of {ref.repository}")
        return self._fetch(digest)


class NoCharts:
    """A load that attaches no chart (as a planning process without helm): for a reader that only
    asks which charts a catalog names (``farm doctor``), so nothing is fetched."""

    def helm_version(self) -> str | None:
        return None

    def fetch(self, ref: ChartComponent) -> bytes:
        raise ChartFetchError("charts are not fetched here")


class ChartProblem(Exception):
    """An application whose charts are refused at load: ``code`` and ``message`` (naming the file)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _may_render_charts(app_yaml: bytes, package: bytes | None) -> bool:
    """False only when no component can be a chart component (the common case, told cheaply): a
    component's type is ``helm``/``helmtemplate`` as written, or comes from a parameter."""
    return b"helm" in app_yaml or (package is not None and b"${" in app_yaml)


def chart_references(
    name: str,
    app_yaml: bytes,
    package: bytes | None,
    layerings: list[tuple[ValuesLayer, ...]],
    app_file: str,
) -> list[ChartComponent]:
    """Every distinct chart reference of an application under each of its values layerings,
    checked; raises :class:`ChartProblem` naming ``app_file`` and the component. A layering whose
    parameters do not resolve is skipped: its targets fail rendering with the core's error."""
    if not _may_render_charts(app_yaml, package):
        return []
    found: dict[ChartKey, ChartComponent] = {}
    for layers in layerings:
        request = RenderRequest(
            app=app_yaml,
            cluster_profile=b"",
            package=package,
            values=layers,
            app_source=app_file,
            package_source=f"{name}/kurel.yaml",
        )
        try:
            document = load_app_document(request)
        except (CoreError, ValueError):  # the render reports it, with the core's message
            continue
        try:
            for ref in chart_components(document):
                check_chart_reference(ref)
                found.setdefault((ref.repository, ref.chart, ref.version), ref)
        except CoreError as error:
            raise ChartProblem(error.code, f"{app_file}: {error.message}") from None
    return [found[key] for key in sorted(found)]


def applications_with_charts(snapshot: CatalogSnapshot) -> list[str]:
    """The applications of ``snapshot`` with a chart component, read as the loader reads them
    (``chart_references``: after parameter substitution, under each values layering), so a
    component whose type comes from a parameter counts; one whose reference the loader refuses
    counts too (it is still a chart component). Refused applications render nothing: not counted."""
    found = []
    for app in snapshot.applications:
        if app.problem is not None:
            continue
        try:
            refs = chart_references(
                app.name, app.app_yaml, app.package_yaml, app.values_layerings(), f"{app.name}/app.yaml"
            )
        except ChartProblem:
            refs = None
        if refs != []:
            found.append(app.name)
    return found


def application_charts(
    name: str,
    folder: Path,
    refs: list[ChartComponent],
    source: ChartSource,
    read: Callable[[Path], bytes],
    app_file: str,
) -> tuple[ChartArchive, ...]:
    """The archive of each chart reference: vendored in ``folder/charts/<chart>``, else fetched
    from ``source``. Raises :class:`ChartProblem` naming ``app_file`` and the component."""
    if not refs:
        return ()
    try:
        if source.helm_version() is None:
            return ()
    except ChartFetchError as error:
        raise ChartProblem(CHART_FETCH_FAILED, f"{app_file}: the planning process's helm: {error}") from None
    archives = []
    vendored: dict[str, tuple[bytes, str | None]] = {}
    for ref in refs:
        where = f'{app_file}: component "{ref.component}": chart {ref.shown}'
        chart_folder = folder / "charts" / ref.chart_name
        if (chart_folder / "Chart.yaml").is_file() and not chart_folder.is_symlink():
            if ref.chart_name not in vendored:
                try:
                    files = read_chart_folder(chart_folder, read)
                except (ChartFetchError, OSError, ValueError) as error:
                    raise ChartProblem(CHART_VENDORED_INVALID, f"{where}: {error}") from None
                vendored[ref.chart_name] = (pack_chart(ref.chart_name, files), chart_folder_version(files))
            data, version = vendored[ref.chart_name]
            if version != ref.version:
                raise ChartProblem(
                    CHART_VENDORED_INVALID,
                    f"{where}: {name}/charts/{ref.chart_name}/Chart.yaml holds version {version or '(none)'}, "
                    f"the component pins {ref.version}",
                )
            archives.append(
                ChartArchive(ref.repository, ref.chart, ref.version, data, f"{name}/charts/{ref.chart_name}")
            )
            continue
        try:
            data = source.fetch(ref)
        except ChartFetchError as error:
            raise ChartProblem(
                CHART_FETCH_FAILED, f"{where}: fetching it from {ref.repository}: {error}"
            ) from None
        archives.append(ChartArchive(ref.repository, ref.chart, ref.version, data))
    return tuple(sorted(archives))
