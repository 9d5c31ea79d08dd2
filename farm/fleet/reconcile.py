"""The reconciler: jobs whose worker vanished are put back in the queue and sent again.

A job stuck in ``running`` past the timeout (its worker died without acking) or in ``queued``
past the timeout (its message was lost) is re-enqueued. Claims are conditional and a batch is
recorded in one transaction, so a job that is in fact still running elsewhere, or gets two
messages, is recorded once: no target lost, no output written twice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import timedelta

from farm.store.context import Storage
from farm.store.db import session_scope
from farm.store.models import utcnow
from farm.store.runs import core_versions_of_jobs, requeue_stale_jobs

DEFAULT_TIMEOUT = timedelta(minutes=5)


def stale_jobs(storage: Storage, timeout: timedelta = DEFAULT_TIMEOUT) -> dict[str, list[tuple[str, str]]]:
    """Jobs to send again, as (job id, batch key) by the core version their run was planned
    under; running ones are moved back to queued."""
    with session_scope(storage.sessions) as session:
        jobs = requeue_stale_jobs(session, utcnow() - timeout)
        versions = core_versions_of_jobs(session, [job_id for job_id, _ in jobs])
    by_version: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for job_id, batch_key in jobs:
        by_version[versions[job_id]].append((job_id, batch_key))
    return dict(by_version)


def reconcile(
    storage: Storage,
    enqueue: Callable[[list[tuple[str, str]], str], None],
    timeout: timedelta = DEFAULT_TIMEOUT,
) -> int:
    """Send the stale jobs again through ``enqueue(jobs, core_version)``, each to the queue of
    the core its run was planned under; returns how many were sent."""
    sent = 0
    for version, jobs in stale_jobs(storage, timeout).items():
        enqueue(jobs, version)
        sent += len(jobs)
    return sent
