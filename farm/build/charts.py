"""The shell's side of client-side chart renders: helm, run on charts the request names.

The core stops a build that needs a chart render with ``ChartRenderNeeded`` (see
``farm/core/charts.py``); :func:`render_with_charts` answers its requests and renders again, until
the core asks for nothing more. Every chart it renders is an archive the render request holds
(``RenderRequest.charts``, each named by digest in the request, so by the action key): a worker
writes the archive to a private scratch folder and runs ``helm template RELEASE ARCHIVE
--namespace NS --values FILE``; nothing is fetched at render time, and no chart name, repository
or version reaches helm's command line. A worker whose ``helm version --short`` is not the one
the request was planned with refuses the target (``chart.helm_version_mismatch``), as does one
asked for a chart the request does not hold (the core's ``chart.render_needed`` refusal, which
says what is missing); neither refusal is cached, since it depends on the worker.

Fetching happens once, where requests are built (``farm/catalog/charts.py`` at load, ``farm
build`` before its render): :func:`helm_pull` asks helm for one pinned chart, :func:`pack_chart`
packs a chart folder into a deterministic archive.
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from farm.core.chartrefs import ChartComponent, ChartUnpinned, chart_components, check_chart_reference
from farm.core.charts import ChartRender, ChartRenderNeeded, ChartRequest
from farm.core.components.helmtemplate import PREFIX
from farm.core.errors import CoreError, TransformError
from farm.core.render import load_app_document
from farm.core.request import ChartArchive, RenderRequest

T = TypeVar("T")
HELM_TIMEOUT_SECONDS = 300
MAX_RENDER_ROUNDS = 64
MAX_CHART_BYTES = 16 * 1024 * 1024  # a chart archive larger than this is refused
HELM_VERSION_MISMATCH = "chart.helm_version_mismatch"


class HelmVersionMismatch(Exception):
    """This worker's helm is not the one the request was planned with: the target is refused
    here (not cached), and renders on a worker with that helm."""

    code = HELM_VERSION_MISMATCH

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ChartFetchError(Exception):
    """A chart that could not be fetched or packed; the message says which and why."""


def find_helm() -> str | None:
    return shutil.which("helm")


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " ".join(lines).removeprefix("Error: ") or "helm exited without saying why"


# helm binary (path, size, mtime) → its ``helm version --short``: one entry, so a worker asks once
# per binary, and a binary replaced in place is asked again
_VERSION: dict[tuple[str, int, int], str] = {}


def helm_version(helm: str) -> str:
    """``helm version --short`` of the binary ``helm`` (e.g. ``v3.14.2+gc309b6f``)."""
    try:
        info = os.stat(helm)
    except OSError as exc:
        raise ChartFetchError(f"helm {helm}: {exc.strerror or exc}") from None
    key = (helm, info.st_size, info.st_mtime_ns)
    known = _VERSION.get(key)
    if known is not None:
        return known
    try:
        done = subprocess.run(
            [helm, "version", "--short"],
            capture_output=True,
            timeout=60,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ChartFetchError(f"helm version --short: {exc}") from None
    version = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode != 0 or not version:
        raise ChartFetchError(f"helm version --short: {_one_line(done.stderr.decode('utf-8', 'replace'))}")
    _VERSION.clear()
    _VERSION[key] = version
    return version


# --- fetching and packing (where requests are built) ------------------------------------------


def pack_chart(name: str, files: Iterable[tuple[str, bytes]]) -> bytes:
    """A chart folder as a deterministic ``.tgz``: entries ``<name>/<path>`` sorted, regular files
    of mode 0644 and folders of 0755, no owner, time 0, and a gzip header without a time or a
    name. The same files give the same bytes on every machine."""
    paths = dict(files)
    folders = {f"{name}/{'/'.join(p.split('/')[:i])}" for p in paths for i in range(1, p.count("/") + 1)}
    members: list[tuple[str, bytes | None]] = [(name, None), *((f, None) for f in folders)]
    members += [(f"{name}/{path}", data) for path, data in paths.items()]
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for path, data in sorted(members):
            info = tarfile.TarInfo(path)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                archive.addfile(info)
            else:
                info.mode, info.size = 0o644, len(data)
                archive.addfile(info, io.BytesIO(data))
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0, compresslevel=9) as stream:
        stream.write(raw.getvalue())
    return packed.getvalue()


def unpack_chart(data: bytes) -> list[tuple[str, bytes]]:
    """The files of a packed chart, ``(path under the chart folder, bytes)``: regular files only,
    no path out of the folder (what :func:`pack_chart` writes)."""
    files = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():
            if member.isdir():
                continue
            parts = member.name.split("/")
            if not member.isfile() or len(parts) < 2 or any(p in ("", ".", "..") for p in parts):
                raise ChartFetchError(f"chart archive: {member.name!r} is not a file inside the chart")
            stream = archive.extractfile(member)
            assert stream is not None
            files.append(("/".join(parts[1:]), stream.read()))
    return files


MAX_CHART_FILES = 1000


def read_chart_folder(folder: Path, read: Callable[[Path], bytes]) -> list[tuple[str, bytes]]:
    """Every file of a chart folder, ``(path under it, bytes)``, each read with ``read`` (the
    catalog's confined reader); a symbolic link or a special file anywhere is refused, and so is a
    chart over ``MAX_CHART_FILES`` files or ``MAX_CHART_BYTES`` bytes."""
    files: list[tuple[str, bytes]] = []
    total = 0
    for current, folders, names in os.walk(folder, onerror=_raise):
        for name in sorted(folders + names):
            path = Path(current) / name
            if path.is_symlink():
                raise ChartFetchError(f"{path}: is a symbolic link; a chart folder reads only its own files")
        for name in sorted(names):
            data = read(Path(current) / name)
            total += len(data)
            files.append((str((Path(current) / name).relative_to(folder).as_posix()), data))
            if len(files) > MAX_CHART_FILES or total > MAX_CHART_BYTES:
                raise ChartFetchError(
                    f"{folder}: over {MAX_CHART_FILES} files or {MAX_CHART_BYTES} bytes, the limit of a chart"
                )
    return files


def _raise(error: OSError) -> None:
    raise ChartFetchError(f"{error.filename}: {error.strerror or error}")


def chart_folder_version(files: Iterable[tuple[str, bytes]]) -> str | None:
    """The ``version`` a chart folder's Chart.yaml declares, None without a readable one."""
    import yaml

    data = dict(files).get("Chart.yaml")
    if data is None:
        return None
    try:
        meta = yaml.safe_load(data.decode("utf-8")) or {}
    except (UnicodeDecodeError, yaml.YAMLError):
        return None
    version = meta.get("version") if isinstance(meta, dict) else None
    return None if version is None else str(version)


def helm_pull(helm: str, ref: ChartComponent) -> bytes:
    """The archive of one pinned chart, as its repository serves it: ``helm pull CHART --repo URL
    --version V --destination DIR`` (an OCI chart: ``helm pull oci://… --version V``). ``ref`` must
    have passed ``check_chart_reference`` (nothing on this command line can be a flag)."""
    with tempfile.TemporaryDirectory(prefix="farm-helm-pull-") as scratch:
        if ref.source_kind == "OCIRepository":
            argv = [helm, "pull", ref.repository]
        else:
            argv = [helm, "pull", ref.chart, "--repo", ref.repository]
        if ref.version:
            argv += ["--version", ref.version]
        argv += ["--destination", scratch]
        try:
            done = subprocess.run(
                argv, capture_output=True, timeout=HELM_TIMEOUT_SECONDS, check=False, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired:
            raise ChartFetchError(f"helm pull did not finish within {HELM_TIMEOUT_SECONDS} s") from None
        except OSError as exc:
            raise ChartFetchError(f"running {helm}: {exc.strerror or exc}") from None
        if done.returncode != 0:
            raise ChartFetchError(_one_line(done.stderr.decode("utf-8", "replace")))
        pulled = [path for path in Path(scratch).iterdir() if path.name.endswith(".tgz") and path.is_file()]
        if len(pulled) != 1:
            raise ChartFetchError(f"helm pull left {len(pulled)} chart archives, not one")
        if pulled[0].stat().st_size > MAX_CHART_BYTES:
            raise ChartFetchError(f"the chart archive is over the {MAX_CHART_BYTES}-byte limit")
        return pulled[0].read_bytes()


def _read_plain(path: Path) -> bytes:
    if path.is_symlink() or not path.is_file():
        raise ChartFetchError(f"{path}: not a regular file")
    if path.stat().st_size > MAX_CHART_BYTES:
        raise ChartFetchError(f"{path}: over the {MAX_CHART_BYTES}-byte limit of a chart")
    return path.read_bytes()


def _build_archive(helm: str, ref: ChartComponent, chart_dir: Path | None) -> ChartArchive:
    """``farm build``'s archive of one chart: ``chart_dir/<chart>`` packed, or pulled with helm."""
    if chart_dir is None:
        return ChartArchive(ref.repository, ref.chart, ref.version, helm_pull(helm, ref))
    folder = chart_dir / ref.chart_name  # the name holds no '/' or '..': check_chart_reference
    if folder.is_symlink() or not (folder / "Chart.yaml").is_file():
        raise ChartFetchError(
            f"chart {ref.chart_name}: no {folder / 'Chart.yaml'} in the chart folder {chart_dir}"
        )
    files = read_chart_folder(folder, _read_plain)
    version = chart_folder_version(files)
    if ref.version and version != ref.version:
        raise ChartFetchError(
            f"chart {ref.chart_name}: {folder / 'Chart.yaml'} holds version {version or '(none)'}, "
            f"the component asks for {ref.version}"
        )
    return ChartArchive(
        ref.repository, ref.chart, ref.version, pack_chart(ref.chart_name, files), str(folder)
    )


def with_build_charts(request: RenderRequest, chart_dir: Path | None) -> RenderRequest:
    """``farm build``'s request with the archives of its charts (from ``chart_dir``, else pulled
    from their repositories) and this helm's version, so it renders as a worker does. Without helm,
    or when the application does not parse, the request is returned as it is: the render then
    reports the core's own refusal. A chart argument that is not a chart reference is refused."""
    helm = find_helm()
    if helm is None:
        return request
    try:
        refs = chart_components(load_app_document(request))
    except (CoreError, ValueError):
        return request
    archives = []
    for ref in refs:
        with suppress(
            ChartUnpinned
        ):  # farm build writes nothing: it renders what helm has (a fleet refuses it)
            check_chart_reference(ref)
        try:
            archives.append(_build_archive(helm, ref, chart_dir))
        except (ChartFetchError, OSError) as error:
            raise TransformError(f'component "{ref.component}": {PREFIX}rendering chart: {error}') from None
    if not archives:
        return request
    try:
        version = helm_version(helm)
    except ChartFetchError as error:
        raise CoreError(str(error)) from None
    return replace(request, charts=tuple(sorted(set(archives))), helm_version=version)


# --- rendering (workers, the audit, farm build) -----------------------------------------------


def helm_template_argv(helm: str, request: ChartRequest, archive: Path, values_file: Path) -> list[str]:
    """``helm template`` of one request over a chart archive: no repository, no version, no name."""
    argv = [helm, "template", request.release_name, str(archive), "--namespace", request.namespace]
    return argv + ["--values", str(values_file)]


def run_helm_template(helm: str, request: ChartRequest, archive: bytes) -> ChartRender:
    """Render one request from its chart archive; a failure is an answer too (the core reports it)."""
    with tempfile.TemporaryDirectory(prefix="farm-helm-") as scratch:  # private (0700): values may be secret
        chart_file = Path(scratch) / "chart.tgz"
        chart_file.write_bytes(archive)
        values_file = Path(scratch) / "values.json"
        values_file.write_text(request.values, encoding="utf-8")
        argv = helm_template_argv(helm, request, chart_file, values_file)
        try:
            done = subprocess.run(
                argv, capture_output=True, timeout=HELM_TIMEOUT_SECONDS, check=False, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired:
            return ChartRender(error=f"helm template did not finish within {HELM_TIMEOUT_SECONDS} s")
        except OSError as exc:
            return ChartRender(error=f"running {helm}: {exc.strerror or exc}")
    if done.returncode != 0:
        return ChartRender(error=_one_line(done.stderr.decode("utf-8", "replace")))
    return ChartRender(manifests=done.stdout)


def _archive_for(request: RenderRequest, chart: ChartRequest) -> ChartArchive | None:
    return next(
        (a for a in request.charts if a.matches(chart.repository, chart.chart, chart.version)),
        None,
    )


def check_helm_version(helm: str, request: RenderRequest) -> None:
    """Raise :class:`HelmVersionMismatch` unless this worker's helm is the request's."""
    try:
        mine = helm_version(helm)
    except ChartFetchError as exc:
        raise HelmVersionMismatch(
            f"{exc}; the request was planned with helm {request.helm_version}"
        ) from None
    if mine != request.helm_version:
        raise HelmVersionMismatch(
            f"this worker's helm is {mine}, the request was planned with helm {request.helm_version}: a chart "
            "renders with the helm its action key names, so this target renders on a worker with that helm"
        )


def render_with_charts(
    render: Callable[..., T],
    request: RenderRequest,
    *,
    answers: dict[str, ChartRender] | None = None,
    **kwargs: Any,
) -> T:
    """``render(request, charts=..., **kwargs)``, answering every chart render the core asks for
    with helm over the archives the request holds, and rendering again until it asks for nothing
    more. ``answers``, when given, collects the chart renders helm gave (a caller can tell whether
    the outcome depended on them). A chart the request does not hold, or no helm, leaves the
    core's refusal standing; another helm than the request's raises :class:`HelmVersionMismatch`."""
    charts: dict[str, ChartRender] = {} if answers is None else answers
    helm: str | None = None
    for _ in range(MAX_RENDER_ROUNDS):
        try:
            return render(request, charts=charts, **kwargs)
        except ChartRenderNeeded as needed:
            missing = [chart for chart in needed.requests if chart.key not in charts]
            archives = [_archive_for(request, chart) for chart in missing]
            if not missing or any(archive is None for archive in archives):
                raise
            if helm is None:
                helm = find_helm()
                if helm is None:
                    raise
                check_helm_version(helm, request)
            for chart, archive in zip(missing, archives, strict=True):
                assert archive is not None
                charts[chart.key] = run_helm_template(helm, chart, archive.data)
    raise CoreError(f"the build asked for more than {MAX_RENDER_ROUNDS} chart renders; giving up")
