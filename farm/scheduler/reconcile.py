"""The reconciler: jobs whose worker vanished are put back in the queue and sent again.

A job stuck in ``running`` past the timeout (its worker died without acking) or in ``queued``
past the timeout (its message was lost) is re-enqueued. Claims are conditional and a batch is
recorded in one transaction, so a job that is in fact still running elsewhere, or gets two
messages, is recorded once: no target lost, no output written twice.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from farm.store.context import Storage
from farm.store.db import session_scope
from farm.store.models import utcnow
from farm.store.runs import requeue_stale_jobs

DEFAULT_TIMEOUT = timedelta(minutes=5)


def stale_jobs(storage: Storage, timeout: timedelta = DEFAULT_TIMEOUT) -> list[tuple[str, str]]:
    """Jobs to send again, as (job id, batch key); running ones are moved back to queued."""
    with session_scope(storage.sessions) as session:
        return requeue_stale_jobs(session, utcnow() - timeout)


def reconcile(
    storage: Storage,
    enqueue: Callable[[list[tuple[str, str]]], None],
    timeout: timedelta = DEFAULT_TIMEOUT,
) -> int:
    """Send the stale jobs again through ``enqueue``; returns how many were sent."""
    jobs = stale_jobs(storage, timeout)
    if jobs:
        enqueue(jobs)
    return len(jobs)
