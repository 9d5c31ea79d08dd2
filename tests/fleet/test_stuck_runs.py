"""No stuck runs: ``farm run --timeout`` gives up with one Error line naming what is still
queued, the wait says when no worker has taken a job, a job whose infrastructure retries ran out
ends failed (its run completes), and ``--json`` reports the run's final state."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from farm.commands.run import _wait_with_progress
from farm.execution.celery import CeleryQueue
from farm.fleet.jobs import RETRIES_EXHAUSTED, give_up_job
from farm.fleet.progress import run_summary
from farm.fleet.service import plan_catalog
from farm.identity.fingerprint import versioned_queue
from farm.settings import load_settings
from farm.store import models
from farm.store.db import session_scope
from farm.store.models import JobState
from farm.store.runs import TargetResult, claim_job, finish_job

from .conftest import Catalog, FleetEnv, make_catalog
from .test_celery import CeleryFarm, celery_farm, farm_source, redis_broker  # noqa: F401


def test_a_job_given_up_fails_with_its_targets_and_the_last_one_finishes_the_run(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    assert len(planned.queued) == 4
    for job_id, _ in planned.queued[:-1]:
        assert give_up_job(fleet_env.storage, job_id, ConnectionError("broker gone"))
    assert run_summary(fleet_env.storage, planned.run_id).state == "running"
    assert give_up_job(fleet_env.storage, planned.queued[-1][0], ConnectionError("broker gone"))
    summary = run_summary(fleet_env.storage, planned.run_id)
    assert summary.state == "completed_with_failures"
    assert summary.counts == {"failed": 11}
    messages = {f["message"] for f in summary.failures[RETRIES_EXHAUSTED]}
    assert messages == {"the job's retries ran out on an infrastructure error: ConnectionError: broker gone"}
    with session_scope(fleet_env.storage.sessions) as session:
        states = set(session.scalars(select(models.RenderJob.state)))
    assert states == {"failed"}


def test_a_job_that_finished_is_not_given_up(fleet_env: FleetEnv, catalog: Catalog) -> None:
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    job_id = planned.queued[0][0]
    assert give_up_job(fleet_env.storage, job_id, ConnectionError("first"))
    assert not give_up_job(fleet_env.storage, job_id, ConnectionError("second"))


@pytest.mark.timeout(300)
def test_a_run_with_no_worker_says_so_and_times_out_with_one_error_line(
    celery_farm: CeleryFarm,  # noqa: F811
    tmp_path: Path,
) -> None:
    catalog = make_catalog(tmp_path / "catalog")
    result = celery_farm.farm("run", str(catalog.root), "--executor", "celery", "--timeout", "12")
    assert result.returncode == 1 and result.stdout == ""
    assert "Traceback" not in result.stderr
    # not a terminal: plain progress lines (``run …: 0/11 targets done``), one warning, one error
    lines = [line for line in result.stderr.splitlines() if not line.startswith("run ")]
    assert lines[0].startswith("warning: no worker has taken a job of run ")
    assert f"in 10 s: no worker consumes queue {celery_farm.queue}." in lines[0]
    assert len(lines) == 2 and lines[1].startswith("Error: run ")
    assert "11 of 11 targets still queued after 12 s" in lines[1]
    assert "start or check a worker (farm worker), then follow the run with farm status" in lines[1]


@pytest.mark.timeout(600)
def test_a_job_whose_retries_run_out_on_a_celery_worker_fails_and_the_run_completes(
    celery_farm: CeleryFarm,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The worker's object store is an S3 endpoint nobody listens on: every attempt fails on
    infrastructure, and after the last retry the job fails instead of staying queued."""
    catalog = make_catalog(tmp_path / "catalog", apps=1)
    planner_env = dict(celery_farm.env)
    celery_farm.env.update(
        {
            "FARM_OBJECT_STORE": "s3://nowhere",
            "FARM_S3_ENDPOINT_URL": "http://127.0.0.1:9",
            "FARM_S3_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_MAX_ATTEMPTS": "1",
        }
    )
    celery_farm.start_worker()
    celery_farm.env = planner_env
    summary = celery_farm.farm_json(
        "run", str(catalog.root), "--executor", "celery", "--timeout", "500", status=1
    )
    assert summary["state"] == "completed_with_failures"
    assert list(summary["failures"]) == [RETRIES_EXHAUSTED]
    assert summary["counts"]["failed"] == 2 and summary["counts"]["queued"] == 0
    message = summary["failures"][RETRIES_EXHAUSTED][0]["message"]
    assert message.startswith("the job's retries ran out on an infrastructure error: ")
    (job,) = celery_farm.jobs(summary["run_id"])
    assert job.state == "failed" and job.attempts == 6  # the first try and five retries


def test_the_wait_reports_the_final_run_state_when_the_last_worker_has_not_finished_the_run_row(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    """Every job recorded, the run row still ``running`` (the last worker died between its commit
    and ``finalize_run_if_done``): the summary ``farm run`` prints says ``completed_with_failures``."""
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    for job_id, _ in planned.queued:
        with session_scope(fleet_env.storage.sessions) as session:
            claimed = claim_job(session, job_id, worker="w")
            assert claimed is not None
            results = [
                TargetResult(t.id, JobState.FAILED, error_code="x", error_message="y")
                for t in claimed.targets
            ]
            assert finish_job(session, job_id, worker="w", results=results)
    assert run_summary(fleet_env.storage, planned.run_id).state == "running"
    summary = _wait_with_progress(fleet_env.storage, planned.run_id, "off")
    assert summary.state == "completed_with_failures" and summary.done == summary.total == 11


@pytest.mark.timeout(300)
def test_the_no_worker_warning_asks_the_broker_and_names_the_queue_nobody_consumes(
    celery_farm: CeleryFarm,  # noqa: F811
    tmp_path: Path,
) -> None:
    """A worker of another core listens on its own queue: the broker says nobody consumes this
    run's queue, and names the worker that consumes the other one."""
    other = celery_farm.start_worker(core="other-core")
    settings = load_settings(broker_url=celery_farm.env["FARM_BROKER_URL"], celery_queue=celery_farm.queue)
    client = CeleryQueue(settings)
    other_queue = versioned_queue(celery_farm.queue, "other-core")
    deadline = time.monotonic() + 120
    while not client.consumers(other_queue) and time.monotonic() < deadline and other.poll() is None:
        time.sleep(0.5)
    assert client.consumers(other_queue) == [f"{celery_farm.queue}-0@{socket.gethostname()}"]
    assert client.consumers(CeleryQueue.queue_name(settings)) == []
    catalog = make_catalog(tmp_path / "catalog", apps=1)
    result = celery_farm.farm("run", str(catalog.root), "--executor", "celery", "--timeout", "11")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    warning = next(line for line in result.stderr.splitlines() if line.startswith("warning: "))
    assert f"no worker consumes queue {CeleryQueue.queue_name(settings)}: start one" in warning


def test_the_broker_question_is_none_when_the_broker_cannot_be_asked() -> None:
    settings = load_settings(broker_url="redis://127.0.0.1:9/0", celery_queue="nobody")
    assert CeleryQueue(settings).consumers("nobody", timeout=0.5) is None
