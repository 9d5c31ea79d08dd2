"""The shell's side of client-side chart renders: run ``helm template`` for the core's requests.

The core stops a build that needs a chart render with ``ChartRenderNeeded`` (see
``farm/core/charts.py``); :func:`render_with_charts` answers its requests with a ``helm`` binary
from PATH and renders again, until the core asks for nothing more. Without a helm binary the
core's refusal stands, and it says that one is needed.

A chart folder (``farm build --charts DIR``) holds charts as ``DIR/<chart name>/Chart.yaml``;
a chart found there is rendered from the folder and nothing is fetched. Otherwise helm fetches
the chart from the component's repository (``--repo URL``) or OCI registry.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from farm.core.charts import ChartRender, ChartRenderNeeded, ChartRequest
from farm.core.errors import CoreError

T = TypeVar("T")
HELM_TIMEOUT_SECONDS = 300
MAX_RENDER_ROUNDS = 64


def find_helm() -> str | None:
    return shutil.which("helm")


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " ".join(lines).removeprefix("Error: ") or "helm exited without saying why"


def _local_chart(request: ChartRequest, chart_dir: Path) -> Path | str:
    """The chart folder for the request, or why it cannot be used."""
    folder = chart_dir / request.chart_name
    chart_file = folder / "Chart.yaml"
    if not chart_file.is_file():
        return f"chart {request.chart_name}: no {chart_file} in the chart folder {chart_dir}"
    try:
        meta = yaml.safe_load(chart_file.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return f"chart {request.chart_name}: reading {chart_file}: {exc}"
    version = str(meta.get("version", "")) if isinstance(meta, dict) else ""
    if request.version and version != request.version:
        return (
            f"chart {request.chart_name}: {chart_file} holds version {version or '(none)'}, "
            f"the component asks for {request.version}"
        )
    return folder


def helm_template_argv(
    helm: str, request: ChartRequest, chart: str, values_file: Path, *, local: bool
) -> list[str]:
    """``helm template`` for one request; ``chart`` is a local chart folder (``local``), or the
    chart's name in its repository, or its OCI URL."""
    argv = [helm, "template", request.release_name, chart, "--namespace", request.namespace]
    argv += ["--values", str(values_file)]
    if not local:
        if request.source_kind == "HelmRepository":
            argv += ["--repo", request.repository]
        if request.version:
            argv += ["--version", request.version]
    return argv


def run_helm_template(helm: str, request: ChartRequest, chart_dir: Path | None = None) -> ChartRender:
    """Render one request with helm; a failure is an answer too (the core reports it)."""
    if chart_dir is not None:
        chart: Path | str = _local_chart(request, chart_dir)
        if isinstance(chart, str):
            return ChartRender(error=chart)
    else:
        chart = request.chart or request.repository
    with tempfile.TemporaryDirectory(prefix="farm-helm-") as scratch:
        values_file = Path(scratch) / "values.json"  # the directory is private (0700): values may be secret
        values_file.write_text(request.values, encoding="utf-8")
        argv = helm_template_argv(helm, request, str(chart), values_file, local=chart_dir is not None)
        try:
            done = subprocess.run(argv, capture_output=True, timeout=HELM_TIMEOUT_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            return ChartRender(error=f"helm template did not finish within {HELM_TIMEOUT_SECONDS} s")
        except OSError as exc:
            return ChartRender(error=f"running {helm}: {exc.strerror or exc}")
    if done.returncode != 0:
        return ChartRender(error=_one_line(done.stderr.decode("utf-8", "replace")))
    return ChartRender(manifests=done.stdout)


def render_with_charts(
    render: Callable[..., T],
    *args: Any,
    chart_dir: Path | None = None,
    answers: dict[str, ChartRender] | None = None,
    **kwargs: Any,
) -> T:
    """``render(*args, charts=..., **kwargs)``, answering every chart render the core asks for with
    helm and rendering again, until it asks for nothing more. ``answers``, when given, collects the
    chart renders helm gave (a caller can tell whether the outcome depended on them)."""
    charts: dict[str, ChartRender] = {} if answers is None else answers
    helm: str | None = None
    for _ in range(MAX_RENDER_ROUNDS):
        try:
            return render(*args, charts=charts, **kwargs)
        except ChartRenderNeeded as needed:
            helm = helm or find_helm()
            missing = [request for request in needed.requests if request.key not in charts]
            if helm is None or not missing:
                raise
            for request in missing:
                charts[request.key] = run_helm_template(helm, request, chart_dir)
    raise CoreError(f"the build asked for more than {MAX_RENDER_ROUNDS} chart renders; giving up")
