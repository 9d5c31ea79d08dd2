"""The statements that find and take over runs whose owner died, and release claims of dead
workers (``farm.fleet.recovery`` decides when). Conditional UPDATEs: of two processes finding
the same dead run, one takes it over."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from farm.store.models import FleetRun, JobState, RenderJob, RunState, utcnow
from farm.store.runs import chunks


def owned_running_runs(session: Session) -> list[tuple[str, str]]:
    """(run id, owner) of every running run that records an owner."""
    rows = session.execute(
        select(FleetRun.id, FleetRun.owner).where(
            FleetRun.state == RunState.RUNNING.value, FleetRun.owner.is_not(None)
        )
    )
    return [(run_id, owner) for run_id, owner in rows]


def take_over_run(session: Session, run_id: str, *, owner: str, new_owner: str | None) -> bool:
    """The run's owner ``owner`` → ``new_owner``, only if it is still running under ``owner``."""
    statement = (
        update(FleetRun)
        .where(FleetRun.id == run_id, FleetRun.state == RunState.RUNNING.value, FleetRun.owner == owner)
        .values(owner=new_owner)
        .execution_options(synchronize_session=False)
    )
    return session.execute(statement).rowcount == 1  # type: ignore[attr-defined]


def requeue_running_jobs_of_run(session: Session, run_id: str) -> int:
    """Every running job of the run → queued, its claim dropped (its worker died with the run's owner)."""
    statement = (
        update(RenderJob)
        .where(RenderJob.run_id == run_id, RenderJob.state == JobState.RUNNING.value)
        .values(state=JobState.QUEUED.value, claimed_by=None, queued_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return int(session.execute(statement).rowcount)  # type: ignore[attr-defined]


def requeue_running_jobs(session: Session, job_ids: Sequence[str]) -> int:
    """Those of ``job_ids`` still running → queued, their claims dropped (their pool broke)."""
    moved = 0
    for chunk in chunks(list(job_ids)):
        statement = (
            update(RenderJob)
            .where(RenderJob.id.in_(chunk), RenderJob.state == JobState.RUNNING.value)
            .values(state=JobState.QUEUED.value, claimed_by=None, queued_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        moved += session.execute(statement).rowcount  # type: ignore[attr-defined]
    return moved


def queued_jobs_of_run(session: Session, run_id: str) -> list[tuple[str, str]]:
    """(job id, batch key) of the run's queued jobs, in id order."""
    rows = session.execute(
        select(RenderJob.id, RenderJob.batch_key)
        .where(RenderJob.run_id == run_id, RenderJob.state == JobState.QUEUED.value)
        .order_by(RenderJob.id)
    )
    return [(job_id, key) for job_id, key in rows]
