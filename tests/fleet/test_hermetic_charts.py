"""Hermetic chart renders: every byte a chart render reads is named by its request, so by its
action key. A chart repository is served on loopback by the test; the planning process pulls each
pinned chart once and stores its archive; workers render from that archive (never the network),
with the helm version the request names. On SQLite and PostgreSQL, jobs run in this process."""

from __future__ import annotations

from pathlib import Path

import pytest
from chart_repository import ChartRepository

from farm.build.bounded import stop_render_children
from farm.catalog import load_catalog
from farm.catalog.loader import CatalogError
from farm.fleet import preview as pv
from farm.fleet.jobs import run_job
from farm.fleet.progress import run_summary
from farm.fleet.queries import latest_output
from farm.fleet.service import plan_catalog, stored_catalog

from .conftest import HELM_CHART, Catalog, FleetEnv, helm_environment, helm_runs, make_catalog, write_helm_app

OTHER_IMAGE_CHART = HELM_CHART | {"values.yaml": "replicas: 5\n"}


@pytest.fixture
def helm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The stand-in as this process's ``helm`` (render children fork from it)."""
    environment = helm_environment(tmp_path)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return environment


@pytest.fixture
def helm_catalog(tmp_path: Path, chart_repository: ChartRepository) -> Catalog:
    catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a", "cluster-b"))
    write_helm_app(catalog, "charted", chart_repository.url)
    return catalog


def _run(env: FleetEnv, catalog: Catalog) -> tuple[str, dict[str, int]]:
    _, planned = plan_catalog(env.storage, catalog.root)
    for job_id, key in planned.queued:
        run_job(env.storage, env.signer, job_id, worker="w1", expected_batch_key=key)
    return planned.run_id, run_summary(env.storage, planned.run_id).counts


def _plan(env: FleetEnv, catalog: Catalog) -> dict[tuple[str, str], list[str]]:
    snapshot = load_catalog(catalog.root)
    run_id = pv.latest_run_of_fleet(env.storage, snapshot.name)
    baseline = pv.run_baseline(env.storage, run_id) if run_id else None
    plan = pv.preview(env.storage, snapshot, baseline, source="tests")
    return {(t.application, t.cluster): [str(c) for c in t.causes] for t in plan.render}


CHARTED = {("charted", "cluster-a"), ("charted", "cluster-b")}


@pytest.mark.timeout(180)
def test_a_chart_re_published_under_the_same_version_with_other_bytes_is_a_chart_change_and_re_renders(
    fleet_env: FleetEnv, helm: dict[str, str], helm_catalog: Catalog, chart_repository: ChartRepository
) -> None:
    _, counts = _run(fleet_env, helm_catalog)
    assert counts == {"succeeded": 4}
    assert b"replicas: 2" in latest_output(fleet_env.storage, "charted", "cluster-a")
    chart_repository.publish("web", "1.2.0", OTHER_IMAGE_CHART)  # same version, other bytes
    assert _plan(fleet_env, helm_catalog) == {target: ["chart changed (web 1.2.0)"] for target in CHARTED}
    _, counts = _run(fleet_env, helm_catalog)
    assert counts == {"cached": 2, "succeeded": 2}
    assert b"replicas: 5" in latest_output(fleet_env.storage, "charted", "cluster-a")


@pytest.mark.timeout(180)
def test_a_chart_re_published_with_the_same_bytes_keeps_its_targets_cached(
    fleet_env: FleetEnv, helm: dict[str, str], helm_catalog: Catalog, chart_repository: ChartRepository
) -> None:
    _run(fleet_env, helm_catalog)
    chart_repository.publish("web", "1.2.0", HELM_CHART)  # the same bytes again
    assert _plan(fleet_env, helm_catalog) == {}
    _, counts = _run(fleet_env, helm_catalog)
    assert counts == {"cached": 4}


@pytest.mark.timeout(180)
def test_an_edited_vendored_chart_re_renders_its_targets_and_nothing_is_fetched(
    fleet_env: FleetEnv, helm: dict[str, str], tmp_path: Path
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a", "cluster-b"))
    write_helm_app(catalog, "charted", "http://127.0.0.1:9/never-asked")  # nothing listens there
    vendored = catalog.root / "applications" / "charted" / "charts" / "web"
    for name, text in (HELM_CHART | {"Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.2.0\n"}).items():
        (vendored / name).parent.mkdir(parents=True, exist_ok=True)
        (vendored / name).write_text(text)
    _, counts = _run(fleet_env, catalog)
    assert counts == {"succeeded": 4}
    _, counts = _run(fleet_env, catalog)
    assert counts == {"cached": 4}  # packed again, to the same archive
    (vendored / "values.yaml").write_text("replicas: 7\n")
    assert _plan(fleet_env, catalog) == {target: ["chart changed (web 1.2.0)"] for target in CHARTED}
    _, counts = _run(fleet_env, catalog)
    assert counts == {"cached": 2, "succeeded": 2}
    assert b"replicas: 7" in latest_output(fleet_env.storage, "charted", "cluster-b")
    assert helm_runs(helm, "pull") == []


@pytest.mark.timeout(180)
def test_a_worker_renders_charts_from_the_stored_archive_with_the_repository_gone(
    fleet_env: FleetEnv, helm: dict[str, str], helm_catalog: Catalog, chart_repository: ChartRepository
) -> None:
    snapshot, planned = plan_catalog(fleet_env.storage, helm_catalog.root)
    chart_repository.stop()  # no network at render time
    for job_id, key in planned.queued:
        run_job(fleet_env.storage, fleet_env.signer, job_id, worker="w1", expected_batch_key=key)
    assert run_summary(fleet_env.storage, planned.run_id).counts == {"succeeded": 4}
    assert b"kind: Deployment" in latest_output(fleet_env.storage, "charted", "cluster-a")
    assert len(helm_runs(helm, "pull")) == 1  # at planning only
    # a stored snapshot reads back (as a qualification worker does) from the stored archive too
    assert stored_catalog(fleet_env.storage, snapshot.digest).digest == snapshot.digest
    assert len(helm_runs(helm, "pull")) == 1


@pytest.mark.timeout(180)
def test_a_worker_with_another_helm_version_refuses_the_chart_targets_without_caching_the_refusal(
    fleet_env: FleetEnv,
    helm: dict[str, str],
    helm_catalog: Catalog,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, planned = plan_catalog(fleet_env.storage, helm_catalog.root)  # planned with v3.99.0+gstandin
    monkeypatch.setenv("PATH", helm_environment(tmp_path, version="v3.98.0+gother")["PATH"])
    for job_id, key in planned.queued:
        run_job(fleet_env.storage, fleet_env.signer, job_id, worker="w1", expected_batch_key=key)
    summary = run_summary(fleet_env.storage, planned.run_id)
    assert summary.counts == {"succeeded": 2, "failed": 2}
    failures = summary.failures["chart.helm_version_mismatch"]
    assert {f["cluster"] for f in failures} == {"cluster-a", "cluster-b"}
    assert all(
        "this worker's helm is v3.98.0+gother, the request was planned with helm v3.99.0+gstandin"
        in f["message"]
        for f in failures
    )
    monkeypatch.setenv("PATH", helm["PATH"])
    stop_render_children()  # another worker: a render child with the request's helm
    _, counts = _run(fleet_env, helm_catalog)
    assert counts == {"cached": 2, "succeeded": 2}  # the refusal was the worker's, not cached


@pytest.mark.timeout(180)
def test_the_helm_version_of_the_planning_process_is_part_of_a_chart_targets_key(
    fleet_env: FleetEnv,
    helm: dict[str, str],
    helm_catalog: Catalog,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _run(fleet_env, helm_catalog)
    monkeypatch.setenv("PATH", helm_environment(tmp_path, version="v3.98.0+gother")["PATH"])
    causes = _plan(fleet_env, helm_catalog)
    assert causes == {target: ["chart changed (helm v3.98.0+gother)"] for target in CHARTED}
    stop_render_children()  # a worker with that helm
    _, counts = _run(fleet_env, helm_catalog)
    assert counts == {"cached": 2, "succeeded": 2}  # app-0 has no chart: its keys are unchanged


UNPINNED = ("version: 1.2.0", "")
FLAG = ("chart: web", "chart: --post-renderer=/bin/sh")
PATH_OUT = ("chart: web", "chart: ../web")
FILE_URL = ("url: {url}", "url: file:///etc")


@pytest.mark.parametrize(
    ("edit", "code", "says"),
    [
        (UNPINNED, "chart.unpinned", "chart web: no version"),
        (FLAG, "chart.invalid_reference", "chart '--post-renderer=/bin/sh': not a chart reference"),
        (PATH_OUT, "chart.invalid_reference", "chart '../web': not a chart reference"),
        (FILE_URL, "property.invalid", "source.url: must be an http://, https:// or oci:// URL"),
    ],
    ids=["unpinned", "flag", "path-out", "file-url"],
)
def test_a_chart_that_is_not_a_pinned_chart_reference_is_refused_at_load_naming_the_file_and_component(
    helm: dict[str, str],
    tmp_path: Path,
    chart_repository: ChartRepository,
    edit: tuple[str, str],
    code: str,
    says: str,
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a",))
    write_helm_app(catalog, "charted", chart_repository.url)
    app_yaml = catalog.root / "applications" / "charted" / "app.yaml"
    old, new = edit[0].format(url=chart_repository.url), edit[1]
    app_yaml.write_text(app_yaml.read_text().replace(old, new))
    snapshot = load_catalog(catalog.root)
    (problem,) = snapshot.problems
    assert (problem.file, problem.code) == ("applications/charted/app.yaml", code)
    assert problem.message.startswith('applications/charted/app.yaml: component "charted": helmtemplate: ')
    assert says in problem.message
    assert snapshot.application("app-0").problem is None  # the other application loads
    assert helm_runs(helm, "pull") == [] and helm_runs(helm) == []  # helm never saw it


def test_a_vendored_chart_of_another_version_than_the_component_pins_is_refused_at_load(
    helm: dict[str, str], tmp_path: Path
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=0, clusters=("cluster-a",))
    write_helm_app(catalog, "charted", "http://127.0.0.1:9/never-asked")
    vendored = catalog.root / "applications" / "charted" / "charts" / "web"
    vendored.mkdir(parents=True)
    (vendored / "Chart.yaml").write_text("apiVersion: v2\nname: web\nversion: 1.1.0\n")
    (problem,) = load_catalog(catalog.root).problems
    assert problem.code == "chart.vendored_invalid"
    assert "charted/charts/web/Chart.yaml holds version 1.1.0, the component pins 1.2.0" in problem.message


def test_a_catalog_without_charts_keeps_its_request_digests_and_never_asks_helm(
    helm: dict[str, str], tmp_path: Path
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=2, clusters=("cluster-a",))
    snapshot = load_catalog(catalog.root)
    assert all("charts" not in tr.request.descriptor() for tr in snapshot.target_requests)
    assert "helmVersion" not in snapshot.content()
    assert not Path(helm["HELM_STANDIN_LOG"]).exists()


def test_a_catalog_error_is_not_raised_for_charts(tmp_path: Path) -> None:
    """A chart problem is the application's, not the catalog's: the load goes on."""
    catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a",))
    write_helm_app(catalog, "charted", "file:///etc")
    try:
        snapshot = load_catalog(catalog.root)
    except CatalogError as error:  # pragma: no cover - the assertion below says why
        pytest.fail(f"the catalog was refused as a whole: {error}")
    assert [p.file for p in snapshot.problems] == ["applications/charted/app.yaml"]
