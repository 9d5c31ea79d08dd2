"""A full object store on a Celery worker is an infrastructure error: the job is retried with
backoff, then fails with ``store.full`` and the run completes (it used to fail on its first
attempt with a bare OSError and leave the run to the reconciler)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from farm.store.objects import STORE_FULL

from .conftest import fill_filesystem, make_catalog
from .test_celery import CeleryFarm, celery_farm, farm_source, redis_broker  # noqa: F401


@pytest.mark.timeout(400)
def test_a_full_object_store_is_retried_then_fails_the_job_with_store_full_and_the_run_completes(
    celery_farm: CeleryFarm,  # noqa: F811
    small_filesystem: Path,
    tmp_path: Path,
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=1)
    celery_farm.env["FARM_OBJECT_STORE"] = str(small_filesystem / "objects")
    planned = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery", "--no-wait")
    fill_filesystem(small_filesystem)  # the run's requests are stored; its outputs will find no room
    celery_farm.start_worker()
    deadline = time.monotonic() + 300
    while (summary := celery_farm.farm_json("status", planned["run_id"], "--json", status=None))[
        "state"
    ] == "running" and time.monotonic() < deadline:
        time.sleep(1)
    assert summary["state"] == "completed_with_failures", summary
    assert list(summary["failures"]) == [STORE_FULL]
    message = summary["failures"][STORE_FULL][0]["message"]
    assert "No space left on device" in message and str(small_filesystem) in message
    (job,) = celery_farm.jobs(planned["run_id"])
    assert job.state == "failed" and job.attempts == 6  # the first try and five retries with backoff
