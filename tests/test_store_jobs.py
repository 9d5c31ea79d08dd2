"""Rows, constraints and the conditional-UPDATE job claim, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading

import pytest
from conftest_store import Fleet, make_inputs
from sqlalchemy import delete, select, text, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from farm.evidence.provenance import action_key
from farm.store.models import EvidenceRecord, JobState, RenderJob, Signer
from farm.store.repository import (
    ClaimedJob,
    claim_job,
    claim_job_returning,
    finish_job,
    insert_ignoring_conflict,
    jobs_of_run,
    queue_jobs,
    sync_signer_trust,
)


def _job(sessions: sessionmaker[Session], job_id: str) -> RenderJob:
    with sessions() as session:
        job = session.get(RenderJob, job_id)
        assert job is not None
        return job


def test_claim_moves_a_queued_job_to_running_once(fleet: Fleet) -> None:
    job_id = fleet.new_job(fleet.new_run(), make_inputs())
    with fleet.sessions.begin() as session:
        assert claim_job(session, job_id, worker="w1")
    with fleet.sessions.begin() as session:
        assert not claim_job(session, job_id, worker="w2")
    job = _job(fleet.sessions, job_id)
    assert (job.state, job.claimed_by, job.attempts) == ("running", "w1", 1)
    assert job.started_at is not None


def test_the_claim_returns_what_the_worker_needs(fleet: Fleet) -> None:
    _, _, record = fleet.render(b"kind: ConfigMap\n")  # caches the key of make_inputs()
    run_id = fleet.new_run()
    cached = fleet.new_job(run_id, make_inputs())
    fresh = fleet.new_job(run_id, make_inputs("api"), application="api")
    with fleet.sessions.begin() as session:
        claimed_fresh = claim_job_returning(session, fresh, worker="w1")
        claimed_cached = claim_job_returning(session, cached, worker="w1")
        assert claim_job_returning(session, fresh, worker="w2") is None
    assert claimed_fresh == ClaimedJob(
        id=fresh,
        run_id=run_id,
        application="api",
        cluster_profile="prod",
        selection="",
        action_key=action_key(make_inputs("api")),
        snapshot_digest=fleet.snapshot,
        manifest_digest=None,
        cached_output_digest=None,
    )
    assert claimed_cached is not None
    assert (claimed_cached.action_key, claimed_cached.cached_output_digest) == (
        action_key(make_inputs()),
        record.output_digest,
    )


def test_a_retry_counts_the_attempt(fleet: Fleet) -> None:
    job_id = fleet.new_job(fleet.new_run(), make_inputs())
    with fleet.sessions.begin() as session:
        assert claim_job(session, job_id, worker="w1")
        assert finish_job(session, job_id, worker="w1", state=JobState.FAILED, error_code="render.crash")
    with fleet.sessions.begin() as session:
        assert claim_job(session, job_id, worker="w2", from_states=[JobState.FAILED])
    job = _job(fleet.sessions, job_id)
    assert (job.attempts, job.claimed_by, job.error_code) == (2, "w2", None)


def test_only_the_claimer_can_finish(fleet: Fleet) -> None:
    job_id = fleet.new_job(fleet.new_run(), make_inputs())
    with fleet.sessions.begin() as session:
        claim_job(session, job_id, worker="w1")
        assert not finish_job(session, job_id, worker="intruder", state=JobState.SUCCEEDED)
        assert finish_job(
            session, job_id, worker="w1", state=JobState.FAILED, error_code="x.y", error_message="boom"
        )
        assert not finish_job(session, job_id, worker="w1", state=JobState.SUCCEEDED)  # already final
    job = _job(fleet.sessions, job_id)
    assert (job.state, job.error_code, job.error_message) == ("failed", "x.y", "boom")
    assert job.finished_at is not None


def test_finish_refuses_non_final_states_and_failures_without_a_code(fleet: Fleet) -> None:
    with fleet.sessions() as session:
        with pytest.raises(ValueError, match="state"):
            finish_job(session, "x", worker="w", state=JobState.RUNNING)
        with pytest.raises(ValueError, match="error_code"):
            finish_job(session, "x", worker="w", state=JobState.FAILED)


def test_planned_jobs_are_not_claimable_until_queued(fleet: Fleet) -> None:
    run_id = fleet.new_run()
    job_id = fleet.new_job(run_id, make_inputs())
    with fleet.sessions.begin() as session:
        session.execute(update(RenderJob).values(state="planned"))
    with fleet.sessions.begin() as session:
        assert not claim_job(session, job_id, worker="w1")
        assert queue_jobs(session, [job_id]) == 1
        assert queue_jobs(session, [job_id]) == 0
        assert claim_job(session, job_id, worker="w1")
    assert [job.id for job in _jobs(fleet.sessions, run_id)] == [job_id]


def _jobs(sessions: sessionmaker[Session], run_id: str) -> list[RenderJob]:
    with sessions() as session:
        return jobs_of_run(session, run_id)


def test_concurrent_claims_have_exactly_one_winner(fleet: Fleet) -> None:
    job_id = fleet.new_job(fleet.new_run(), make_inputs())
    results: list[bool] = []
    barrier = threading.Barrier(4)

    def contender(name: str) -> None:
        with fleet.sessions() as session:
            barrier.wait()
            won = claim_job(session, job_id, worker=name)
            session.commit()
            results.append(won)

    threads = [threading.Thread(target=contender, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, False, False, True]
    assert _job(fleet.sessions, job_id).attempts == 1


def test_one_job_per_target_and_run(fleet: Fleet) -> None:
    run_id = fleet.new_run()
    fleet.new_job(run_id, make_inputs())
    with pytest.raises(IntegrityError):
        fleet.new_job(run_id, make_inputs())


def test_job_state_is_constrained(fleet: Fleet) -> None:
    job_id = fleet.new_job(fleet.new_run(), make_inputs())
    with pytest.raises(IntegrityError), fleet.sessions.begin() as session:
        session.execute(update(RenderJob).where(RenderJob.id == job_id).values(state="exploded"))


def test_foreign_keys_are_enforced(fleet: Fleet) -> None:
    with pytest.raises(IntegrityError), fleet.sessions.begin() as session:
        session.add(
            RenderJob(
                run_id="no-such-run",
                application="a",
                cluster_profile="p",
                action_key=action_key(make_inputs()),
            )
        )


def test_evidence_records_are_append_only(fleet: Fleet) -> None:
    fleet.render(b"kind: ConfigMap\n")
    with pytest.raises(DBAPIError, match="append-only"), fleet.sessions.begin() as session:
        session.execute(update(EvidenceRecord).values(subject_name="forged"))
    with pytest.raises(DBAPIError, match="append-only"), fleet.sessions.begin() as session:
        session.execute(delete(EvidenceRecord))
    with fleet.sessions() as session:
        assert session.scalar(select(EvidenceRecord.subject_name)) == "render:web/prod"


def test_insert_ignoring_conflict(fleet: Fleet) -> None:
    row = {"keyid": "a" * 64, "public_key_pem": "pem", "trusted": False}
    with fleet.sessions.begin() as session:
        assert insert_ignoring_conflict(session, Signer, row)
        assert not insert_ignoring_conflict(session, Signer, {**row, "public_key_pem": "other"})
    with fleet.sessions() as session:
        assert session.scalar(select(Signer.public_key_pem)) == "pem"


def test_signer_trust_mirrors_the_trusted_list(fleet: Fleet) -> None:
    from farm.evidence.keys import TrustedSigners

    fleet.render(b"x\n")
    with fleet.sessions.begin() as session:
        sync_signer_trust(session, TrustedSigners({fleet.signer.keyid: fleet.signer.public_key}))
    with fleet.sessions() as session:
        assert session.scalar(select(Signer.trusted).where(Signer.keyid == fleet.signer.keyid)) is True
    with fleet.sessions.begin() as session:
        sync_signer_trust(session, TrustedSigners())
    with fleet.sessions() as session:
        assert session.scalar(select(Signer.trusted)) is False


def test_sqlite_runs_in_wal_mode_with_foreign_keys(
    sessions: sessionmaker[Session], database_kind: str
) -> None:
    if database_kind != "sqlite":
        with sessions() as session:
            assert session.scalar(text("SELECT current_setting('server_version_num')::int")) >= 130000
        return
    with sessions() as session:
        assert session.scalar(text("PRAGMA journal_mode")) == "wal"
        assert session.scalar(text("PRAGMA foreign_keys")) == 1
