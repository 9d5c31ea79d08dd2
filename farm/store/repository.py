"""Queries and conditional updates shared by the scheduler, the workers and the commands.

Everything here runs unchanged on SQLite and PostgreSQL. State changes of a job are
conditional UPDATEs (``... WHERE state IN (...)``) whose row count says whether this caller
won; two workers racing for one job never both get it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import ColumnElement, Insert, Row, Table, Update, bindparam, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from farm.evidence.keys import TrustedSigners
from farm.store.models import (
    ActionCacheEntry,
    Base,
    CatalogSnapshot,
    FleetRun,
    JobState,
    RenderJob,
    Signer,
    utcnow,
)

CLAIMABLE_STATES = (JobState.QUEUED,)
FINAL_STATES = (JobState.SUCCEEDED, JobState.FAILED, JobState.CACHED)


def insert_ignoring_conflict(session: Session, model: type[Base], values: dict[str, Any]) -> bool:
    """INSERT a row unless one with the same primary or unique key exists; True if inserted."""
    return insert_ignoring_conflict_returning(session, model, values) is not None


def insert_ignoring_conflict_returning(
    session: Session, model: type[Base], values: dict[str, Any], *returning: str
) -> Row[Any] | None:
    """INSERT a row unless one with the same primary or unique key exists.

    Returns the inserted row's ``returning`` columns (default: its primary key), or None when a
    row with that key was already there (then nothing is written).
    """
    statement = _insert_ignoring_statement(session.get_bind().dialect.name, model.__table__, returning)
    # RETURNING says whether a row went in; rowcount is not reliable for ON CONFLICT on every driver.
    return session.execute(statement, values).first()


@lru_cache(maxsize=64)
def _insert_ignoring_statement(dialect: str, table: Table, returning: tuple[str, ...]) -> Insert:
    """Built once per table: the values are bound at execution, so the compiled form is cached too."""
    statement: Insert
    if dialect == "postgresql":
        statement = postgresql.insert(table).on_conflict_do_nothing()
    elif dialect == "sqlite":
        statement = sqlite.insert(table).on_conflict_do_nothing()
    else:
        raise RuntimeError(f"unsupported database dialect {dialect!r}")
    columns = [table.c[name] for name in returning] if returning else list(table.primary_key.columns)
    return statement.returning(*columns)


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


@dataclass(frozen=True)
class ClaimedJob:
    """What a worker needs of the job it just claimed, read by the claiming statement itself."""

    id: str
    run_id: str
    application: str
    cluster_profile: str
    selection: str
    action_key: str
    snapshot_digest: str
    manifest_digest: str | None  # the snapshot's manifest blob (None if the snapshot row lacks one)
    cached_output_digest: str | None  # the action cache's output for the job's key, when claimed


def one_of(column: ColumnElement[Any], values: Iterable[str]) -> ColumnElement[bool]:
    """``column = v1 OR column = v2 …`` with plain bound values.

    Unlike ``in_`` it needs no "expanding" parameter, so the statement is compiled once and run
    without re-rendering its SQL on every call; both databases turn it into an index look-up.
    """
    return or_(*(column == value for value in values))


@lru_cache(maxsize=16)
def _claim_statement(from_states: tuple[str, ...]) -> Update:
    jobs = RenderJob.__table__
    return (
        update(jobs)
        .where(jobs.c.id == bindparam("job_id"), one_of(jobs.c.state, from_states))
        .values(
            state=JobState.RUNNING.value,
            claimed_by=bindparam("worker"),
            attempts=jobs.c.attempts + 1,
            started_at=bindparam("now"),
            finished_at=None,
            error_code=None,
            error_message=None,
        )
        # Plain columns only: SQLAlchemy renders RETURNING unqualified on SQLite, which would
        # make a correlated subquery here compare a column with itself.
        .returning(
            jobs.c.id,
            jobs.c.run_id,
            jobs.c.application,
            jobs.c.cluster_profile,
            jobs.c.selection,
            jobs.c.action_key,
        )
    )


# What a claimed job needs besides its own row, by primary keys: its run's snapshot, the
# snapshot's manifest blob, and the action cache's output for its key if there is one.
_CLAIMED_CONTEXT = (
    select(FleetRun.snapshot_digest, CatalogSnapshot.blob_digest, ActionCacheEntry.output_digest)
    .select_from(FleetRun)
    .join(CatalogSnapshot, CatalogSnapshot.digest == FleetRun.snapshot_digest)
    .outerjoin(ActionCacheEntry, ActionCacheEntry.action_key == bindparam("action_key"))
    .where(FleetRun.id == bindparam("run_id"))
)


def claim_job_returning(
    session: Session,
    job_id: str,
    *,
    worker: str,
    from_states: Iterable[JobState | str] = CLAIMABLE_STATES,
    now: datetime | None = None,
) -> ClaimedJob | None:
    """Move a job to ``running`` for ``worker`` if it is in ``from_states``; its data if this call won.

    The conditional UPDATE returns the job's columns; when it won, one primary-key join reads its
    run's snapshot, that snapshot's manifest blob and whether the job's action key is already in
    the action cache. Counts the attempt. The caller commits; a second claimer blocks on the row
    (PostgreSQL) or the write lock (SQLite) and then finds the state changed, so it gets None.
    """
    statement = _claim_statement(tuple(_state_values(from_states)))
    parameters = {"job_id": job_id, "worker": worker, "now": now or utcnow()}
    row = session.execute(statement, parameters).first()
    if row is None:
        return None
    job_id, run_id, application, cluster_profile, selection, key = row
    context = session.execute(_CLAIMED_CONTEXT, {"run_id": run_id, "action_key": key}).first()
    if context is None:  # pragma: no cover - the foreign keys guarantee the run and its snapshot
        raise RuntimeError(f"job {job_id}: run {run_id} or its catalog snapshot is missing")
    snapshot_digest, manifest_digest, cached_output_digest = context
    return ClaimedJob(
        job_id,
        run_id,
        application,
        cluster_profile,
        selection,
        key,
        snapshot_digest,
        manifest_digest,
        cached_output_digest,
    )


def claim_job(
    session: Session,
    job_id: str,
    *,
    worker: str,
    from_states: Iterable[JobState | str] = CLAIMABLE_STATES,
    now: datetime | None = None,
) -> bool:
    """Move a job to ``running`` for ``worker`` if it is in ``from_states``; True if this call won."""
    return claim_job_returning(session, job_id, worker=worker, from_states=from_states, now=now) is not None


_FINISH = (
    update(RenderJob.__table__)
    .where(
        RenderJob.__table__.c.id == bindparam("job_id"),
        RenderJob.__table__.c.state == JobState.RUNNING.value,
        RenderJob.__table__.c.claimed_by == bindparam("worker"),
    )
    .values(
        state=bindparam("state"),
        output_digest=bindparam("output_digest"),
        error_code=bindparam("error_code"),
        error_message=bindparam("error_message"),
        finished_at=bindparam("now"),
    )
)


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
    parameters = {
        "job_id": job_id,
        "worker": worker,
        "state": state.value,
        "output_digest": output_digest,
        "error_code": error_code,
        "error_message": error_message,
        "now": now or utcnow(),
    }
    return session.execute(_FINISH, parameters).rowcount == 1  # type: ignore[attr-defined]


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
