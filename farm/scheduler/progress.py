"""Run completion, counted in SQL (never with Celery chords), and run summaries."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import Exists, bindparam, case, exists, func, select, update
from sqlalchemy.orm import Session

from farm.store import models
from farm.store.context import Storage
from farm.store.db import read_scope, session_scope
from farm.store.models import JobState, RunState, utcnow
from farm.store.repository import one_of

FINAL = (JobState.SUCCEEDED.value, JobState.FAILED.value, JobState.CACHED.value)
OPEN = tuple(state.value for state in JobState if state.value not in FINAL)


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    state: str
    snapshot_digest: str
    counts: dict[str, int]
    failures: dict[str, list[dict[str, str]]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def done(self) -> int:
        return sum(self.counts.get(state, 0) for state in FINAL)

    def as_json(self) -> dict:
        return {
            "run_id": self.run_id,
            "state": self.state,
            "snapshot": self.snapshot_digest,
            "counts": {state.value: self.counts.get(state.value, 0) for state in JobState},
            "failures": self.failures,
        }


def job_counts(session, run_id: str) -> dict[str, int]:
    rows = session.execute(
        select(models.RenderJob.state, func.count())
        .where(models.RenderJob.run_id == run_id)
        .group_by(models.RenderJob.state)
    )
    return dict(Counter({state: count for state, count in rows}))


def _jobs_in(states: tuple[str, ...]) -> Exists:
    """EXISTS (a job of run ``:run_id`` in ``states``): a probe of ix_render_jobs_run_id_state."""
    return exists().where(
        models.RenderJob.run_id == bindparam("run_id"), one_of(models.RenderJob.state, states)
    )


# Built once; the run id is bound at execution, so the compiled statements are cached as well.
_ANY_OPEN = select(_jobs_in(OPEN))
_FINALIZE = (
    update(models.FleetRun.__table__)
    .where(
        models.FleetRun.id == bindparam("run_id"),
        models.FleetRun.state == RunState.RUNNING.value,
        ~_jobs_in(OPEN),
    )
    .values(
        state=case(
            (_jobs_in((JobState.FAILED.value,)), RunState.COMPLETED_WITH_FAILURES.value),
            else_=RunState.COMPLETED.value,
        ),
        finished_at=bindparam("now"),
    )
)


def run_has_open_jobs(session: Session, run_id: str) -> bool:
    return bool(session.scalar(_ANY_OPEN, {"run_id": run_id}))


def finalize_run_if_done(storage: Storage, run_id: str) -> bool:
    """Mark the run finished once no job is left open; safe to call from every worker.

    Called after the caller's job change has committed, so of two workers finishing the last two
    jobs at once at least one sees both final (a check inside the finishing transaction could miss
    the other's uncommitted change on PostgreSQL). The check is an indexed existence probe in a
    read-only transaction; only when nothing is open does a write follow, and that UPDATE repeats
    the condition, so it is idempotent and never finishes a run with an open job.
    """
    with read_scope(storage.sessions) as session:
        if run_has_open_jobs(session, run_id):
            return False
    with session_scope(storage.sessions) as session:
        session.execute(_FINALIZE, {"run_id": run_id, "now": utcnow()})
    return True


def run_summary(storage: Storage, run_id: str) -> RunSummary:
    with read_scope(storage.sessions) as session:
        run = session.get(models.FleetRun, run_id)
        if run is None:
            raise LookupError(f"run {run_id} does not exist")
        counts = job_counts(session, run_id)
        failures: dict[str, list[dict[str, str]]] = {}
        failed = session.execute(
            select(
                models.RenderJob.error_code,
                models.RenderJob.application,
                models.RenderJob.cluster_profile,
                models.RenderJob.error_message,
            )
            .where(models.RenderJob.run_id == run_id, models.RenderJob.state == JobState.FAILED.value)
            .order_by(models.RenderJob.application, models.RenderJob.cluster_profile)
        )
        for code, app, cluster, message in failed:
            failures.setdefault(code or "unknown", []).append(
                {"application": app, "cluster": cluster, "message": message or ""}
            )
        return RunSummary(run.id, run.state, run.snapshot_digest, counts, failures)
