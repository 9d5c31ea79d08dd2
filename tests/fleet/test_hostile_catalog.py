"""The hostile corpus through one real catalog of good and hostile applications, on the local
executor and on a real Celery worker: every good target renders, each hostile target fails alone
with its own code and a bounded message, and the run's summary stays small.

Hostile: an alias bomb in a passthrough object and in a ClusterProfile's rendering, ``cpu:
"1e999999999"``, a 5,000-digit integer, nesting of 500 and 999 levels, a 50 MB image (the catalog
file limit is raised for it, so it reaches the renderer), an application folder whose name is not
UTF-8.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from farm.cli import app as cli

from .conftest import FleetEnv, make_catalog
from .test_celery import CeleryFarm, celery_farm, farm_source, redis_broker  # noqa: F401

CORPUS = Path(__file__).resolve().parents[1] / "hostile"
HOSTILE_FILES = {  # application → (corpus file, a part of its message)
    "alias-passthrough": ("alias-bomb-passthrough.yaml", "excessive aliasing"),
    "huge-cpu": ("huge-exponent-cpu.yaml", "1e999999999"),
    "deep-500": ("deep-block-mapping-500.yaml", "nesting deeper than 200 levels"),
    "deep-999": ("deep-flow-sequence-999.yaml", "exceeded maximum nesting depth"),
}
GOOD_TARGETS = 8  # app-0..app-2 on cluster-a..c, less the excluded app-0/cluster-c
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_MESSAGE = 4100
WORKER_FAILURES = {"render.internal_error", "render.crashed", "render.timeout", "render.memory"}

APP_WITH = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: apps
spec:
  components:
    - name: web
      type: webservice
      properties:
        image: "{image}"
        port: 8080
        replicas: {replicas}
"""


def _write(root: Path, name: str, text: str) -> None:
    folder = root / "applications" / name
    folder.mkdir(parents=True)
    (folder / "app.yaml").write_text(text)


def hostile_catalog(root: Path) -> tuple[Path, dict[str, str]]:
    """The catalog and, by hostile application, a part of the message its targets fail with."""
    catalog = make_catalog(root, apps=3)
    expected = {}
    for name, (file, message) in HOSTILE_FILES.items():
        text = (CORPUS / "apps" / file).read_text()
        _write(root, name, text.replace("metadata:\n  name: web\n", f"metadata:\n  name: {name}\n", 1))
        expected[name] = message
    _write(
        root, "digits-5000", APP_WITH.format(name="digits-5000", image="nginx:1.27.0", replicas="9" * 5000)
    )
    expected["digits-5000"] = "replicas"
    image = "registry.example/app:" + "a" * 50_000_000
    _write(root, "image-50mb", APP_WITH.format(name="image-50mb", image=image, replicas=2))
    expected["image-50mb"] = f"({len(image)} characters)"
    os.makedirs(os.fsencode(root / "applications") + b"/caf\xe9")  # a folder name that is not UTF-8
    expected["caf\\xe9"] = "applications/caf\\xe9: the name is not UTF-8"
    shutil.copy(CORPUS / "profiles" / "alias-bomb-rendering.yaml", root / "clusters" / "evil.yaml")
    return catalog.root, expected


def check_hostile_run(summary: dict, expected: dict[str, str]) -> None:
    assert summary["counts"]["succeeded"] == GOOD_TARGETS
    failed = [dict(f, code=code) for code, failures in summary["failures"].items() for f in failures]
    assert not WORKER_FAILURES & set(summary["failures"]), summary["failures"].keys()
    assert all(len(f["message"]) <= MAX_MESSAGE for f in failed)
    good = {f"app-{i}" for i in range(3)}
    for failure in failed:
        if failure["cluster"] == "evil":
            assert failure["application"] in good or failure["application"] in expected
            continue
        assert failure["application"] in expected, failure
        assert expected[failure["application"]] in failure["message"], failure
    hostile_on_good_clusters = {(f["application"], f["cluster"]) for f in failed if f["cluster"] != "evil"}
    assert hostile_on_good_clusters == {
        (a, c) for a in expected for c in ("cluster-a", "cluster-b", "cluster-c")
    }
    evil = [f for f in failed if f["cluster"] == "evil"]
    assert len(evil) == len(good) + len(expected)
    assert any("excessive aliasing" in f["message"] and f["application"] in good for f in evil)
    assert len(json.dumps(summary)) < 100_000  # 50 MB of image is never echoed


@pytest.mark.timeout(600)
def test_a_catalog_of_good_and_hostile_applications_on_the_local_executor(
    fleet_env: FleetEnv, tmp_path: Path
) -> None:
    root, expected = hostile_catalog(tmp_path / "catalog")
    env = fleet_env.environ() | {"FARM_CATALOG_MAX_FILE_BYTES": str(MAX_FILE_BYTES)}
    result = CliRunner().invoke(cli, ["run", str(root), "--json", "--processes", "2"], env=env)
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.exit_code == 1
    summary = json.loads(result.stdout)
    assert summary["state"] == "completed_with_failures"
    check_hostile_run(summary, expected)


@pytest.mark.timeout(900)
def test_a_catalog_of_good_and_hostile_applications_on_a_celery_worker(
    celery_farm: CeleryFarm,  # noqa: F811
    tmp_path: Path,
) -> None:
    root, expected = hostile_catalog(tmp_path / "catalog")
    celery_farm.env["FARM_CATALOG_MAX_FILE_BYTES"] = str(MAX_FILE_BYTES)
    celery_farm.start_worker()
    summary = celery_farm.farm_json("run", str(root), "--executor", "celery", status=1)
    assert summary["state"] == "completed_with_failures"
    check_hostile_run(summary, expected)
    jobs = celery_farm.jobs(summary["run_id"])
    assert jobs and all((job.claimed_by or "").startswith("celery@") for job in jobs)
