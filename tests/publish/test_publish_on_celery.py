"""Publish on run on Celery: the worker whose job finishes the run publishes it (the after-run
step of ``farm run`` only records it while the run is still rendering; here no worker runs until
``farm run --no-wait`` has returned, so only a worker can have published)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fleet.conftest import make_catalog
from fleet.test_celery import CeleryFarm, celery_farm, farm_source, redis_broker, wait_until  # noqa: F401

from publish.conftest import commits, git


@pytest.mark.timeout(300)
def test_a_celery_run_with_farm_publish_to_is_published_once_it_completes(
    celery_farm: CeleryFarm,  # noqa: F811
    tmp_path: Path,
    bare: Path,
) -> None:
    celery_farm.env["FARM_PUBLISH_TO"] = f"git {bare}"
    catalog = make_catalog(tmp_path / "catalog", apps=2, clusters=("cluster-a", "cluster-b"))
    # no worker yet: the run is still rendering when its after-run step records the publish
    summary = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery", "--no-wait")
    assert summary["state"] != "completed" and commits(bare) == []
    celery_farm.start_worker()
    wait_until(
        lambda: len(commits(bare)) == 1, "the run's publish commit", check=celery_farm.check_workers_alive
    )
    assert f"run: {summary['run_id']}" in git(bare, "log", "-1", "--format=%B", "main")
    listed = git(bare, "ls-tree", "-r", "--name-only", "main").split()
    assert "clusters/cluster-b/app-1.yaml" in listed
