"""Qualification records in SQL: the event log, stored state == recomputation, the beat claim."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from sqlalchemy import event
from sqlalchemy.orm import Session, sessionmaker

from farm.evidence.qualification import Qualification, TargetOutput
from farm.identity.canonical import sha256_hex
from farm.qualification import recorded
from farm.qualification.descriptor import descriptor_identity
from farm.qualification.states import Today
from farm.store import qualification as store

NGINX = sha256_hex(b"nginx envelope")
EDITED = sha256_hex(b"edited nginx envelope")
IDENTITY = descriptor_identity(["expose"])
T0 = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
MAX_AGE = timedelta(days=30)
TRUSTED = frozenset({"key-1"})
SELECTION = "ingress-mode=nginx"


def _today(digest: str) -> Today:
    return Today(True, True, {SELECTION: digest}, IDENTITY, "1", "surface-1")


def _qualify(session: Session, subject, digest: str, at: datetime) -> None:
    run = store.start_run(session, subject, digest, at)
    recorded.refresh_state(session, subject, _today(digest), TRUSTED, at, MAX_AGE, "qualify")
    store.finish_run(session, run.id, "passed")
    evidence = Qualification(
        "prod-eu", SELECTION, digest, IDENTITY, str(run.id), (TargetOutput("web", digest),)
    )
    store.record_evidence(
        session,
        subject,
        evidence,
        envelope_digest=sha256_hex(digest.encode()),
        signer_keyid="key-1",
        core_version="1",
        owned_paths_digest="surface-1",
        attested_at=at,
    )


def _assert_stored_equals_recomputed(session: Session, subject, today: Today, now: datetime) -> None:
    derived, evidence_id = recorded.recompute(session, subject, today, TRUSTED, now, MAX_AGE)
    assert (subject.state, subject.reason, subject.current_evidence_id) == (
        derived.state,
        derived.reason,
        evidence_id,
    )


def test_every_transition_is_logged_and_the_stored_state_equals_a_recomputation(
    sessions: sessionmaker,
) -> None:
    with sessions() as session, session.begin():
        subject = recorded.ensure_subject(session, "prod-eu", SELECTION, T0)
        steps = [
            (T0, NGINX, True, "qualifying"),
            (T0 + timedelta(minutes=1), NGINX, False, "qualified"),
            (T0 + timedelta(minutes=2), EDITED, False, "stale"),
            (T0 + timedelta(minutes=3), NGINX, False, "qualified"),  # a revert: old evidence current again
            (T0 + MAX_AGE + timedelta(days=1), NGINX, False, "expired"),
        ]
        for now, digest, start, expected in steps:
            if start:
                _qualify(session, subject, digest, now)
                # _qualify refreshed while the run was in flight
                assert store.events(session, subject)[-1].to_state == expected
                continue
            recorded.refresh_state(session, subject, _today(digest), TRUSTED, now, MAX_AGE, "catalog")
            assert subject.state == expected
            _assert_stored_equals_recomputed(session, subject, _today(digest), now)
        log = [(e.from_state, e.to_state, e.reason) for e in store.events(session, subject)]
    assert log == [
        ("unqualified", "qualifying", ""),
        ("qualifying", "qualified", ""),
        ("qualified", "stale", "digest_drift"),
        ("stale", "qualified", ""),
        ("qualified", "expired", ""),
    ]


def test_refreshing_an_unchanged_state_appends_no_event(sessions: sessionmaker) -> None:
    with sessions() as session, session.begin():
        subject = recorded.ensure_subject(session, "prod-eu", SELECTION, T0)
        assert not recorded.refresh_state(session, subject, _today(NGINX), TRUSTED, T0, MAX_AGE, "beat")
        assert store.events(session, subject) == []


def test_two_concurrent_finders_claim_a_subject_once(sessions: sessionmaker) -> None:
    with sessions() as session, session.begin():
        subject_id = recorded.ensure_subject(session, "prod-eu", SELECTION, T0).id
    barrier = threading.Barrier(2)
    wins: list[bool] = []

    def finder() -> None:
        barrier.wait(timeout=30)
        with sessions() as session, session.begin():
            wins.append(store.claim_for_enqueue(session, subject_id, T0, timedelta(minutes=10)))

    threads = [threading.Thread(target=finder) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(wins) == [False, True]
    with sessions() as session, session.begin():
        assert store.claim_for_enqueue(session, subject_id, T0 + timedelta(minutes=11), timedelta(minutes=10))


def _subjects_with_histories(session: Session, count: int) -> dict[str, str]:
    """``count`` subjects of ClusterProfile ``c<i>``, by turns qualified at NGINX, qualified at
    EDITED (stale against NGINX), qualifying (a run in flight) and never run; cluster → the state
    each must be refreshed to against a catalog that resolves NGINX."""
    expected = {}
    for index in range(count):
        cluster = f"c{index}"
        subject = store.ensure_subject(session, cluster, SELECTION, T0, initial_state="unqualified")
        kind = index % 4
        if kind in (0, 1):
            digest = NGINX if kind == 0 else EDITED
            run = store.start_run(session, subject, digest, T0)
            store.finish_run(session, run.id, "passed")
            evidence = Qualification(
                cluster, SELECTION, digest, IDENTITY, str(run.id), (TargetOutput("web", digest),)
            )
            store.record_evidence(
                session,
                subject,
                evidence,
                envelope_digest=sha256_hex(f"{cluster} {digest}".encode()),
                signer_keyid="key-1",
                core_version="1",
                owned_paths_digest="surface-1",
                attested_at=T0,
            )
        elif kind == 2:
            store.start_run(session, subject, NGINX, T0)
        expected[cluster] = ("qualified", "stale", "qualifying", "unqualified")[kind]
    return expected


def test_refreshing_many_subjects_at_once_stores_what_each_recomputes(sessions: sessionmaker) -> None:
    now = T0 + timedelta(minutes=5)
    with sessions() as session, session.begin():
        expected = _subjects_with_histories(session, 8)
        subjects = store.subjects(session)
        recorded.refresh_states(
            session, subjects, lambda cluster: _today(NGINX), TRUSTED, now, MAX_AGE, "catalog"
        )
    with sessions() as session, session.begin():
        subjects = store.subjects(session)
        assert {subject.cluster_profile: subject.state for subject in subjects} == expected
        for subject in subjects:
            _assert_stored_equals_recomputed(session, subject, _today(NGINX), now)
        changed = {e.to_state for subject in subjects for e in store.events(session, subject)}
        assert changed == {"qualified", "stale", "qualifying"}  # an unchanged state logs nothing


def test_refreshing_every_subject_reads_their_records_in_statements_that_do_not_grow_with_them(
    sessions: sessionmaker,
) -> None:
    def statements_to_refresh(count: int) -> int:
        with sessions() as session, session.begin():
            _subjects_with_histories(session, count)
        with sessions() as session, session.begin():
            subjects = [s for s in store.subjects(session) if int(s.cluster_profile[1:]) < count]
            executed: list[str] = []
            engine = session.get_bind()
            listener = lambda *args: executed.append(args[2])  # noqa: E731 - (conn, cursor, statement, ...)
            event.listen(engine, "before_cursor_execute", listener)
            try:
                recorded.refresh_states(
                    session, subjects, lambda cluster: _today(EDITED), TRUSTED, T0, MAX_AGE, "catalog"
                )
            finally:
                event.remove(engine, "before_cursor_execute", listener)
        return len([statement for statement in executed if statement.lstrip().upper().startswith("SELECT")])

    assert statements_to_refresh(4) == statements_to_refresh(16) == 2
