"""A subject's state derived from its stored records: the one place that joins the records the
store reads (``farm.store.qualification``) with the pure rules (``farm.qualification.states``).

The stored state is a cache: ``refresh_state`` derives it and stores it (with an event when it
changed); ``recompute`` derives it without touching anything, so ``farm verify`` (and a test)
can check that stored == recomputed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from farm.evidence.qualification import Qualification
from farm.qualification.states import UNQUALIFIED, Derived, EvidenceRecord, RunRecord, Today, derive_state
from farm.store import qualification as records
from farm.store.db import Session
from farm.store.models import QualificationEvidence, QualificationSubject


def ensure_subject(session: Session, cluster: str, selection: str, now: datetime) -> QualificationSubject:
    """The subject row, created ``unqualified`` the first time it is seen."""
    return records.ensure_subject(session, cluster, selection, now, initial_state=UNQUALIFIED)


def recompute(
    session: Session,
    subject: QualificationSubject,
    today: Today,
    trusted_keyids: frozenset[str],
    now: datetime,
    max_age: timedelta,
) -> tuple[Derived, int | None]:
    """The state derived from the records, and the id of the current evidence row."""
    runs = [(run.subject_digest, run.state) for run in records.runs_of(session, subject)]
    return _derive(subject, records.evidence_of(session, subject), runs, today, trusted_keyids, now, max_age)


def _derive(
    subject: QualificationSubject,
    rows: list[QualificationEvidence],
    runs: list[tuple[str, str]],
    today: Today,
    trusted_keyids: frozenset[str],
    now: datetime,
    max_age: timedelta,
) -> tuple[Derived, int | None]:
    """The state derived from a subject's evidence rows and its runs' (digest, state)."""
    derived = derive_state(
        subject.selection,
        today,
        [_evidence_record(subject, row) for row in rows],
        [RunRecord(digest, state) for digest, state in runs],
        trusted_keyids,
        now,
        max_age,
    )
    evidence_id = rows[derived.current_evidence].id if derived.current_evidence is not None else None
    return derived, evidence_id


def refresh_state(
    session: Session,
    subject: QualificationSubject,
    today: Today,
    trusted_keyids: frozenset[str],
    now: datetime,
    max_age: timedelta,
    cause: str,
    snapshot_digest: str | None = None,
) -> bool:
    """Derive and store the state; an event is appended when state or reason changed (naming the
    snapshot ``today`` was read from, when given). True if it changed."""
    derived = recompute(session, subject, today, trusted_keyids, now, max_age)
    return _store(session, subject, derived, cause=cause, now=now, snapshot_digest=snapshot_digest)


def refresh_states(
    session: Session,
    subjects: list[QualificationSubject],
    today_of: Callable[[str], Today],
    trusted_keyids: frozenset[str],
    now: datetime,
    max_age: timedelta,
    cause: str,
    snapshot_digest: str | None = None,
) -> None:
    """``refresh_state`` of each of ``subjects`` (``today_of(cluster)`` says what today's catalog
    says of a ClusterProfile's subjects), their records read in two statements, not two per
    subject: after a catalog change every subject of the fleet is refreshed."""
    evidence = records.evidence_by_subject(session)
    runs = records.run_states_by_subject(session)
    for subject in subjects:
        today = today_of(subject.cluster_profile)
        derived = _derive(
            subject,
            evidence.get(subject.id, []),
            runs.get(subject.id, []),
            today,
            trusted_keyids,
            now,
            max_age,
        )
        _store(session, subject, derived, cause=cause, now=now, snapshot_digest=snapshot_digest, flush=False)
    session.flush()


def _store(
    session: Session,
    subject: QualificationSubject,
    derived: tuple[Derived, int | None],
    *,
    cause: str,
    now: datetime,
    snapshot_digest: str | None,
    flush: bool = True,
) -> bool:
    """Store a derived state and its current evidence row (``records.record_state``)."""
    state, evidence_id = derived
    return records.record_state(
        session,
        subject,
        state.state,
        state.reason,
        evidence_id,
        cause=cause,
        now=now,
        snapshot_digest=snapshot_digest,
        flush=flush,
    )


def _evidence_record(subject: QualificationSubject, row: QualificationEvidence) -> EvidenceRecord:
    qualification = Qualification(
        cluster=subject.cluster_profile,
        selection=subject.selection,
        subject_digest=row.subject_digest,
        descriptor_identity=row.descriptor_identity,
        run_id=row.run_id,
        outputs=(),
    )
    return EvidenceRecord(
        qualification,
        records.aware(row.attested_at),
        row.signer_keyid,
        row.core_version,
        row.owned_paths_digest,
    )
