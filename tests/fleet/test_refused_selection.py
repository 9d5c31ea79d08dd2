"""A target whose profile selection names an undeclared profile or value is a failed target of
its run (exit 1), counted and listed with its code and file like a refused application's targets."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from farm.execution.local import run_local
from farm.fleet.progress import run_summary
from farm.fleet.service import plan_catalog

from .conftest import FleetEnv
from .test_celery import CeleryFarm, celery_farm, farm_source, redis_broker  # noqa: F401

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"
SELECTION = "      profile: ingress-class=internal"


def _example_selecting(tmp_path: Path, selection: str) -> Path:
    catalog = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, catalog)
    fleet = catalog / "fleet.yaml"
    fleet.write_text(fleet.read_text().replace(SELECTION, f"      profile: {selection}"))
    return catalog


@pytest.mark.parametrize(
    ("selection", "code"),
    [("ingress-class=nope", "profile.unknown_value"), ("colour=internal", "profile.unknown_profile")],
)
def test_a_target_refused_for_an_undeclared_selection_fails_in_its_run(
    fleet_env: FleetEnv, tmp_path: Path, selection: str, code: str
) -> None:
    _, planned = plan_catalog(fleet_env.storage, _example_selecting(tmp_path, selection))
    run_local(fleet_env.settings, planned.queued, processes=1)
    summary = run_summary(fleet_env.storage, planned.run_id)
    assert summary.state == "completed_with_failures"
    assert summary.total == 31 and summary.failed == 2
    assert summary.counts == {"succeeded": 29, "failed": 2}
    failures = summary.failures[code]
    assert {(f["application"], f["cluster"]) for f in failures} == {
        ("catalog-api", "prod-nginx"),
        ("orders-worker", "prod-nginx"),
    }
    assert all(f["message"].startswith("fleet.yaml: target ") for f in failures)


@pytest.mark.timeout(300)
def test_farm_run_exits_1_for_a_target_refused_for_an_undeclared_value(tmp_path: Path) -> None:
    catalog = _example_selecting(tmp_path, "ingress-class=nope")
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env |= {"FARM_HOME": str(tmp_path / "home"), "FARM_DAEMON": "off"}

    def farm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "farm", *args], capture_output=True, text=True, env=env)

    result = farm("run", str(catalog), "--json", "--processes", "1")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert any(
        line.startswith("warning: fleet.yaml: target catalog-api") for line in result.stderr.splitlines()
    )
    summary = json.loads(result.stdout)
    assert summary["state"] == "completed_with_failures"
    assert list(summary["failures"]) == ["profile.unknown_value"]
    runs = [json.loads(line) for line in farm("runs", "--json").stdout.splitlines()]
    assert [run["state"] for run in runs] == ["completed_with_failures"]
    status = farm("status", runs[0]["id"])
    assert "failed with profile.unknown_value: 2" in status.stdout
    assert "fleet.yaml: target orders-worker on prod-nginx refused" in status.stdout


@pytest.mark.timeout(300)
def test_a_celery_run_fails_a_target_refused_for_an_undeclared_value_and_exits_1(
    celery_farm: CeleryFarm,  # noqa: F811
    tmp_path: Path,
) -> None:
    catalog = _example_selecting(tmp_path, "ingress-class=nope")
    celery_farm.start_worker()
    summary = celery_farm.farm_json("run", str(catalog), "--executor", "celery", status=1)
    assert summary["state"] == "completed_with_failures"
    assert list(summary["failures"]) == ["profile.unknown_value"]
    assert summary["counts"]["failed"] == 2 and summary["counts"]["succeeded"] == 29
