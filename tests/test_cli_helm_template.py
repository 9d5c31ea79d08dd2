"""``farm build`` with helm ``delivery: template``: the shell answers the core's chart requests with
the ``helm`` on PATH, as a worker does: from a chart archive the request holds, packed from the
chart folder the test writes (``--charts``), or pulled once from the chart's repository (served on
loopback by the test) before the render; ``helm template`` never fetches. It refuses, saying a
helm binary is needed, when PATH has none, and refuses a chart argument that is not a chart
reference before helm sees it.

No helm binary can be installed on the test machines (no registry this project reaches ships
one), so these tests put tests/helm_standin.py on PATH as ``helm``: a stand-in that behaves like
``helm template`` for a chart folder or archive, ``helm pull`` and ``helm version``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from chart_repository import ChartRepository
from typer.testing import CliRunner, Result

from farm.cli import app as farm_cli

STANDIN = Path(__file__).resolve().parent / "helm_standin.py"
PROFILE = """\
apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: edge
spec:
  capabilities: {}
"""
APPLICATION = """\
apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: shop
  namespace: demo
spec:
  components:
    - name: web
      type: helm
      properties:
        delivery: template
        chart: web
        version: 1.2.0
        source:
          url: https://charts.example.com
        values:
          image: registry.example.com/web:1.2.0
{extra}"""
CHART = {
    "Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.2.0\n",
    "values.yaml": "replicas: 2\n",
    "templates/deployment.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  template:
    spec:
      containers:
        - name: app
          image: {{ .Values.image | quote }}
""",
    "templates/hook.yaml": """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-setup
  namespace: {{ .Release.Namespace }}
  annotations:
    helm.sh/hook: pre-install
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: setup
          image: registry.example.com/setup:1.0.0
""",
    "templates/test.yaml": """\
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test
  annotations:
    helm.sh/hook: test
spec:
  containers:
    - name: t
      image: registry.example.com/t:1.0.0
""",
}
EXPECTED = """\
apiVersion: batch/v1
kind: Job
metadata:
  annotations:
    helm.sh/hook: pre-install
  labels:
    launcher.gokure.dev/component: web
  name: web-setup
  namespace: demo
spec:
  template:
    spec:
      containers:
      - image: registry.example.com/setup:1.0.0
        name: setup
      restartPolicy: Never
---
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    launcher.gokure.dev/component: web
  name: web
  namespace: demo
spec:
  replicas: 2
  template:
    spec:
      containers:
      - image: registry.example.com/web:1.2.0
        name: app
"""


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


@pytest.fixture
def helm_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bin folder holding the stand-in as ``helm``, alone on PATH; returns its argv log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helm = bin_dir / "helm"
    helm.write_text(f"#!{sys.executable}\n" + STANDIN.read_text())
    helm.chmod(0o755)
    log = tmp_path / "helm-argv.jsonl"
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("HELM_STANDIN_LOG", str(log))
    return log


def _runs(log: Path, command: str = "template") -> list[list[str]]:
    """The argv of each ``helm COMMAND`` the stand-in ran."""
    runs = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [argv for argv in runs if argv[:1] == [command]]


def _build(tmp_path: Path, extra: str = "", *flags: str, application: str = APPLICATION) -> Result:
    (tmp_path / "app.yaml").write_text(application.format(extra=extra))
    (tmp_path / "cluster.yaml").write_text(PROFILE)
    args = ["build", str(tmp_path / "app.yaml"), "--profile", str(tmp_path / "cluster.yaml"), *flags]
    return CliRunner().invoke(farm_cli, args)


def test_farm_build_renders_a_chart_from_the_chart_folder_with_the_helm_on_path(
    tmp_path: Path, helm_on_path: Path
) -> None:
    _write(tmp_path / "charts" / "web", CHART)
    result = _build(tmp_path, "", "--charts", str(tmp_path / "charts"))
    assert result.exit_code == 0, result.output
    assert result.stdout == EXPECTED
    (argv,) = _runs(helm_on_path)
    assert argv[:2] == ["template", "web"] and argv[2].endswith("/chart.tgz")  # the packed folder
    assert argv[3:6] == ["--namespace", "demo", "--values"] and len(argv) == 7
    assert _runs(helm_on_path, "pull") == []  # nothing fetched


def test_farm_build_without_a_helm_binary_refuses_saying_one_is_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    _write(tmp_path / "charts" / "web", CHART)
    result = _build(tmp_path, "", "--charts", str(tmp_path / "charts"))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        'Error: component "web": helmtemplate: rendering chart web 1.2.0 needs a helm binary (helm template), '
        "and this build has none: farm build and the fleet workers run the helm on their PATH, so install "
        "helm there, or have the cluster render the chart (helm with delivery: flux)\n"
    )


def test_a_chart_missing_from_the_chart_folder_is_reported_as_the_components_render_failure(
    tmp_path: Path, helm_on_path: Path
) -> None:
    (tmp_path / "charts").mkdir()
    result = _build(tmp_path, "", "--charts", str(tmp_path / "charts"))
    assert result.exit_code == 1
    chart_file = tmp_path / "charts" / "web" / "Chart.yaml"
    assert result.stderr == (
        f'Error: component "web": helmtemplate: rendering chart: chart web: no {chart_file} in the chart '
        f"folder {tmp_path / 'charts'}\n"
    )
    assert _runs(helm_on_path) == []


def test_a_chart_folder_of_another_version_is_refused(tmp_path: Path, helm_on_path: Path) -> None:
    _write(tmp_path / "charts" / "web", CHART | {"Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.1.0\n"})
    result = _build(tmp_path, "", "--charts", str(tmp_path / "charts"))
    assert result.exit_code == 1
    assert "holds version 1.1.0, the component asks for 1.2.0" in result.stderr


def test_a_template_error_with_secret_values_is_withheld_and_the_values_alone_error_reported(
    tmp_path: Path, helm_on_path: Path
) -> None:
    failing = CHART | {"templates/auth.yaml": '{{ required "auth.user is required" .Values.auth.user }}\n'}
    _write(tmp_path / "charts" / "web", failing)
    result = _build(
        tmp_path,
        "        secretValues:\n          auth:\n            password: hunter2\n",
        "--charts",
        str(tmp_path / "charts"),
    )
    assert result.exit_code == 1
    assert "hunter2" not in result.stderr
    assert result.stderr == (
        'Error: component "web": helmtemplate: rendering chart with secretValues failed; the cause is withheld '
        "because it can repeat a sensitive value. Without them it fails with: rendering chart: execution "
        "error at (web/templates/auth.yaml): auth.user is required\n"
    )
    assert len(_runs(helm_on_path)) == 2


@pytest.fixture
def repository(tmp_path: Path) -> Iterator[ChartRepository]:
    served = ChartRepository(tmp_path / "repository")
    yield served
    served.stop()


def test_without_a_chart_folder_the_pinned_chart_is_pulled_from_its_repository_and_rendered_from_the_archive(
    tmp_path: Path, helm_on_path: Path, repository: ChartRepository
) -> None:
    repository.publish("web", "1.2.0", CHART)
    application = APPLICATION.replace("https://charts.example.com", repository.url)
    result = _build(tmp_path, application=application)
    assert result.exit_code == 0, result.output
    assert result.stdout == EXPECTED
    (pull,) = _runs(helm_on_path, "pull")
    assert pull[:6] == ["pull", "web", "--repo", repository.url, "--version", "1.2.0"]
    (argv,) = _runs(helm_on_path)
    assert "--repo" not in argv and "--version" not in argv and argv[2].endswith("/chart.tgz")


@pytest.mark.parametrize(
    "chart",
    ["../outside", "--post-renderer=/bin/sh", "file:///etc", "web/../../outside", "we b"],
)
def test_a_chart_argument_that_is_not_a_chart_reference_is_refused_before_helm_sees_it(
    tmp_path: Path, helm_on_path: Path, chart: str
) -> None:
    _write(tmp_path / "outside", CHART)  # a chart beside the chart folder, which ../ would reach
    (tmp_path / "charts").mkdir()
    application = APPLICATION.replace("chart: web", f"chart: {json.dumps(chart)}")
    result = _build(tmp_path, "", "--charts", str(tmp_path / "charts"), application=application)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "not a chart reference" in result.stderr and 'component "web"' in result.stderr
    assert _runs(helm_on_path) == [] and _runs(helm_on_path, "pull") == []
