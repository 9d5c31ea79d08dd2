"""Run completion, counted in SQL (never with Celery chords), and run summaries."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import func, select, update

from farm.store import models
from farm.store.context import Storage
from farm.store.db import session_scope
from farm.store.models import JobState, RunState, utcnow

FINAL = (JobState.SUCCEEDED.value, JobState.FAILED.value, JobState.CACHED.value)


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


def finalize_run_if_done(storage: Storage, run_id: str) -> bool:
    """Mark the run finished once no job is left open; safe to call from every worker."""
    with session_scope(storage.sessions) as session:
        counts = job_counts(session, run_id)
        if any(state not in FINAL for state in counts):
            return False
        final = RunState.COMPLETED_WITH_FAILURES if counts.get(JobState.FAILED.value) else RunState.COMPLETED
        session.execute(
            update(models.FleetRun)
            .where(models.FleetRun.id == run_id, models.FleetRun.state == RunState.RUNNING.value)
            .values(state=final.value, finished_at=utcnow())
            .execution_options(synchronize_session=False)
        )
    return True


def finalize_run(storage: Storage, run_id: str) -> None:
    finalize_run_if_done(storage, run_id)


def run_summary(storage: Storage, run_id: str) -> RunSummary:
    with session_scope(storage.sessions) as session:
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
