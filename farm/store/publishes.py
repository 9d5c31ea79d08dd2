"""Rows of publishes (``farm publish``): recorded pending, claimed by one process with a
conditional UPDATE, finished as done (with its signed record, a blob written first) or failed."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from farm.store.models import FleetRun, Publish, PublishState, RunState, utcnow


def record_publish(session: Session, *, run_id: str, kind: str, destination: str, options: str) -> int:
    """A new pending publish of ``run_id``; its id."""
    now = utcnow()
    row = Publish(
        run_id=run_id,
        kind=kind,
        destination=destination,
        options=options,
        state=PublishState.PENDING.value,
        attempts=0,
        created_at=now,
        updated_at=now,
    )
    session.add(row)
    session.flush()
    return row.id


def claim_publish(session: Session, publish_id: int, *, now: datetime, lease: timedelta) -> bool:
    """Claim a pending or failed publish for one attempt; of two processes only one wins."""
    result = session.execute(
        update(Publish)
        .where(
            Publish.id == publish_id,
            Publish.state.in_((PublishState.PENDING.value, PublishState.FAILED.value)),
            or_(Publish.claimed_until.is_(None), Publish.claimed_until < now),
        )
        .values(claimed_until=now + lease, attempts=Publish.attempts + 1, updated_at=now)
    )
    return result.rowcount == 1


def finish_publish(session: Session, publish_id: int, *, reference: str, envelope_digest: str) -> None:
    session.execute(
        update(Publish)
        .where(Publish.id == publish_id)
        .values(
            state=PublishState.DONE.value,
            reference=reference,
            envelope_digest=envelope_digest,
            last_error=None,
            claimed_until=None,
            next_attempt_at=None,
            updated_at=utcnow(),
        )
    )


def fail_publish(session: Session, publish_id: int, *, error: str, next_attempt_at: datetime | None) -> None:
    session.execute(
        update(Publish)
        .where(Publish.id == publish_id)
        .values(
            state=PublishState.FAILED.value,
            last_error=error,
            claimed_until=None,
            next_attempt_at=next_attempt_at,
            updated_at=utcnow(),
        )
    )


def publish_by_id(session: Session, publish_id: int) -> Publish | None:
    return session.get(Publish, publish_id)


def publishes_of_run(session: Session, run_id: str) -> list[Publish]:
    return list(session.scalars(select(Publish).where(Publish.run_id == run_id).order_by(Publish.id)))


def unfinished_publishes(session: Session, *, due_at: datetime | None = None) -> list[Publish]:
    """Publishes still pending or failed whose run is complete (a publish of a run still
    rendering waits for it), oldest first: what ``farm publish --retry`` resumes. With
    ``due_at``, only those whose next attempt is due by then (the beat's retry)."""
    statement = (
        select(Publish)
        .join(FleetRun, FleetRun.id == Publish.run_id)
        .where(
            Publish.state.in_((PublishState.PENDING.value, PublishState.FAILED.value)),
            FleetRun.state.in_((RunState.COMPLETED.value, RunState.COMPLETED_WITH_FAILURES.value)),
        )
    )
    if due_at is not None:
        statement = statement.where(
            or_(Publish.next_attempt_at.is_(None), Publish.next_attempt_at <= due_at),
            or_(Publish.claimed_until.is_(None), Publish.claimed_until < due_at),
        )
    return list(session.scalars(statement.order_by(Publish.id)))


def all_publishes(session: Session) -> list[Publish]:
    return list(session.scalars(select(Publish).order_by(Publish.id)))
