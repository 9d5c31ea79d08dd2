"""Every SQL statement of qualification: subjects, evidence, runs, the event log, the beat claim.

The stored state of a subject is a cache of what ``farm.qualification.recorded`` derives from
these records; ``record_state`` stores a derived state, with one ``QualificationEvent`` when it
changed. This module knows no state names and derives nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session

from farm.evidence.qualification import Qualification
from farm.store.models import (
    FleetRun,
    QualificationEvent,
    QualificationEvidence,
    QualificationRun,
    QualificationSubject,
)
from farm.store.paging import Ordering, SortKey, keyset_page


def ensure_subject(
    session: Session, cluster: str, selection: str, now: datetime, *, initial_state: str
) -> QualificationSubject:
    """The subject row, created in ``initial_state`` the first time it is seen."""
    subject = session.scalar(
        select(QualificationSubject).where(
            QualificationSubject.cluster_profile == cluster, QualificationSubject.selection == selection
        )
    )
    if subject is None:
        subject = QualificationSubject(
            cluster_profile=cluster, selection=selection, state=initial_state, reason="", since=now
        )
        session.add(subject)
        session.flush()
    return subject


def start_run(
    session: Session, subject: QualificationSubject, digest: str, now: datetime
) -> QualificationRun:
    run = QualificationRun(subject_id=subject.id, subject_digest=digest, state="running", created_at=now)
    session.add(run)
    session.flush()
    return run


def attach_fleet_run(session: Session, run_id: int, fleet_run_id: str) -> None:
    """Record the fleet run that renders the subject of qualification run ``run_id``."""
    session.execute(
        update(QualificationRun).where(QualificationRun.id == run_id).values(fleet_run_id=fleet_run_id)
    )


def abandoned_runs(session: Session, before: datetime) -> list[QualificationRun]:
    """Runs still ``running`` whose process is gone: started before ``before`` and either never
    given a fleet run, or given one that finished before ``before`` (a live qualification
    records its outcome moments after its fleet run finishes)."""
    return list(
        session.scalars(
            select(QualificationRun)
            .outerjoin(FleetRun, FleetRun.id == QualificationRun.fleet_run_id)
            .where(
                QualificationRun.state == "running",
                QualificationRun.created_at < before,
                or_(
                    QualificationRun.fleet_run_id.is_(None),
                    FleetRun.id.is_(None),
                    and_(FleetRun.finished_at.is_not(None), FleetRun.finished_at < before),
                ),
            )
            .order_by(QualificationRun.id)
        )
    )


def error_run(session: Session, run_id: int) -> bool:
    """``running`` → ``errored``, conditionally: False when the run finished meanwhile."""
    result = session.execute(
        update(QualificationRun)
        .where(QualificationRun.id == run_id, QualificationRun.state == "running")
        .values(state="errored")
    )
    return result.rowcount == 1


def subject_by_id(session: Session, subject_id: int) -> QualificationSubject | None:
    return session.get(QualificationSubject, subject_id)


def finish_run(session: Session, run_id: int, state: str) -> None:
    if state not in ("passed", "failed", "errored"):
        raise ValueError(f"qualification run state {state!r} is not passed, failed or errored")
    session.execute(update(QualificationRun).where(QualificationRun.id == run_id).values(state=state))


def record_evidence(
    session: Session,
    subject: QualificationSubject,
    qualification: Qualification,
    *,
    envelope_digest: str,
    signer_keyid: str,
    core_version: str,
    owned_paths_digest: str,
    attested_at: datetime,
) -> QualificationEvidence:
    """Add one evidence row (never updated); the envelope blob must already be stored."""
    row = QualificationEvidence(
        subject_id=subject.id,
        subject_digest=qualification.subject_digest,
        descriptor_identity=qualification.descriptor_identity,
        run_id=qualification.run_id,
        envelope_digest=envelope_digest,
        signer_keyid=signer_keyid,
        core_version=core_version,
        owned_paths_digest=owned_paths_digest,
        attested_at=attested_at,
    )
    session.add(row)
    session.flush()
    return row


def record_state(
    session: Session,
    subject: QualificationSubject,
    state: str,
    reason: str,
    evidence_id: int | None,
    *,
    cause: str,
    now: datetime,
    snapshot_digest: str | None = None,
    flush: bool = True,
) -> bool:
    """Store a derived state; append an event when state or reason changed (naming the snapshot it
    was derived against, when given). True if it changed. Without ``flush`` the caller flushes
    (one flush for many subjects)."""
    changed = (state, reason) != (subject.state, subject.reason)
    if changed:
        session.add(
            QualificationEvent(
                subject_id=subject.id,
                from_state=subject.state,
                to_state=state,
                reason=reason,
                cause=cause,
                at=now,
                snapshot_digest=snapshot_digest,
            )
        )
        subject.state, subject.reason, subject.since = state, reason, now
    subject.current_evidence_id = evidence_id
    if flush:
        session.flush()
    return changed


def events(session: Session, subject: QualificationSubject) -> list[QualificationEvent]:
    return list(
        session.scalars(
            select(QualificationEvent)
            .where(QualificationEvent.subject_id == subject.id)
            .order_by(QualificationEvent.id)
        )
    )


def claim_for_enqueue(session: Session, subject_id: int, now: datetime, lease: timedelta) -> bool:
    """Claim a subject for one enqueue: a conditional UPDATE, so of two beats only one wins."""
    result = session.execute(
        update(QualificationSubject)
        .where(
            QualificationSubject.id == subject_id,
            or_(QualificationSubject.claimed_until.is_(None), QualificationSubject.claimed_until < now),
        )
        .values(claimed_until=now + lease)
    )
    return result.rowcount == 1


SUBJECT_ORDERINGS: dict[str, Ordering] = {
    "subject": (
        SortKey("cluster_profile", QualificationSubject.cluster_profile),
        SortKey("selection", QualificationSubject.selection),
        SortKey("id", QualificationSubject.id),
    ),
    "state": (
        SortKey("state", QualificationSubject.state),
        SortKey("cluster_profile", QualificationSubject.cluster_profile),
        SortKey("selection", QualificationSubject.selection),
        SortKey("id", QualificationSubject.id),
    ),
    "-since": (
        SortKey("since", QualificationSubject.since, True),
        SortKey("id", QualificationSubject.id, True),
    ),
}


def subjects_page(session: Session, sort: str, after: list | None, limit: int) -> list[QualificationSubject]:
    """One page of subjects in ``sort`` order (``SUBJECT_ORDERINGS``), after the key ``after``."""
    return list(
        session.scalars(keyset_page(select(QualificationSubject), SUBJECT_ORDERINGS[sort], after, limit))
    )


def subjects(session: Session) -> list[QualificationSubject]:
    return list(
        session.scalars(
            select(QualificationSubject).order_by(
                QualificationSubject.cluster_profile, QualificationSubject.selection
            )
        )
    )


def _aware(moment: datetime) -> datetime:
    # SQLite gives back naive datetimes; every stored time is UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def all_evidence(session: Session) -> list[tuple[QualificationEvidence, QualificationSubject]]:
    """Every qualification evidence row with its subject, oldest first."""
    rows = session.execute(
        select(QualificationEvidence, QualificationSubject)
        .join(QualificationSubject, QualificationSubject.id == QualificationEvidence.subject_id)
        .order_by(QualificationEvidence.id)
    ).all()
    return [(evidence, subject) for evidence, subject in rows]


@dataclass(frozen=True)
class Timeline:
    """One subject's records, each oldest first: its qualification runs, evidence and transitions."""

    runs: list[QualificationRun]
    evidence: list[QualificationEvidence]
    events: list[QualificationEvent]


def evidence_of(session: Session, subject: QualificationSubject) -> list[QualificationEvidence]:
    """A subject's evidence rows, oldest attestation first."""
    statement = (
        select(QualificationEvidence)
        .where(QualificationEvidence.subject_id == subject.id)
        .order_by(QualificationEvidence.attested_at, QualificationEvidence.id)
    )
    return list(session.scalars(statement))


def evidence_by_subject(session: Session) -> dict[int, list[QualificationEvidence]]:
    """``evidence_of`` every subject, in one read: subject id → its rows, oldest attestation first."""
    statement = select(QualificationEvidence).order_by(
        QualificationEvidence.subject_id, QualificationEvidence.attested_at, QualificationEvidence.id
    )
    grouped: dict[int, list[QualificationEvidence]] = {}
    for row in session.scalars(statement):
        grouped.setdefault(row.subject_id, []).append(row)
    return grouped


def run_states_by_subject(session: Session) -> dict[int, list[tuple[str, str]]]:
    """(subject digest, state) of every subject's qualification runs, in one read: subject id →
    its runs', oldest first (what a state is derived from, ``runs_of`` without the rows)."""
    statement = select(QualificationRun.subject_id, QualificationRun.subject_digest, QualificationRun.state)
    grouped: dict[int, list[tuple[str, str]]] = {}
    for subject_id, digest, state in session.execute(
        statement.order_by(QualificationRun.subject_id, QualificationRun.id)
    ):
        grouped.setdefault(subject_id, []).append((digest, state))
    return grouped


def runs_of(session: Session, subject: QualificationSubject) -> list[QualificationRun]:
    """A subject's qualification runs, oldest first."""
    statement = (
        select(QualificationRun)
        .where(QualificationRun.subject_id == subject.id)
        .order_by(QualificationRun.id)
    )
    return list(session.scalars(statement))


def timeline(session: Session, subject: QualificationSubject) -> Timeline:
    return Timeline(runs_of(session, subject), evidence_of(session, subject), events(session, subject))


def started_since(session: Session, subject: QualificationSubject, since: datetime) -> bool:
    """Whether a qualification run of ``subject`` began at or after ``since``."""
    return (
        session.scalar(
            select(QualificationRun.id)
            .where(QualificationRun.subject_id == subject.id, QualificationRun.created_at >= since)
            .limit(1)
        )
        is not None
    )


def aware(moment: datetime) -> datetime:
    return _aware(moment)


def newest_snapshot(session: Session) -> str | None:
    """The snapshot of the newest run of any kind (the beat refreshes states against the newest)."""
    return session.scalar(select(FleetRun.snapshot_digest).order_by(FleetRun.created_at.desc()).limit(1))


def latest_qualified_snapshot(session: Session, subject: QualificationSubject) -> str | None:
    """The snapshot of the fleet run of ``subject``'s latest qualification run that has one."""
    return session.scalar(
        select(FleetRun.snapshot_digest)
        .join(QualificationRun, QualificationRun.fleet_run_id == FleetRun.id)
        .where(QualificationRun.subject_id == subject.id)
        .order_by(QualificationRun.id.desc())
        .limit(1)
    )


def state_snapshot(session: Session, subject: QualificationSubject) -> str | None:
    """The snapshot the subject's present state was derived against: the one its latest
    transition names (None when it has none, or was recorded before transitions named one)."""
    return session.scalar(
        select(QualificationEvent.snapshot_digest)
        .where(QualificationEvent.subject_id == subject.id)
        .order_by(QualificationEvent.id.desc())
        .limit(1)
    )
