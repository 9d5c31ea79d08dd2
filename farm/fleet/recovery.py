"""Runs whose owner died, and pools whose worker died, on the embedded default.

A run executed by a blocking executor records its owner (``farm.fleet.owners``). When that
process is gone (``kill -9``, a crash, a reboot) and the run is still ``running``:

- every read shows it ``interrupted`` (``shown_state``: computed from the owner, never written);
- the next ``farm run`` on the home takes it over before planning its own run (one conditional
  UPDATE of its owner, so of two runs finding it one wins), puts its running jobs back in the
  queue, executes every queued job with its own executor and finishes it. Its own run then
  finds those targets in the cache: every target is rendered once.

A pool worker that dies (``BrokenProcessPool``) releases its claims here: the pool's jobs still
running go back to the queue and run on a new pool; when the new pool breaks too, they fail with
``job.worker_died`` and the run completes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from farm.fleet.owners import owner_is_gone, process_owner, released
from farm.fleet.progress import finalize_run_if_done
from farm.settings import FarmSettings
from farm.store.context import Storage, open_storage
from farm.store.db import read_scope, session_scope
from farm.store.models import FleetRun, RunState
from farm.store.recovery import (
    owned_running_runs,
    queued_jobs_of_run,
    requeue_running_jobs,
    requeue_running_jobs_of_run,
    take_over_run,
)

log = logging.getLogger(__name__)

INTERRUPTED = "interrupted"  # shown, never stored: a running run whose owner is gone
WORKER_DIED = "job.worker_died"


def shown_state(run: FleetRun) -> str:
    """The state to show for ``run``: ``interrupted`` when it is running and its owner is gone."""
    if run.state == RunState.RUNNING.value and run.owner and owner_is_gone(run.owner):
        return INTERRUPTED
    return run.state


def interrupted_runs(storage: Storage) -> list[tuple[str, str]]:
    """(run id, owner) of every running run whose owner is gone."""
    with read_scope(storage.sessions) as session:
        owned = owned_running_runs(session)
    return [(run_id, owner) for run_id, owner in owned if owner_is_gone(owner)]


def finish_interrupted_runs(
    storage: Storage, executor: Callable[[Sequence[tuple[str, str]]], None], *, blocking: bool
) -> list[str]:
    """Take over every interrupted run, execute its remaining jobs with ``executor`` and finish
    it; returns their ids. A blocking executor's process becomes the owner while it executes them;
    a sending one (Celery) leaves them unowned, to its reconciler."""
    finished = []
    for run_id, owner in interrupted_runs(storage):
        with session_scope(storage.sessions) as session:
            if not take_over_run(
                session, run_id, owner=owner, new_owner=process_owner() if blocking else None
            ):
                continue  # another process took it over first
            requeued = requeue_running_jobs_of_run(session, run_id)
            jobs = queued_jobs_of_run(session, run_id)
        log.warning(
            "run %s was interrupted (its owner %s is gone): %d jobs to finish, %d of them were running",
            run_id,
            owner,
            len(jobs),
            requeued,
        )
        if jobs:
            executor(jobs)
        finalize_run_if_done(storage, run_id)
        finished.append(run_id)
    return finished


def release_runs_of_this_process(storage: Storage) -> list[str]:
    """Let go of every run this process owns that is still running, when it no longer executes
    any but lives on (the farm daemon after an interrupted command): they read ``interrupted``
    and the next ``farm run`` finishes them. Their ids."""
    owner = process_owner()
    let_go = []
    with session_scope(storage.sessions) as session:
        for run_id, owned_by in owned_running_runs(session):
            if owned_by == owner and take_over_run(session, run_id, owner=owner, new_owner=released(owner)):
                let_go.append(run_id)
    return let_go


def release_broken_pool(settings: FarmSettings, jobs: Sequence[tuple[str, str]]) -> int:
    """The jobs a broken pool's workers held (those of ``jobs`` still running) back to the queue."""
    storage = open_storage(settings)
    try:
        with session_scope(storage.sessions) as session:
            return requeue_running_jobs(session, [job_id for job_id, _ in jobs])
    finally:
        storage.close()


def fail_broken_pool(settings: FarmSettings, jobs: Sequence[tuple[str, str]], reason: str) -> None:
    """Every open job of ``jobs`` failed with ``job.worker_died`` (its pool broke again), each
    run finished once its last job is."""
    from farm.fleet.jobs import fail_job  # the signing stack: loaded only when a pool broke twice

    storage = open_storage(settings)
    try:
        for job_id, _ in jobs:
            fail_job(storage, job_id, WORKER_DIED, f"a worker of the local pool died: {reason}")
    finally:
        storage.close()
