"""run_job reports what it actually recorded: a worker whose claim was taken over while it rendered
(the reconciler re-queued the job and another worker claimed it) records nothing and says so, on
SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select

import farm.scheduler.jobs as jobs
from farm.core.errors import CoreError
from farm.scheduler.jobs import run_job
from farm.scheduler.progress import run_summary
from farm.scheduler.reconcile import stale_jobs
from farm.scheduler.service import plan_catalog
from farm.store import models
from farm.store.db import session_scope
from farm.store.repository import claim_job

from .conftest import Catalog, FleetEnv


def _job(env: FleetEnv, job_id: str) -> models.RenderJob:
    with session_scope(env.storage.sessions) as session:
        job = session.get(models.RenderJob, job_id)
        assert job is not None
        return job


def _take_over_while_rendering(
    env: FleetEnv, monkeypatch: pytest.MonkeyPatch, job_id: str, *, then_fail: bool
) -> None:
    """While the first worker renders, the reconciler re-queues its job and "w2" claims it."""
    render = jobs._render

    def taken_over(documents: jobs.TargetDocuments) -> bytes:
        assert job_id in dict(stale_jobs(env.storage, timeout=timedelta(seconds=-1)))
        with session_scope(env.storage.sessions) as session:
            assert claim_job(session, job_id, worker="w2")
        if then_fail:
            raise CoreError("refused after the takeover")
        return render(documents)

    monkeypatch.setattr(jobs, "_render", taken_over)


@pytest.mark.parametrize("then_fail", [False, True], ids=["success", "failure"])
def test_a_worker_whose_claim_was_taken_over_reports_skipped_and_records_nothing(
    fleet_env: FleetEnv, catalog: Catalog, monkeypatch: pytest.MonkeyPatch, then_fail: bool
) -> None:
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    job_id, key = planned.queued[0]
    _take_over_while_rendering(fleet_env, monkeypatch, job_id, then_fail=then_fail)

    outcome = run_job(fleet_env.storage, fleet_env.signer, job_id, worker="w1", expected_action_key=key)

    assert (outcome.state, outcome.error_code, outcome.output_digest) == ("skipped", None, None)
    job = _job(fleet_env, job_id)
    assert (job.state, job.claimed_by, job.attempts) == ("running", "w2", 2)
    assert (job.output_digest, job.error_code) == (None, None)
    with session_scope(fleet_env.storage.sessions) as session:  # w1's rows were rolled back
        assert session.scalar(select(func.count()).select_from(models.EvidenceRecord)) == 0
        assert session.scalar(select(func.count()).select_from(models.ActionCacheEntry)) == 0

    monkeypatch.undo()  # w2 finishes the job normally; the run completes
    with session_scope(fleet_env.storage.sessions) as session:
        session.execute(
            models.RenderJob.__table__.update()
            .where(models.RenderJob.id == job_id)
            .values(state="queued", claimed_by=None)
        )
    assert run_job(fleet_env.storage, fleet_env.signer, job_id, worker="w2").state == "succeeded"
    for other, other_key in planned.queued[1:]:
        run_job(fleet_env.storage, fleet_env.signer, other, worker="w1", expected_action_key=other_key)
    summary = run_summary(fleet_env.storage, planned.run_id)
    assert summary.state == "completed" and summary.counts == {"succeeded": len(planned.queued)}


def test_outcomes_of_recorded_jobs(fleet_env: FleetEnv, catalog: Catalog) -> None:
    catalog.break_app("app-1")
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    outcomes = {
        job_id: run_job(fleet_env.storage, fleet_env.signer, job_id, worker="w1", expected_action_key=key)
        for job_id, key in planned.queued
    }
    for job_id, outcome in outcomes.items():
        job = _job(fleet_env, job_id)
        assert outcome.state == job.state
        assert (outcome.error_code, outcome.output_digest) == (job.error_code, job.output_digest)
    assert {outcome.state for outcome in outcomes.values()} == {"succeeded", "failed"}
    again = run_job(fleet_env.storage, fleet_env.signer, planned.queued[0][0], worker="w2")
    assert again.state == "skipped"  # finished already: nothing to claim
    assert run_summary(fleet_env.storage, planned.run_id).state == "completed_with_failures"
