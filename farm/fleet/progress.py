"""Run completion, counted in SQL (never with Celery chords), and run summaries."""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass, field

from farm.core.errors import bound_message
from farm.logs import job_log_context
from farm.store import models
from farm.store.context import Storage
from farm.store.db import (
    Connection,
    Session,
    connection_scope,
    read_connection,
    read_scope,
    session_scope,
    writers_serialized,
)
from farm.store.models import JobState
from farm.store.runs import (
    CACHED_FAILURE,
    TargetFilter,
    fail_open_jobs_of_run,
    finalize_run,
    run_by_id,
    run_has_open_jobs,
    run_jobs_taken,
    target_counts,
    target_counts_of_runs,
    targets_of_run,
)

COUNTED_STATES = (
    JobState.QUEUED.value,
    JobState.SUCCEEDED.value,
    JobState.FAILED.value,
    JobState.CACHED.value,
    CACHED_FAILURE,
)
DONE_STATES = (JobState.SUCCEEDED.value, JobState.FAILED.value, JobState.CACHED.value, CACHED_FAILURE)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    state: str
    snapshot_digest: str
    counts: dict[str, int]  # targets by state; cached failures apart under "cached_failure"
    failures: dict[str, list[dict[str, str]]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def done(self) -> int:
        return sum(self.counts.get(state, 0) for state in DONE_STATES)

    @property
    def failed(self) -> int:
        return self.counts.get(JobState.FAILED.value, 0) + self.counts.get(CACHED_FAILURE, 0)

    def as_json(self) -> dict:
        return {
            "run_id": self.run_id,
            "state": self.state,
            "snapshot": self.snapshot_digest,
            "counts": {state: self.counts.get(state, 0) for state in COUNTED_STATES},
            "failures": self.failures,
        }


def finalize_run_if_done(storage: Storage, run_id: str) -> bool:
    """Mark the run finished once no job is left open; safe to call from every worker.

    Called after the caller's job change has committed, so of two workers finishing the last two
    jobs at once at least one sees both final. The check is an indexed existence probe in a
    read-only transaction; only when nothing is open does a write follow, and that UPDATE repeats
    the condition, so it is idempotent and never finishes a run with an open job.
    """
    with read_connection(storage.sessions) as connection:
        if run_has_open_jobs(connection, run_id):
            return False
    with connection_scope(storage.sessions) as connection:
        finished = finalize_run(connection, run_id)
    if finished:
        run_finished(storage, run_id)
    return True


def finalize_run_in_transaction(session: Session, run_id: str) -> bool | None:
    """``finalize_run_if_done`` inside the write transaction that just made a job of ``run_id``
    final, where that is safe: on SQLite, whose write transactions run one at a time, it reads
    every job change committed before it and no other can commit until it does, so of two workers
    finishing the last two jobs the second to commit sees both final. Saves a transaction per
    job. None on PostgreSQL, where two such transactions would each see the other's job open:
    the caller calls ``finalize_run_if_done`` after its commit (``after_job_recorded``)."""
    if not writers_serialized(session):
        return None
    return finalize_run(session, run_id)


def after_job_recorded(storage: Storage, run_id: str, finished: bool | None, connection: Connection) -> None:
    """After the commit of a job's results: what ``finalize_run_in_transaction`` left to do, on
    the job's ``connection`` (outside any transaction)."""
    if finished is None:  # PostgreSQL: the probe of finalize_run_if_done, in a transaction of its own
        with connection.begin():
            if run_has_open_jobs(connection, run_id):
                return
        with connection.begin():
            finished = finalize_run(connection, run_id)
    if finished:
        run_finished(storage, run_id)


def run_finished(storage: Storage, run_id: str) -> None:
    """What follows a run's completion, said only by the process whose UPDATE finished the run."""
    with job_log_context(run_id=run_id):
        log.info("run finished")
    _after_finish(storage, run_id)


def _after_finish(storage: Storage, run_id: str) -> None:
    """The run's after-run steps that wait for its completion (a Celery run's publish), by the
    owner of fleet runs; a failure there is logged and recorded on the publish, never the job's."""
    if not storage.settings.publish_to:
        return
    from farm.fleet.service import publish_finished_run

    try:
        publish_finished_run(storage, run_id)
    except Exception:
        log.exception("run %s: publishing after the run failed; farm publish --retry resumes it", run_id)


EXECUTOR_FAILED = "run.executor_failed"


def fail_run(storage: Storage, run_id: str, message: str) -> None:
    """The executor of a run failed: its open jobs and targets are failed with ``message`` (code
    ``run.executor_failed``) and the run finishes as completed with failures."""
    with session_scope(storage.sessions) as session:
        fail_open_jobs_of_run(session, run_id, code=EXECUTOR_FAILED, message=bound_message(message))
    finalize_run_if_done(storage, run_id)


def has_open_jobs(storage: Storage, run_id: str) -> bool:
    """Whether a job of the run is still queued or running (one indexed probe)."""
    with read_scope(storage.sessions) as session:
        return run_has_open_jobs(session, run_id)


def jobs_taken(storage: Storage, run_id: str) -> int:
    """How many jobs of the run a worker has claimed at least once."""
    with read_scope(storage.sessions) as session:
        return run_jobs_taken(session, run_id)


def run_summary(storage: Storage, run_id: str) -> RunSummary:
    with read_scope(storage.sessions) as session:
        run = run_by_id(session, run_id)
        if run is None:
            raise LookupError(f"run {run_id} does not exist")
        counts = target_counts(session, run_id)
        failures: dict[str, list[dict[str, str]]] = {}
        for row in targets_of_run(session, run_id, TargetFilter(failed_only=True)):
            failures.setdefault(row.error_code or "unknown", []).append(
                {
                    "application": row.application,
                    "cluster": row.cluster_profile,
                    "message": row.error_message or "",
                    "cached": "true" if row.state == JobState.CACHED.value else "false",
                }
            )
        return RunSummary(run.id, _shown_state(run), run.snapshot_digest, counts, failures)


def _shown_state(run: models.FleetRun) -> str:
    from farm.fleet.recovery import shown_state  # recovery imports this module

    return shown_state(run)


def run_progress(storage: Storage, run_id: str) -> RunSummary:
    """A run's state and counts by state, without the failure list (what a progress bar needs)."""
    with read_scope(storage.sessions) as session:
        run = run_by_id(session, run_id)
        if run is None:
            raise LookupError(f"run {run_id} does not exist")
    return runs_progress(storage, [run])[0]


FINISHED_RUN_STATES = (models.RunState.COMPLETED.value, models.RunState.COMPLETED_WITH_FAILURES.value)
_finished_counts: OrderedDict[str, dict[str, int]] = OrderedDict()  # run id → its final counts
FINISHED_COUNTS_KEPT = 10_000


def runs_progress(storage: Storage, runs: list[models.FleetRun]) -> list[RunSummary]:
    """``run_progress`` of many runs: the unfinished ones counted in one grouped statement.

    A run read as finished has no open job left, and a target only ever leaves ``queued``, so
    its counts are final: they are kept in this process (run ids are unique) instead of counting
    2,000 rows per run on every runs page.
    """
    missing = [run.id for run in runs if run.id not in _finished_counts]
    with read_scope(storage.sessions) as session:
        counts = target_counts_of_runs(session, missing) if missing else {}
    for run in runs:
        if run.state in FINISHED_RUN_STATES and run.id in counts:
            _finished_counts[run.id] = counts[run.id]
            while len(_finished_counts) > FINISHED_COUNTS_KEPT:
                _finished_counts.popitem(last=False)
    known = {**{run.id: _finished_counts.get(run.id, {}) for run in runs}, **counts}
    return [RunSummary(run.id, _shown_state(run), run.snapshot_digest, known[run.id]) for run in runs]
