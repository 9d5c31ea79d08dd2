"""Queries and conditional updates shared by the scheduler, the workers and the commands.

Everything here runs unchanged on SQLite and PostgreSQL. State changes of a job are
conditional UPDATEs (``... WHERE state IN (...)``) whose row count says whether this caller
won; two workers racing for one job never both get it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from farm.evidence.keys import TrustedSigners
from farm.store.models import ActionCacheEntry, Base, JobState, RenderJob, Signer, utcnow

CLAIMABLE_STATES = (JobState.QUEUED,)
FINAL_STATES = (JobState.SUCCEEDED, JobState.FAILED, JobState.CACHED)


def insert_ignoring_conflict(session: Session, model: type[Base], values: dict[str, Any]) -> bool:
    """INSERT a row unless one with the same primary or unique key exists; True if inserted."""
    dialect = session.get_bind().dialect.name
    table = model.__table__
    statement: Insert
    if dialect == "postgresql":
        statement = postgresql.insert(table).values(**values).on_conflict_do_nothing()
    elif dialect == "sqlite":
        statement = sqlite.insert(table).values(**values).on_conflict_do_nothing()
    else:
        raise RuntimeError(f"unsupported database dialect {dialect!r}")
    # RETURNING says whether a row went in; rowcount is not reliable for ON CONFLICT on every driver.
    inserted = session.execute(statement.returning(*table.primary_key.columns)).first()
    return inserted is not None


def _state_values(states: Iterable[JobState | str]) -> list[str]:
    return [JobState(state).value for state in states]


def queue_jobs(session: Session, job_ids: Sequence[str], *, now: datetime | None = None) -> int:
    """planned → queued for the given jobs; returns how many moved."""
    statement = (
        update(RenderJob)
        .where(RenderJob.id.in_(job_ids), RenderJob.state == JobState.PLANNED.value)
        .values(state=JobState.QUEUED.value, queued_at=now or utcnow())
        .execution_options(synchronize_session=False)
    )
    return session.execute(statement).rowcount  # type: ignore[attr-defined]


def claim_job(
    session: Session,
    job_id: str,
    *,
    worker: str,
    from_states: Iterable[JobState | str] = CLAIMABLE_STATES,
    now: datetime | None = None,
) -> bool:
    """Move a job to ``running`` for ``worker`` if it is in ``from_states``; True if this call won.

    Counts the attempt. The caller commits; a second claimer blocks on the row (PostgreSQL) or
    the write lock (SQLite) and then finds the state changed, so it gets False.
    """
    statement = (
        update(RenderJob)
        .where(RenderJob.id == job_id, RenderJob.state.in_(_state_values(from_states)))
        .values(
            state=JobState.RUNNING.value,
            claimed_by=worker,
            attempts=RenderJob.attempts + 1,
            started_at=now or utcnow(),
            finished_at=None,
            error_code=None,
            error_message=None,
        )
        .execution_options(synchronize_session=False)
    )
    return session.execute(statement).rowcount == 1  # type: ignore[attr-defined]


def finish_job(
    session: Session,
    job_id: str,
    *,
    worker: str,
    state: JobState,
    output_digest: str | None = None,
    error_code: str | None = None,
    error_message: str | None = None,
    now: datetime | None = None,
) -> bool:
    """running → a final state, only if ``worker`` still holds the claim; True if it did."""
    if state not in FINAL_STATES:
        raise ValueError(f"state: {state!r} is not a final job state")
    if state is JobState.FAILED and not error_code:
        raise ValueError("error_code: a failed job needs an error code")
    statement = (
        update(RenderJob)
        .where(
            RenderJob.id == job_id,
            RenderJob.state == JobState.RUNNING.value,
            RenderJob.claimed_by == worker,
        )
        .values(
            state=state.value,
            output_digest=output_digest,
            error_code=error_code,
            error_message=error_message,
            finished_at=now or utcnow(),
        )
        .execution_options(synchronize_session=False)
    )
    return session.execute(statement).rowcount == 1  # type: ignore[attr-defined]


def cached_output(session: Session, action_key: str) -> ActionCacheEntry | None:
    """The action-cache entry for ``action_key``: one primary-key look-up."""
    return session.get(ActionCacheEntry, action_key)


def ensure_signer(session: Session, keyid: str, public_key_pem: str) -> None:
    """Record a signer's public key the first time it is seen (trust is not decided here)."""
    insert_ignoring_conflict(
        session,
        Signer,
        {"keyid": keyid, "public_key_pem": public_key_pem, "trusted": False, "first_seen_at": utcnow()},
    )


def sync_signer_trust(session: Session, trusted: TrustedSigners) -> None:
    """Make ``signers.trusted`` mirror the trusted-signers list (the list is the source of truth)."""
    keyids = list(trusted)
    session.execute(
        update(Signer)
        .where(Signer.keyid.in_(keyids))
        .values(trusted=True)
        .execution_options(synchronize_session=False)
    )
    session.execute(
        update(Signer)
        .where(Signer.keyid.not_in(keyids), Signer.trusted.is_(True))
        .values(trusted=False)
        .execution_options(synchronize_session=False)
    )


def jobs_of_run(session: Session, run_id: str) -> list[RenderJob]:
    return list(session.scalars(select(RenderJob).where(RenderJob.run_id == run_id).order_by(RenderJob.id)))


def release_job(session: Session, job_id: str, *, worker: str) -> bool:
    """running → queued, only if ``worker`` holds the claim (an infrastructure error, to retry)."""
    statement = (
        update(RenderJob)
        .where(
            RenderJob.id == job_id, RenderJob.state == JobState.RUNNING.value, RenderJob.claimed_by == worker
        )
        .values(state=JobState.QUEUED.value, claimed_by=None, queued_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return session.execute(statement).rowcount == 1  # type: ignore[attr-defined]
