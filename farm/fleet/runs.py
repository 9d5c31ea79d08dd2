"""The steps of one run, in the order the fleet-run owner (``farm.fleet.service``) takes them:
plan it (``begin``), hand its jobs to an executor (``execute``), wait for its targets
(``wait``). Nothing outside ``farm.fleet`` calls these: entry points call the service.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from farm.catalog import CatalogSnapshot, TargetRequest
from farm.fleet.interrupts import stop_if_requested
from farm.fleet.planner import PlannedRun, plan_run
from farm.fleet.progress import run_progress
from farm.logs import job_log_context
from farm.store.context import Storage
from farm.store.models import RunKind, Trigger

log = logging.getLogger(__name__)

Jobs = Sequence[tuple[str, str]]  # (job id, batch key) of each job to run


def begin(
    storage: Storage,
    snapshot: CatalogSnapshot,
    *,
    kind: RunKind,
    trigger: Trigger,
    source: str,
    target_requests: Sequence[TargetRequest] | None = None,
    before_work: Callable[[], None] | None = None,
    owner: str | None = None,
) -> PlannedRun:
    """Record a run of ``snapshot``: cached targets answered, the rest in queued jobs.
    ``before_work`` runs first when there is work (see ``plan_run``); ``owner`` is the process
    executing it, when its executor blocks (``farm.fleet.owners``)."""
    planned = plan_run(
        storage,
        snapshot,
        source=source,
        kind=kind,
        trigger=trigger,
        batch_size=storage.settings.batch_size,
        target_requests=target_requests,
        before_work=before_work,
        owner=owner,
    )
    with job_log_context(run_id=planned.run_id):
        log.info(
            "run planned: %d targets of %s, %d cached, %d jobs queued (%s run, trigger %s)",
            planned.total,
            snapshot.name,
            planned.cached,
            len(planned.queued),
            kind,
            trigger,
        )
    return planned


def execute(planned: PlannedRun, executor: Callable[[Jobs], None]) -> None:
    """Hand the run's queued jobs to ``executor`` (a local pool returns when they are done)."""
    if planned.queued:
        executor(planned.queued)


def wait(storage: Storage, run_id: str, poll: float = 0.25, timeout: float | None = None) -> None:
    """Block until every target of the run is done; TimeoutError past ``timeout`` seconds."""
    started = time.monotonic()
    while (summary := run_progress(storage, run_id)).done < summary.total:
        if timeout is not None and time.monotonic() - started >= timeout:
            raise TimeoutError(f"run {run_id}: {summary.total - summary.done} targets still queued")
        time.sleep(poll)
        stop_if_requested()
