"""Fleet runs of a catalog holding a helm ``delivery: template`` application: the planning process
pulls the pinned chart once from its repository (served on loopback by the test), the workers
fulfil the core's chart requests with the helm on their PATH (the test's stand-in) from the archive
the request holds, and refuse clearly when they have none; ``farm run`` with the local executor,
on SQLite and PostgreSQL (the Celery worker's case is in test_celery.py).

``farm run`` runs as its own process: the local executor's pool starts from a forkserver, which
keeps the PATH of the process that first started it, so only a fresh process sees the PATH a
test gives it (as a user's shell gives one to ``farm run``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chart_repository import ChartRepository

from farm.fleet.progress import run_summary
from farm.fleet.queries import latest_output

from .conftest import (
    HELM_CHART,
    Catalog,
    FleetEnv,
    helm_environment,
    helm_runs,
    make_catalog,
    no_helm_environment,
    write_helm_app,
)


@pytest.fixture
def helm_catalog(tmp_path: Path, chart_repository: ChartRepository) -> Catalog:
    catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a", "cluster-b"))
    write_helm_app(catalog, "charted", chart_repository.url)
    return catalog


def _run(env: FleetEnv, catalog: Catalog, environment: dict[str, str]) -> tuple[str, dict[str, int]]:
    """``farm run CATALOG --executor local`` in a process of its own, with ``environment``."""
    process_env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    process_env.update(env.environ() | environment)
    done = subprocess.run(
        [sys.executable, "-m", "farm", "run", str(catalog.root), "--json", "--processes", "2"],
        env=process_env,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    run_id = json.loads(done.stdout)["run_id"]
    return run_id, run_summary(env.storage, run_id).counts


@pytest.mark.timeout(120)
def test_a_local_fleet_run_renders_a_helm_template_application_with_the_helm_on_path(
    fleet_env: FleetEnv, tmp_path: Path, helm_catalog: Catalog, chart_repository: ChartRepository
) -> None:
    environment = helm_environment(tmp_path)
    _, counts = _run(fleet_env, helm_catalog, environment)
    assert counts == {"succeeded": 4}
    output = latest_output(fleet_env.storage, "charted", "cluster-b").decode()
    assert "kind: Deployment" in output
    assert "image: ghcr.io/example/web:1.2.0" in output
    assert "launcher.gokure.dev/component: charted" in output
    (pull,) = helm_runs(environment, "pull")  # once at planning, for both targets
    assert pull[1:6] == ["web", "--repo", chart_repository.url, "--version", "1.2.0"]
    asked = helm_runs(environment)
    assert len(asked) == 2 and all(argv[:2] == ["template", "charted"] for argv in asked)
    assert all(argv[2].endswith("/chart.tgz") and "--repo" not in argv for argv in asked)


@pytest.mark.timeout(120)
def test_a_local_fleet_run_without_helm_fails_only_the_chart_targets_saying_a_helm_binary_is_needed(
    fleet_env: FleetEnv, tmp_path: Path, helm_catalog: Catalog
) -> None:
    run_id, counts = _run(fleet_env, helm_catalog, no_helm_environment(tmp_path))
    assert counts == {"succeeded": 2, "failed": 2}
    failures = run_summary(fleet_env.storage, run_id).failures
    assert list(failures) == ["chart.render_needed"]
    messages = {failure["message"] for failure in failures["chart.render_needed"]}
    assert messages == {
        'component "charted": helmtemplate: rendering chart web 1.2.0 needs a helm binary (helm template), '
        "and this build has none: farm build and the fleet workers run the helm on their PATH, so install "
        "helm there, or have the cluster render the chart (helm with delivery: flux)"
    }


@pytest.mark.timeout(180)
def test_a_chart_target_refused_for_want_of_helm_renders_once_a_worker_has_one(
    fleet_env: FleetEnv, tmp_path: Path, helm_catalog: Catalog
) -> None:
    _, counts = _run(fleet_env, helm_catalog, no_helm_environment(tmp_path))
    assert counts == {"succeeded": 2, "failed": 2}
    _, counts = _run(fleet_env, helm_catalog, helm_environment(tmp_path))
    assert counts == {"cached": 2, "succeeded": 2}  # the refusal was the worker's, not cached


@pytest.mark.timeout(180)
def test_a_chart_the_repository_lacks_fails_its_targets_at_load_naming_app_yaml_and_is_not_cached(
    fleet_env: FleetEnv, tmp_path: Path, chart_repository: ChartRepository
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a", "cluster-b"))
    write_helm_app(catalog, "charted", chart_repository.url)
    app_yaml = catalog.root / "applications" / "charted" / "app.yaml"
    app_yaml.write_text(app_yaml.read_text().replace("version: 1.2.0", "version: 1.3.0"))  # not published
    environment = helm_environment(tmp_path)
    run_id, counts = _run(fleet_env, catalog, environment)
    assert counts == {"succeeded": 2, "failed": 2}
    (failure, _) = run_summary(fleet_env.storage, run_id).failures["chart.fetch_failed"]
    assert failure["message"].startswith(
        f'applications/charted/app.yaml: component "charted": chart web 1.3.0: fetching it from {chart_repository.url}: '
    )
    assert 'chart "web" version "1.3.0" not found' in failure["message"]
    assert helm_runs(environment) == []  # nothing rendered
    chart_repository.publish("web", "1.3.0", HELM_CHART)  # published since
    _, counts = _run(fleet_env, catalog, environment)
    assert counts == {"cached": 2, "succeeded": 2}
