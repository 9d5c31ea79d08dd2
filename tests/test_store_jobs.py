"""Rows, constraints and the job state machine (claim, finish, release, reconcile, finalise), on
SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from conftest_store import Fleet, make_inputs
from sqlalchemy import delete, select, text, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from farm.evidence.failure import sign_failure
from farm.evidence.provenance import action_key
from farm.identity.canonical import sha256_hex
from farm.store.models import (
    EvidenceRecord,
    FailedAction,
    FleetRun,
    JobState,
    RenderJob,
    RenderTarget,
    Signer,
    utcnow,
)
from farm.store.outputs import record_failures
from farm.store.repository import insert_ignoring_conflict, sync_signer_trust
from farm.store.runs import (
    KEY_CHUNK,
    TargetResult,
    among,
    cached_failures,
    cached_outputs,
    claim_job,
    finalize_run,
    finish_job,
    jobs_of_run,
    queue_jobs,
    release_job,
    requeue_stale_jobs,
    target_counts,
)


def _job(sessions: sessionmaker[Session], job_id: str) -> RenderJob:
    with sessions() as session:
        job = session.get(RenderJob, job_id)
        assert job is not None
        return job


def _target(sessions: sessionmaker[Session], target_id: str) -> RenderTarget:
    with sessions() as session:
        target = session.get(RenderTarget, target_id)
        assert target is not None
        return target


def _two_target_job(fleet: Fleet, run_id: str | None = None) -> tuple[str, str, list[str]]:
    run_id = run_id or fleet.new_run()
    job_id, targets = fleet.new_job(
        run_id, (make_inputs("web", "prod"), "web", "prod"), (make_inputs("web", "stage"), "web", "stage")
    )
    return run_id, job_id, targets


def test_claim_moves_a_queued_job_to_running_once(fleet: Fleet) -> None:
    _, job_id, _ = _two_target_job(fleet)
    with fleet.sessions.begin() as session:
        assert claim_job(session, job_id, worker="w1") is not None
    with fleet.sessions.begin() as session:
        assert claim_job(session, job_id, worker="w2") is None
    job = _job(fleet.sessions, job_id)
    assert (job.state, job.claimed_by, job.attempts) == ("running", "w1", 1)
    assert job.started_at is not None


def test_the_claim_returns_the_open_targets_with_what_the_caches_hold(fleet: Fleet) -> None:
    _, _, record = fleet.render(b"kind: ConfigMap\n", profile="prod")  # caches web/prod's key
    with fleet.sessions.begin() as session:
        record_failures(
            session,
            [sign_failure(fleet.signer, action_key(make_inputs("web", "stage")), "document.invalid", "bad")],
        )
    run_id, job_id, (prod, stage) = _two_target_job(fleet)
    with fleet.sessions.begin() as session:
        claimed = claim_job(session, job_id, worker="w1")
    assert claimed is not None
    assert (claimed.id, claimed.run_id, claimed.application, claimed.snapshot_digest) == (
        job_id,
        run_id,
        "web",
        fleet.snapshot,
    )
    by_id = {target.id: target for target in claimed.targets}
    assert set(by_id) == {prod, stage}
    assert by_id[prod].cached_output == record.output_digest and by_id[prod].cached_failure is None
    assert by_id[stage].cached_output is None
    assert (
        by_id[stage].cached_failure is not None
        and by_id[stage].cached_failure.error_code == "document.invalid"
    )
    assert by_id[stage].action_key == action_key(make_inputs("web", "stage"))


def test_finishing_records_every_target_of_the_batch_in_one_go(fleet: Fleet) -> None:
    run_id, job_id, (prod, stage) = _two_target_job(fleet)
    with fleet.sessions.begin() as session:
        claim_job(session, job_id, worker="w1")
        results = [
            TargetResult(prod, JobState.FAILED, error_code="document.invalid", error_message="boom"),
            TargetResult(stage, JobState.CACHED, output_digest=None, error_code="x", error_message="cached"),
        ]
        assert finish_job(session, job_id, worker="w1", results=results)
    assert _job(fleet.sessions, job_id).state == "succeeded"
    failed = _target(fleet.sessions, prod)
    assert (failed.state, failed.error_code, failed.error_message) == ("failed", "document.invalid", "boom")
    assert failed.finished_at is not None
    with fleet.sessions() as session:
        assert target_counts(session, run_id) == {"failed": 1, "cached_failure": 1}


def test_only_the_claimer_can_finish_and_a_lost_claim_records_nothing(fleet: Fleet) -> None:
    _, job_id, (prod, _) = _two_target_job(fleet)
    with fleet.sessions.begin() as session:
        claim_job(session, job_id, worker="w1")
        result = [TargetResult(prod, JobState.SUCCEEDED)]
        assert not finish_job(session, job_id, worker="intruder", results=result)
        assert finish_job(session, job_id, worker="w1", results=[])
        assert not finish_job(session, job_id, worker="w1", results=result)  # already final
    assert _target(fleet.sessions, prod).state == "queued"


def test_target_results_refuse_open_states_and_failures_without_a_code() -> None:
    with pytest.raises(ValueError, match="state"):
        TargetResult("t", JobState.RUNNING)
    with pytest.raises(ValueError, match="error_code"):
        TargetResult("t", JobState.FAILED)


def test_a_released_job_is_claimable_again_and_counts_the_attempt(fleet: Fleet) -> None:
    _, job_id, _ = _two_target_job(fleet)
    with fleet.sessions.begin() as session:
        claim_job(session, job_id, worker="w1")
        assert not release_job(session, job_id, worker="w2")
        assert release_job(session, job_id, worker="w1", error="OperationalError: gone")
    with fleet.sessions.begin() as session:
        assert claim_job(session, job_id, worker="w2") is not None
    job = _job(fleet.sessions, job_id)
    assert (job.attempts, job.claimed_by, job.error_message) == (2, "w2", None)


def test_planned_jobs_are_not_claimable_until_queued(fleet: Fleet) -> None:
    run_id, job_id, _ = _two_target_job(fleet)
    with fleet.sessions.begin() as session:
        session.execute(update(RenderJob).values(state="planned"))
    with fleet.sessions.begin() as session:
        assert claim_job(session, job_id, worker="w1") is None
        assert queue_jobs(session, [job_id]) == 1
        assert queue_jobs(session, [job_id]) == 0
        assert claim_job(session, job_id, worker="w1") is not None
    with fleet.sessions() as session:
        assert [job.id for job in jobs_of_run(session, run_id)] == [job_id]


def test_concurrent_claims_have_exactly_one_winner(fleet: Fleet) -> None:
    _, job_id, _ = _two_target_job(fleet)
    results: list[bool] = []
    barrier = threading.Barrier(4)

    def contender(name: str) -> None:
        with fleet.sessions() as session:
            barrier.wait()
            won = claim_job(session, job_id, worker=name) is not None
            session.commit()
            results.append(won)

    threads = [threading.Thread(target=contender, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, False, False, True]
    assert _job(fleet.sessions, job_id).attempts == 1


def test_the_reconciler_requeues_jobs_stuck_running_or_queued_past_the_timeout(fleet: Fleet) -> None:
    run_id = fleet.new_run()
    _, running, _ = _two_target_job(fleet, run_id)
    waiting, _ = fleet.new_job(run_id, (make_inputs("api"), "api", "prod"))
    with fleet.sessions.begin() as session:
        claim_job(session, running, worker="dead-worker")
    with fleet.sessions.begin() as session:
        assert requeue_stale_jobs(session, utcnow() - timedelta(minutes=5)) == []
    later = utcnow() + timedelta(minutes=10)
    with fleet.sessions.begin() as session:
        sent = requeue_stale_jobs(session, later)
    assert {job_id for job_id, _ in sent} == {running, waiting}
    assert (
        _job(fleet.sessions, running).state == "queued" and _job(fleet.sessions, running).claimed_by is None
    )
    with fleet.sessions.begin() as session:  # just sent: the next pass waits a full timeout again
        assert requeue_stale_jobs(session, utcnow() - timedelta(minutes=5)) == []


def test_a_run_finishes_only_when_no_job_is_open_and_says_whether_a_target_failed(fleet: Fleet) -> None:
    run_id, job_id, (prod, stage) = _two_target_job(fleet)
    with fleet.sessions.begin() as session:
        assert not finalize_run(session, run_id)
        claim_job(session, job_id, worker="w1")
        results = [
            TargetResult(prod, JobState.SUCCEEDED),
            TargetResult(stage, JobState.FAILED, error_code="document.invalid"),
        ]
        finish_job(session, job_id, worker="w1", results=results)
        assert finalize_run(session, run_id)
        assert not finalize_run(session, run_id)  # idempotent
    with fleet.sessions() as session:
        run = session.get(FleetRun, run_id)
        assert run is not None and (run.state, run.finished_at is not None) == (
            "completed_with_failures",
            True,
        )


def test_cache_look_ups_answer_many_keys_at_once(fleet: Fleet) -> None:
    outputs = [fleet.render(f"kind: K{i}\n".encode(), application=f"app{i}")[2] for i in range(3)]
    missing = action_key(make_inputs("nobody"))
    with fleet.sessions.begin() as session:
        failures = [
            sign_failure(fleet.signer, missing, "document.invalid", "bad"),
            sign_failure(fleet.signer, missing, "other", "ignored"),
        ]
        record_failures(session, failures)
    keys = [record.action_key for record in outputs] + [missing]
    with fleet.sessions() as session:
        assert cached_outputs(session, keys) == {r.action_key: r.output_digest for r in outputs}
        failures = cached_failures(session, keys)
        assert list(failures) == [missing] and failures[missing].error_code == "document.invalid"
        assert session.scalar(select(FailedAction.error_message)) == "bad"  # first recording kept


def test_the_failure_cache_answers_alike_whether_it_holds_few_or_many_keys_against_those_asked(
    fleet: Fleet,
) -> None:
    # few cached failures against many keys: the cache's keys are read and the rest never looked
    # up; as many as a quarter of the keys or more: every key is looked up
    failed = [action_key(make_inputs(f"failing-{index}")) for index in range(8)]
    with fleet.sessions.begin() as session:
        record_failures(
            session, [sign_failure(fleet.signer, key, "document.invalid", f"bad {key}") for key in failed]
        )
    absent = [sha256_hex(f"absent-{index}".encode()) for index in range(40)]
    for keys in ([*failed, *absent[:2]], [failed[3], *absent]):
        with fleet.sessions() as session:
            found = cached_failures(session, keys)
        assert {key: failure.error_message for key, failure in found.items()} == {
            key: f"bad {key}" for key in keys if key in failed
        }


def test_a_bulk_look_up_finds_exactly_the_values_asked_whatever_they_hold(fleet: Fleet) -> None:
    # digests are bound as one comma-joined text on PostgreSQL; a value holding a comma (none of
    # the farm's look-ups asks for one) must still be matched whole, not split
    run_id = fleet.new_run()
    fleet.new_job(
        run_id, (make_inputs("a,b", "prod"), "a,b", "prod"), (make_inputs("a,b", "stage"), "a,b", "stage")
    )
    fleet.new_job(run_id, (make_inputs("a", "prod"), "a", "prod"))
    with fleet.sessions() as session:
        for asked, expected in (
            (["a,b"], {"a,b"}),
            (["a", "b"], {"a"}),
            (["b", "a,b", "c"], {"a,b"}),
            ([], set()),
        ):
            found = session.scalars(
                select(RenderTarget.application).where(among(session, RenderTarget.application, asked))
            ).all()
            assert set(found) == expected, asked
        keys = [action_key(make_inputs("a,b", "prod")), action_key(make_inputs("a", "prod"))]
        found = session.scalars(
            select(RenderTarget.action_key).where(among(session, RenderTarget.action_key, keys))
        )
        assert sorted(found) == sorted(keys)


def test_cache_look_ups_of_more_keys_than_one_statement_takes_find_every_hit(fleet: Fleet) -> None:
    outputs = [fleet.render(f"kind: K{i}\n".encode(), application=f"app{i}")[2] for i in range(2)]
    failed = action_key(make_inputs("failing"))
    with fleet.sessions.begin() as session:
        record_failures(session, [sign_failure(fleet.signer, failed, "document.invalid", "bad")])
    absent = [sha256_hex(str(index).encode()) for index in range(KEY_CHUNK + 500)]
    # one hit in the first statement's keys, the others in the second's (a planning look-up's size)
    keys = [outputs[0].action_key, *absent, outputs[1].action_key, failed]
    with fleet.sessions() as session:
        assert cached_outputs(session, keys) == {r.action_key: r.output_digest for r in outputs}
        assert list(cached_failures(session, keys)) == [failed]


def test_one_target_per_application_cluster_and_run(fleet: Fleet) -> None:
    run_id = fleet.new_run()
    fleet.new_job(run_id, (make_inputs(), "web", "prod"))
    with pytest.raises(IntegrityError):
        fleet.new_job(run_id, (make_inputs(), "web", "prod"))


def test_job_and_target_states_are_constrained(fleet: Fleet) -> None:
    _, job_id, (prod, _) = _two_target_job(fleet)
    with pytest.raises(IntegrityError), fleet.sessions.begin() as session:
        session.execute(update(RenderJob).where(RenderJob.id == job_id).values(state="exploded"))
    with pytest.raises(IntegrityError), fleet.sessions.begin() as session:
        session.execute(update(RenderTarget).where(RenderTarget.id == prod).values(state="exploded"))


def test_foreign_keys_are_enforced(fleet: Fleet) -> None:
    # a job's run is a foreign key; a target's run and output are not (revision 0025: verify
    # checks them, tests/test_tamper_store.py)
    with pytest.raises(IntegrityError), fleet.sessions.begin() as session:
        session.add(RenderJob(run_id="no-such-run", application="a", batch_key="0" * 64, target_count=1))


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
