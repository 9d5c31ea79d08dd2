"""Qualification records in SQL: the event log, stored state == recomputation, the beat claim."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

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
