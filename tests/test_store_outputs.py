"""put_signed then record_outputs: blobs first, then rows; idempotent; a crash leaves only sweepable blobs."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import typer
from conftest_store import Fleet, make_inputs
from sqlalchemy import delete, func, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker
from typer.testing import CliRunner

from farm.evidence.dsse import parse_envelope
from farm.evidence.keys import Signer, TrustedSigners
from farm.evidence.signing import SignedOutput, rendered, sign_batch
from farm.evidence.statement import parse_statement
from farm.identity.canonical import sha256_hex
from farm.store import audit
from farm.store.db import STORE_ERRORS
from farm.store.models import ActionCacheEntry, EvidenceEnvelope, EvidenceRecord, RenderOutput, RenderTarget
from farm.store.objects import S3ObjectStore
from farm.store.outputs import (
    NondeterministicOutputError,
    Recorded,
    put_signed,
    record_outputs,
    record_outputs_once,
)
from farm.store.repository import cached_output

MANIFESTS = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"


def _count(sessions: sessionmaker[Session], model: type) -> int:
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(model)) or 0


def test_a_stored_output_has_its_blob_and_rows_and_its_evidence_row_holds_the_signed_envelope(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    _, target_id, record = fleet.render(MANIFESTS)
    assert record.output_digest == sha256_hex(MANIFESTS)
    assert fleet.objects.get(record.output_digest) == MANIFESTS
    assert not fleet.objects.exists(record.envelope_digest)  # no blob of its own: it is in the row
    assert sha256_hex(fleet.envelope(record.evidence_id)) == record.envelope_digest
    envelope = parse_envelope(fleet.envelope(record.evidence_id))
    statement = parse_statement(envelope.payload)
    assert statement.subjects[0].sha256 == record.output_digest
    with fleet.sessions() as session:
        entry = cached_output(session, record.action_key)
        assert entry is not None and entry.output_digest == record.output_digest
        evidence = session.get(EvidenceRecord, record.evidence_id)
        assert evidence is not None
        assert (evidence.target_id, evidence.signer_keyid, evidence.envelope_digest) == (
            target_id,
            fleet.signer.keyid,
            record.envelope_digest,
        )
        target = session.get(RenderTarget, target_id)
        assert target is not None and (target.state, target.output_digest) == (
            "succeeded",
            record.output_digest,
        )
        assert audit.verify_output(session, fleet.objects, trusted, record.output_digest) == []


def _record(fleet: Fleet, signed: SignedOutput) -> dict[str, NondeterministicOutputError]:
    put_signed(fleet.objects, [signed])
    with fleet.sessions.begin() as session:
        return record_outputs(session, fleet.signer, [signed])


def test_recording_the_same_output_again_writes_no_new_row(fleet: Fleet) -> None:
    _, target_id, first = fleet.render(MANIFESTS)
    assert _record(fleet, fleet.sign(MANIFESTS, target_id, make_inputs(), "web", "prod")) == {}
    counts = [_count(fleet.sessions, model) for model in (RenderOutput, EvidenceRecord, ActionCacheEntry)]
    assert counts == [1, 1, 1]
    assert len(list(fleet.objects.list_blobs())) == 2  # the output and the request


def test_two_action_keys_with_identical_bytes_share_one_output(fleet: Fleet) -> None:
    _, _, first = fleet.render(MANIFESTS, application="web")
    _, _, second = fleet.render(MANIFESTS, application="api")
    assert first.output_digest == second.output_digest and first.action_key != second.action_key
    assert _count(fleet.sessions, RenderOutput) == 1
    assert _count(fleet.sessions, ActionCacheEntry) == 2
    assert _count(fleet.sessions, EvidenceRecord) == 2


def test_different_bytes_for_one_action_key_is_a_determinism_violation(fleet: Fleet) -> None:
    _, target_id, first = fleet.render(MANIFESTS)
    drifted = fleet.sign(MANIFESTS + b"# drift\n", target_id, make_inputs(), "web", "prod")
    refused = _record(fleet, drifted)
    assert list(refused) == [first.action_key] and first.output_digest in str(refused[first.action_key])
    assert _count(fleet.sessions, RenderOutput) == 1
    assert _count(fleet.sessions, EvidenceRecord) == 1  # the drifted output is not vouched for


def test_a_batch_records_many_outputs_in_one_transaction(fleet: Fleet, trusted: TrustedSigners) -> None:
    run_id = fleet.new_run()
    targets = [(make_inputs("web", f"c{i}"), "web", f"c{i}") for i in range(20)]
    _, target_ids = fleet.new_job(run_id, *targets)
    signed = [
        fleet.sign(f"kind: K{i}\n".encode(), target_id, inputs, app, cluster)
        for i, (target_id, (inputs, app, cluster)) in enumerate(zip(target_ids, targets, strict=True))
    ]
    put_signed(fleet.objects, signed)
    with fleet.sessions.begin() as session:
        assert record_outputs(session, fleet.signer, signed) == {}
    assert [_count(fleet.sessions, model) for model in (RenderOutput, EvidenceRecord, ActionCacheEntry)] == [
        20
    ] * 3
    with fleet.sessions() as session:
        assert audit.verify_outputs(session, fleet.objects, trusted, [o.output_digest for o in signed]) == []


def test_outputs_on_s3(
    sessions: sessionmaker[Session], s3_store: S3ObjectStore, signer: Signer, trusted: TrustedSigners
) -> None:
    fleet = Fleet(sessions, s3_store, signer)
    _, _, record = fleet.render(MANIFESTS)
    with sessions() as session:
        assert audit.verify_output(session, s3_store, trusted, record.output_digest) == []
    stored = {blob.digest for blob in s3_store.list_blobs()}
    assert stored == {record.output_digest, make_inputs().request_digest}


# --- a crash between the blob writes and the row writes ---------------------------------------

CRASHING_WORKER = """
import os, sys
from pathlib import Path
from farm.evidence.keys import load_signer
from farm.evidence.provenance import RenderInputs, RenderProvenance
from farm.evidence.signing import sign_output
from farm.store.db import create_farm_engine, make_session_factory
from farm.store.objects import LocalObjectStore
from farm.store.outputs import put_signed, record_outputs

url, objects, key, snapshot, digest = sys.argv[1:6]
inputs = RenderInputs("crash-core", digest, digest, digest, digest, "")
signer = load_signer(Path(key))
signed = sign_output(signer, b"kind: Crash\\n", RenderProvenance(inputs, "crash", "prod", snapshot, ""))
put_signed(LocalObjectStore(Path(objects)), [signed])
session = make_session_factory(create_farm_engine(url))()
record_outputs(session, signer, [signed])
sys.stdout.flush()
os._exit(17)  # the worker dies after the blobs are written and before the commit
"""


def _crash_a_worker(farm_env: dict[str, str], snapshot: str) -> None:
    arguments = [
        farm_env["FARM_DATABASE_URL"],
        farm_env["FARM_OBJECT_STORE"],
        farm_env["FARM_SIGNING_KEY"],
        snapshot,
        sha256_hex(b"input"),
    ]
    result = subprocess.run([sys.executable, "-c", CRASHING_WORKER, *arguments], capture_output=True)
    assert result.returncode == 17, result.stderr.decode()


def test_a_crash_before_commit_leaves_blobs_without_rows_never_rows_without_blobs(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    _, _, kept = cli_fleet.render(MANIFESTS)
    _crash_a_worker(farm_env, cli_fleet.snapshot)
    assert _count(cli_fleet.sessions, RenderOutput) == 1
    assert _count(cli_fleet.sessions, EvidenceRecord) == 1
    stored = {blob.digest for blob in cli_fleet.objects.list_blobs()}
    orphans = stored - {kept.output_digest, make_inputs().request_digest}
    assert orphans == {sha256_hex(b"kind: Crash\n")}  # its envelope was to go into the row

    report = CliRunner().invoke(storage_cli, ["gc", "--dry-run", "--grace-seconds", "0"], env=farm_env)
    assert report.exit_code == 0, report.output
    for digest in orphans:
        assert f"orphan blob sha256/{digest}" in report.output and "would remove" in report.output
    assert "0 row reference(s) to missing blobs" in report.output
    assert {blob.digest for blob in cli_fleet.objects.list_blobs()} == stored  # dry run removed nothing

    result = CliRunner().invoke(storage_cli, ["verify", "--all"], env=farm_env)
    assert result.exit_code == 0, result.output


def test_gc_reports_orphans_both_ways_and_sweeps_only_old_unreferenced_blobs(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    _, _, first = cli_fleet.render(MANIFESTS, application="web")
    _, _, second = cli_fleet.render(b"kind: Secret\n", application="api")
    orphan = cli_fleet.objects.put(b"written by a worker that died")
    cli_fleet.objects.delete(second.output_digest)  # a row now points at a missing blob
    runner = CliRunner()

    report = runner.invoke(storage_cli, ["gc", "--dry-run"], env=farm_env)
    assert report.exit_code == 1, report.output
    assert f"orphan blob sha256/{orphan}" in report.output
    assert "kept (younger than the grace period)" in report.output
    assert f"missing blob sha256/{second.output_digest}: referenced by render_outputs.digest" in report.output

    young = runner.invoke(storage_cli, ["gc"], env=farm_env)
    assert cli_fleet.objects.exists(orphan), young.output

    swept = runner.invoke(storage_cli, ["gc", "--grace-seconds", "0"], env=farm_env)
    assert f"orphan blob sha256/{orphan}" in swept.output and "removed" in swept.output
    assert not cli_fleet.objects.exists(orphan)
    assert cli_fleet.objects.exists(first.output_digest)


def test_sweep_counts_every_blob_reference_column(fleet: Fleet) -> None:
    with fleet.sessions() as session:
        references = audit.referenced_blobs(session)
    assert references == {}
    _, _, record = fleet.render(MANIFESTS)
    with fleet.sessions() as session:
        references = audit.referenced_blobs(session)
    assert references == {
        record.output_digest: ["render_outputs.digest"],
        make_inputs().request_digest: ["render_targets.request_digest"],
    }
    fleet.overwrite_envelope(record.evidence_id, None)  # as a row written before revision 0010
    with fleet.sessions() as session:
        references = audit.referenced_blobs(session)
    assert references[record.envelope_digest] == ["evidence_records.envelope_digest"]


def test_bad_grace_period_is_refused(storage_cli: typer.Typer, farm_env: dict[str, str]) -> None:
    result = CliRunner().invoke(storage_cli, ["gc", "--grace-seconds", "-5"], env=farm_env)
    assert result.exit_code == 2 and "grace-seconds" in result.output


def test_gc_names_an_unusable_database(storage_cli: typer.Typer, tmp_path: Path) -> None:
    env = {"FARM_HOME": str(tmp_path), "FARM_DATABASE_URL": "mysql://nobody@127.0.0.1/farm"}
    result = CliRunner().invoke(storage_cli, ["gc", "--dry-run"], env=env)
    assert result.exit_code == 1 and "FARM_DATABASE_URL" in result.output


def test_a_retry_restores_a_lost_output_blob(fleet: Fleet) -> None:
    _, target_id, first = fleet.render(MANIFESTS)
    fleet.objects.delete(first.output_digest)
    assert _record(fleet, fleet.sign(MANIFESTS, target_id, make_inputs(), "web", "prod")) == {}
    assert fleet.objects.get(first.output_digest) == MANIFESTS


def test_concurrent_twins_of_one_action_key_record_it_once(fleet: Fleet) -> None:
    """Two targets of one action key record at once; the second waits on the first's advisory
    lock of the key (PostgreSQL) or on the write lock (SQLite), then finds the key cached with the
    same bytes: the key keeps the first's evidence record and cache entry, and the second adds none
    (its target is a cache hit)."""
    inputs = make_inputs()
    run_id = fleet.new_run()
    _, [first_target] = fleet.new_job(run_id, (inputs, "web", "prod"))
    _, [second_target] = fleet.new_job(run_id, (inputs, "web", "prod-twin"))
    first = fleet.sign(MANIFESTS, first_target, inputs, "web", "prod")
    second = fleet.sign(MANIFESTS, second_target, inputs, "web", "prod-twin")
    put_signed(fleet.objects, [first, second])
    results: dict[str, object] = {}

    def record_second() -> None:
        try:
            with fleet.sessions.begin() as session:
                results["recorded"] = record_outputs_once(session, fleet.signer, [second])
        except BaseException as error:  # reported to the main thread
            results["error"] = error

    with fleet.sessions.begin() as session:
        assert record_outputs(session, fleet.signer, [first]) == {}
        twin = threading.Thread(target=record_second)
        twin.start()
        twin.join(timeout=0.5)
        assert twin.is_alive()  # blocked behind this uncommitted transaction
    twin.join(timeout=30)
    assert "error" not in results, results.get("error")
    assert results["recorded"] == Recorded(refused={}, already=frozenset({second.action_key}))
    assert (_count(fleet.sessions, EvidenceRecord), _count(fleet.sessions, ActionCacheEntry)) == (1, 1)
    with fleet.sessions() as session:
        entry = cached_output(session, first.action_key)
        assert entry is not None and entry.output_digest == first.output_digest


def test_a_record_already_there_without_its_cache_entry_is_named_by_the_new_entry(fleet: Fleet) -> None:
    """The evidence record of an output is kept when its cache entry is gone (a sweep, a repair):
    recording the output again adds no record and points the new entry at the one there."""
    _, target_id, first = fleet.render(MANIFESTS)
    with fleet.sessions.begin() as session:
        session.execute(delete(ActionCacheEntry))
    assert _record(fleet, fleet.sign(MANIFESTS, target_id, make_inputs(), "web", "prod")) == {}
    assert _count(fleet.sessions, EvidenceRecord) == 1
    with fleet.sessions() as session:
        entry = cached_output(session, first.action_key)
        assert entry is not None and (entry.evidence_id, entry.output_digest) == (
            first.evidence_id,
            first.output_digest,
        )


def test_the_records_of_a_batch_already_there_are_named_by_new_entries_and_not_written_twice(
    fleet: Fleet,
) -> None:
    """A batch recorded again once its cache entries are gone (a repair) adds no evidence record:
    each new entry names its subject's record, found by the batch and the subject's position."""
    _, _, signed = fleet.render_batch("web", {"prod": MANIFESTS, "staging": b"kind: Secret\n"})
    with fleet.sessions() as session:
        first_ids = dict(session.execute(select(EvidenceRecord.subject_index, EvidenceRecord.id)).all())
    with fleet.sessions.begin() as session:
        session.execute(delete(ActionCacheEntry))

    with fleet.sessions.begin() as session:
        assert record_outputs_once(session, fleet.signer, signed) == Recorded()

    assert _count(fleet.sessions, EvidenceRecord) == 2
    with fleet.sessions() as session:
        for output in signed:
            entry = cached_output(session, output.action_key)
            assert entry is not None
            assert (entry.evidence_id, entry.output_digest) == (
                first_ids[output.subject_index],
                output.output_digest,
            )


def test_a_second_record_of_one_batch_subject_is_refused_by_the_database(fleet: Fleet) -> None:
    """Two rows for one subject of one batch statement cannot both be written, whatever their
    envelope digest says (revision 0026 keeps a batch row unique by its batch and position)."""
    _, _, [output] = fleet.render_batch("web", {"prod": MANIFESTS})
    with fleet.sessions() as session:
        record = session.scalars(select(EvidenceRecord)).one()
        session.expunge(record)
    copy = {column: getattr(record, column) for column in EvidenceRecord.__table__.columns.keys()}  # noqa: SIM118 - the names, not the columns
    copy.update(id=None, envelope_digest="0" * 64)

    with pytest.raises(IntegrityError), fleet.sessions.begin() as session:
        session.add(EvidenceRecord(**copy))
    assert output.subject_index == 0 and _count(fleet.sessions, EvidenceRecord) == 1


def test_the_rows_of_a_recorded_output_hold_moments_as_every_other_row_does(fleet: Fleet) -> None:
    """Rows written through the driver's cursor read back as the moment given, in UTC, and on
    SQLite hold the text SQLAlchemy writes for every other row (no offset), so moments compare."""
    moment = datetime(2026, 12, 5, 13, 4, 5, 678901, tzinfo=timezone(timedelta(hours=2)))
    run_id = fleet.new_run()
    job_id, [target_id] = fleet.new_job(run_id, (make_inputs(), "web", "prod"))
    provenance = fleet.provenance(target_id, make_inputs(), "web", "prod")
    [signed] = sign_batch(fleet.signer, job_id, [rendered(MANIFESTS, provenance)])
    put_signed(fleet.objects, [signed])
    with fleet.sessions.begin() as session:
        assert record_outputs(session, fleet.signer, [signed], now=moment) == {}
    with fleet.sessions() as session:
        for model in (RenderOutput, EvidenceRecord, ActionCacheEntry, EvidenceEnvelope):
            stored = session.scalar(select(model.created_at))
            assert stored == moment and stored.utcoffset() == timedelta(0)
        if session.get_bind().dialect.name == "sqlite":
            texts = {
                session.scalar(text(f"SELECT created_at FROM {table}"))
                for table in ("render_outputs", "evidence_records", "action_cache", "evidence_envelopes")
            }
            assert texts == {"2026-12-05 11:04:05.678901"}
            job_text = session.scalar(text("SELECT created_at FROM render_jobs"))
            assert len(job_text) == len("2026-12-05 11:04:05.678901")


@contextmanager
def _inserts_refused(sessions: sessionmaker[Session], table: str) -> Iterator[None]:
    """A trigger that makes the database refuse every insert into ``table``, dropped afterwards
    (the PostgreSQL test database is shared across tests)."""
    with sessions.begin() as session:
        if session.get_bind().dialect.name == "postgresql":
            session.execute(
                text(
                    "CREATE FUNCTION refuse_insert() RETURNS trigger LANGUAGE plpgsql AS $$ "
                    "BEGIN RAISE EXCEPTION 'insert refused by the test'; END $$"
                )
            )
            session.execute(
                text(
                    f"CREATE TRIGGER refuse_insert BEFORE INSERT ON {table} "
                    "FOR EACH ROW EXECUTE FUNCTION refuse_insert()"
                )
            )
        else:
            session.execute(
                text(
                    f"CREATE TRIGGER refuse_insert BEFORE INSERT ON {table} "
                    "BEGIN SELECT RAISE(ABORT, 'insert refused by the test'); END"
                )
            )
    try:
        yield
    finally:
        with sessions.begin() as session:
            if session.get_bind().dialect.name == "postgresql":
                session.execute(text(f"DROP TRIGGER refuse_insert ON {table}"))
                session.execute(text("DROP FUNCTION refuse_insert()"))
            else:
                session.execute(text("DROP TRIGGER refuse_insert"))


def test_a_database_error_while_recording_leaves_as_a_store_error(fleet: Fleet) -> None:
    """A statement the database refuses (here: the action cache's insert, after the output's and
    the evidence's) reaches the caller as the store's error, which a worker retries, and records
    nothing."""
    signed = fleet.sign(MANIFESTS, "0" * 32, make_inputs(), "web", "prod")
    put_signed(fleet.objects, [signed])
    with (
        _inserts_refused(fleet.sessions, "action_cache"),
        pytest.raises(STORE_ERRORS, match="insert refused by the test"),
        fleet.sessions.begin() as session,
    ):
        record_outputs(session, fleet.signer, [signed])
    assert [_count(fleet.sessions, model) for model in (RenderOutput, EvidenceRecord, ActionCacheEntry)] == [
        0
    ] * 3
