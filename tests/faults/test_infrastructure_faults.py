"""Infrastructure faults on a farm of its own (Redis, PostgreSQL, S3 on their own loopback ports):
each run ends with every target rendered once, nothing lost and nothing written twice."""

from __future__ import annotations

import re

import pytest
from fleet.conftest import make_catalog
from fleet.test_celery import OPEN_JOB_STATES, wait_until
from sqlalchemy import select

from farm.store import models
from farm.store.db import session_scope

from .conftest import FaultFarm, S3FaultFarm

pytestmark = pytest.mark.timeout(120)


def _counts(farm, run_id: str) -> dict[str, int]:
    """jobs, outputs, duplicates, lost: what the fault report gives for a run."""
    targets = farm.targets(run_id)
    with session_scope(farm.storage.sessions) as session:
        cache = session.execute(select(models.ActionCacheEntry.action_key)).scalars().all()
        evidence = session.execute(select(models.EvidenceRecord.target_id)).scalars().all()
    keys = [target.action_key for target in targets]
    return {
        "jobs": len(farm.jobs(run_id)),
        "outputs": sum(1 for target in targets if target.state == "succeeded" and target.output_digest),
        "duplicates": (len(cache) - len(set(cache))) + (len(evidence) - len(set(evidence))),
        "lost": sum(1 for target in targets if target.state != "succeeded") + len(set(keys) - set(cache)),
    }


def test_a_redis_restart_loses_queued_messages_and_the_reconciler_recovers_every_job(
    fault_farm: FaultFarm, tmp_path
) -> None:
    farm = fault_farm.farm
    catalog = make_catalog(tmp_path / "catalog", apps=10)  # 10 x 3 clusters minus one = 29
    planned = farm.farm_json("run", str(catalog.root), "--executor", "celery", "--no-wait")
    run_id = planned["run_id"]
    assert planned["counts"]["queued"] == 29

    fault_farm.redis.restart()  # no persistence: the 10 messages are gone
    farm.start_worker()
    reconcile = farm.farm("reconcile", "--timeout", "0")
    assert reconcile.returncode == 0, reconcile.stdout + reconcile.stderr
    assert re.fullmatch(r"re-sent 10 jobs\n", reconcile.stdout), reconcile.stdout

    wait_until(
        lambda: not {job.state for job in farm.jobs(run_id)} & OPEN_JOB_STATES,
        "every job of the run to finish",
        check=farm.check_workers_alive,
        describe=lambda: farm.describe(run_id),
    )
    assert farm.farm_json("status", run_id, status=None)["state"] == "completed"
    assert _counts(farm, run_id) == {"jobs": 10, "outputs": 29, "duplicates": 0, "lost": 0}
    verify = farm.farm("verify", "--run", run_id)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def _wait_for_first_batch(farm, run_id: str) -> None:
    wait_until(
        lambda: any(job.state == "succeeded" for job in farm.jobs(run_id)),
        "the first batch to be recorded",
        poll=0.01,
        check=farm.check_workers_alive,
        describe=lambda: farm.describe(run_id),
    )


def _finish(farm, run_id: str) -> None:
    """Reconcile (every open job sent again: a duplicate is skipped at the claim) until done."""
    reconcile = farm.farm("reconcile", "--timeout", "0")
    assert reconcile.returncode == 0, reconcile.stdout + reconcile.stderr
    wait_until(
        lambda: not {job.state for job in farm.jobs(run_id)} & OPEN_JOB_STATES,
        "every job of the run to finish",
        check=farm.check_workers_alive,
        describe=lambda: farm.describe(run_id),
    )
    assert farm.farm_json("status", run_id, status=None)["state"] == "completed"
    verify = farm.farm("verify", "--run", run_id)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_worker_killed_with_sigkill_mid_run_loses_nothing(fault_farm: FaultFarm, tmp_path) -> None:
    farm = fault_farm.farm
    catalog = make_catalog(tmp_path / "catalog", apps=20)  # 59 targets
    run_id = farm.farm_json("run", str(catalog.root), "--executor", "celery", "--no-wait")["run_id"]
    worker = farm.start_worker()
    _wait_for_first_batch(farm, run_id)
    farm.kill(worker)
    assert any(job.state in OPEN_JOB_STATES for job in farm.jobs(run_id)), "the kill must land mid-run"
    farm.start_worker()
    _finish(farm, run_id)
    assert _counts(farm, run_id) == {"jobs": 20, "outputs": 59, "duplicates": 0, "lost": 0}


def test_a_worker_stopped_with_sigterm_mid_run_loses_nothing(fault_farm: FaultFarm, tmp_path) -> None:
    import os
    import signal

    farm = fault_farm.farm
    catalog = make_catalog(tmp_path / "catalog", apps=20)
    run_id = farm.farm_json("run", str(catalog.root), "--executor", "celery", "--no-wait")["run_id"]
    worker = farm.start_worker()
    _wait_for_first_batch(farm, run_id)
    os.kill(worker.pid, signal.SIGTERM)  # warm shutdown: the jobs in hand finish, the rest wait
    assert worker.wait(timeout=60) == 0, farm.worker_log(0)
    assert any(job.state in OPEN_JOB_STATES for job in farm.jobs(run_id)), "the stop must land mid-run"
    farm.start_worker()
    _finish(farm, run_id)
    assert _counts(farm, run_id) == {"jobs": 20, "outputs": 59, "duplicates": 0, "lost": 0}


def test_postgresql_unreachable_for_seconds_mid_run_the_run_completes(
    fault_farm: FaultFarm, tmp_path
) -> None:
    import time

    farm = fault_farm.farm
    catalog = make_catalog(tmp_path / "catalog", apps=20)
    run_id = farm.farm_json("run", str(catalog.root), "--executor", "celery", "--no-wait")["run_id"]
    farm.start_worker()
    _wait_for_first_batch(farm, run_id)
    assert any(job.state in OPEN_JOB_STATES for job in farm.jobs(run_id)), "the outage must land mid-run"
    fault_farm.postgres.stop()
    time.sleep(5)
    fault_farm.postgres.start()
    _finish(farm, run_id)
    assert _counts(farm, run_id) == {"jobs": 20, "outputs": 59, "duplicates": 0, "lost": 0}
    # no half-written rows: every target recorded with its output, cache entry and evidence
    with session_scope(farm.storage.sessions) as session:
        outputs = set(session.scalars(select(models.RenderOutput.digest)))
    assert {target.output_digest for target in farm.targets(run_id)} == outputs


REFUSAL_SECONDS = 4.0


def _blobs_of_rows(farm) -> set[str]:
    """Every blob a row points at: outputs and targets' outputs (evidence names its batch envelope,
    held in a row, which the test checks as well)."""
    with session_scope(farm.storage.sessions) as session:
        outputs = set(session.scalars(select(models.RenderOutput.digest)))
        targets = set(session.scalars(select(models.RenderTarget.output_digest)))
        named = set(session.scalars(select(models.EvidenceRecord.batch_envelope)))
        held = set(session.scalars(select(models.EvidenceEnvelope.digest)))
        assert named and None not in named and named <= held
    return (outputs | targets) - {None}


@pytest.mark.parametrize("refusal", ["503", "reset"])
def test_the_object_store_refusing_writes_mid_run_loses_and_duplicates_nothing(
    s3_fault_farm: S3FaultFarm, tmp_path, refusal: str
) -> None:
    import time

    farm, proxy = s3_fault_farm.farm, s3_fault_farm.proxy
    catalog = make_catalog(tmp_path / "catalog", apps=20)
    run_id = farm.farm_json("run", str(catalog.root), "--executor", "celery", "--no-wait")["run_id"]
    farm.start_worker()
    _wait_for_first_batch(farm, run_id)
    with proxy.refusing_writes(refusal):  # 503 ServiceUnavailable, or the connection reset
        assert any(job.state in OPEN_JOB_STATES for job in farm.jobs(run_id)), "must land mid-run"
        wait_until(lambda: proxy.refused > 0, "a worker's PUT to be refused", check=farm.check_workers_alive)
        time.sleep(REFUSAL_SECONDS)
        # blob before row: while no blob can be written, no job records anything
        recorded = {job.id for job in farm.jobs(run_id) if job.state == "succeeded"}
        time.sleep(1.0)
        assert {job.id for job in farm.jobs(run_id) if job.state == "succeeded"} == recorded
    _finish(farm, run_id)
    assert proxy.refused > 0
    assert max(job.attempts for job in farm.jobs(run_id)) >= 2, "a refused job must have been claimed again"
    assert _counts(farm, run_id) == {"jobs": 20, "outputs": 59, "duplicates": 0, "lost": 0}
    # no row points at a missing blob (the test's storage reads moto directly, not the proxy)
    missing = {digest for digest in _blobs_of_rows(farm) if not farm.storage.objects.exists(digest)}
    assert missing == set()
