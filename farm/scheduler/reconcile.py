"""The reconciler: jobs whose worker vanished are put back in the queue and sent again.

A job stuck in ``running`` past the timeout (its worker died without acking) or in ``queued``
past the timeout (its message was lost) is re-enqueued. Claims are conditional, so a job that
is in fact still running elsewhere, or gets two messages, is executed once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from sqlalchemy import or_, select, update

from farm.store import models
from farm.store.context import Storage
from farm.store.db import session_scope
from farm.store.models import JobState, utcnow

DEFAULT_TIMEOUT = timedelta(minutes=5)


def stale_jobs(storage: Storage, timeout: timedelta = DEFAULT_TIMEOUT) -> list[tuple[str, str]]:
    """Jobs to send again, as (job id, action key); running ones are moved back to queued."""
    cutoff = utcnow() - timeout
    with session_scope(storage.sessions) as session:
        stuck_running = list(
            session.execute(
                select(models.RenderJob.id, models.RenderJob.claimed_by).where(
                    models.RenderJob.state == JobState.RUNNING.value, models.RenderJob.started_at < cutoff
                )
            )
        )
        for job_id, claimed_by in stuck_running:
            session.execute(
                update(models.RenderJob)
                .where(
                    models.RenderJob.id == job_id,
                    models.RenderJob.state == JobState.RUNNING.value,
                    models.RenderJob.claimed_by == claimed_by,
                )
                .values(state=JobState.QUEUED.value, queued_at=utcnow(), claimed_by=None)
                .execution_options(synchronize_session=False)
            )
        rows = session.execute(
            select(models.RenderJob.id, models.RenderJob.action_key).where(
                models.RenderJob.state == JobState.QUEUED.value,
                or_(
                    models.RenderJob.queued_at < cutoff,
                    models.RenderJob.id.in_([j for j, _ in stuck_running]),
                ),
            )
        )
        jobs = [(job_id, key) for job_id, key in rows]
        if jobs:  # the next pass waits another full timeout before sending these again
            session.execute(
                update(models.RenderJob)
                .where(
                    models.RenderJob.id.in_([j for j, _ in jobs]),
                    models.RenderJob.state == JobState.QUEUED.value,
                )
                .values(queued_at=utcnow())
                .execution_options(synchronize_session=False)
            )
        return jobs


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
