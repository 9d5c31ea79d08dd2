"""store_output: blobs first, then rows; idempotent; a crash leaves only sweepable blobs."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import typer
from conftest_store import Fleet, make_inputs
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker
from typer.testing import CliRunner

from farm.evidence.canonical import sha256_hex
from farm.evidence.dsse import parse_envelope
from farm.evidence.keys import Signer, TrustedSigners
from farm.evidence.provenance import action_key
from farm.evidence.statement import parse_statement
from farm.store import audit
from farm.store.models import ActionCacheEntry, EvidenceRecord, RenderJob, RenderOutput
from farm.store.objects import S3ObjectStore
from farm.store.outputs import NondeterministicOutputError, OutputRecord, sign_and_put, store_output
from farm.store.repository import cached_output

MANIFESTS = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"


def _count(sessions: sessionmaker[Session], model: type) -> int:
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(model)) or 0


def test_store_output_writes_blobs_rows_and_signed_provenance(fleet: Fleet, trusted: TrustedSigners) -> None:
    _, job_id, record = fleet.render(MANIFESTS)
    assert record.output_digest == sha256_hex(MANIFESTS)
    assert fleet.objects.get(record.output_digest) == MANIFESTS
    envelope = parse_envelope(fleet.objects.get(record.envelope_digest))
    statement = parse_statement(envelope.payload)
    assert statement.subjects[0].sha256 == record.output_digest
    with fleet.sessions() as session:
        entry = cached_output(session, record.action_key)
        assert entry is not None and entry.output_digest == record.output_digest
        evidence = session.get(EvidenceRecord, record.evidence_id)
        assert evidence is not None
        assert (evidence.job_id, evidence.signer_keyid, evidence.envelope_digest) == (
            job_id,
            fleet.signer.keyid,
            record.envelope_digest,
        )
        job = session.get(RenderJob, job_id)
        assert job is not None and (job.state, job.output_digest) == ("succeeded", record.output_digest)
        assert audit.verify_output(session, fleet.objects, trusted, record.output_digest) == []


def test_storing_the_same_action_key_again_is_a_no_op(fleet: Fleet) -> None:
    run_id, first_job, first = fleet.render(MANIFESTS)
    inputs = make_inputs()
    with fleet.sessions.begin() as session:
        again = store_output(
            session,
            fleet.objects,
            fleet.signer,
            manifests=MANIFESTS,
            action_key=action_key(inputs),
            provenance=fleet.provenance(first_job, inputs),
        )
    assert again.reused and (again.output_digest, again.evidence_id) == (
        first.output_digest,
        first.evidence_id,
    )
    assert again.envelope_digest == first.envelope_digest
    assert (_count(fleet.sessions, RenderOutput), _count(fleet.sessions, EvidenceRecord)) == (1, 1)
    assert len(list(fleet.objects.list_blobs())) == 2


def test_two_action_keys_with_identical_bytes_share_one_output(fleet: Fleet) -> None:
    _, _, first = fleet.render(MANIFESTS, application="web")
    _, _, second = fleet.render(MANIFESTS, application="api")
    assert first.output_digest == second.output_digest and first.action_key != second.action_key
    assert _count(fleet.sessions, RenderOutput) == 1
    assert _count(fleet.sessions, ActionCacheEntry) == 2
    assert _count(fleet.sessions, EvidenceRecord) == 2


def test_different_bytes_for_one_action_key_is_a_determinism_violation(fleet: Fleet) -> None:
    _, job_id, first = fleet.render(MANIFESTS)
    inputs = make_inputs()
    with (
        pytest.raises(NondeterministicOutputError, match=first.output_digest),
        fleet.sessions.begin() as session,
    ):
        store_output(
            session,
            fleet.objects,
            fleet.signer,
            manifests=MANIFESTS + b"# drift\n",
            action_key=action_key(inputs),
            provenance=fleet.provenance(job_id, inputs),
        )
    assert _count(fleet.sessions, RenderOutput) == 1


def test_an_action_key_that_is_not_the_inputs_key_writes_nothing(fleet: Fleet) -> None:
    inputs = make_inputs()
    job_id = fleet.new_job(fleet.new_run(), inputs)
    with pytest.raises(ValueError, match="action_key"), fleet.sessions.begin() as session:
        store_output(
            session,
            fleet.objects,
            fleet.signer,
            manifests=MANIFESTS,
            action_key=action_key(dataclasses.replace(inputs, selection="tier=gold")),
            provenance=fleet.provenance(job_id, inputs),
        )
    assert list(fleet.objects.list_blobs()) == []
    assert _count(fleet.sessions, RenderOutput) == 0


def test_store_output_on_s3(
    sessions: sessionmaker[Session], s3_store: S3ObjectStore, signer: Signer, trusted: TrustedSigners
) -> None:
    fleet = Fleet(sessions, s3_store, signer)
    _, _, record = fleet.render(MANIFESTS)
    with sessions() as session:
        assert audit.verify_output(session, s3_store, trusted, record.output_digest) == []
    assert {blob.digest for blob in s3_store.list_blobs()} == {record.output_digest, record.envelope_digest}


# --- a crash between the blob writes and the row writes ---------------------------------------

CRASHING_WORKER = """
import os, sys
from pathlib import Path
from farm.evidence.keys import load_signer
from farm.evidence.provenance import RenderInputs, RenderProvenance, action_key
from farm.store.db import create_farm_engine, make_session_factory
from farm.store.objects import LocalObjectStore
from farm.store.outputs import store_output

url, objects, key, snapshot, digest = sys.argv[1:6]
inputs = RenderInputs("crash-core", digest, digest, digest, "")
session = make_session_factory(create_farm_engine(url))()
store_output(
    session, LocalObjectStore(Path(objects)), load_signer(Path(key)),
    manifests=b"kind: Crash\\n", action_key=action_key(inputs),
    provenance=RenderProvenance(inputs, "crash", "prod", snapshot, ""),
)
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
    orphans = stored - {kept.output_digest, kept.envelope_digest}
    assert sha256_hex(b"kind: Crash\n") in orphans and len(orphans) == 2

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
    for digest in (first.output_digest, first.envelope_digest, second.envelope_digest):
        assert cli_fleet.objects.exists(digest)


def test_sweep_counts_every_blob_reference_column(fleet: Fleet) -> None:
    with fleet.sessions() as session:
        references = audit.referenced_blobs(session)
    assert references == {}
    _, _, record = fleet.render(MANIFESTS)
    with fleet.sessions() as session:
        references = audit.referenced_blobs(session)
    assert references == {
        record.output_digest: ["render_outputs.digest"],
        record.envelope_digest: ["evidence_records.envelope_digest"],
    }


def test_bad_grace_period_is_refused(storage_cli: typer.Typer, farm_env: dict[str, str]) -> None:
    result = CliRunner().invoke(storage_cli, ["gc", "--grace-seconds", "-5"], env=farm_env)
    assert result.exit_code == 2 and "grace-seconds" in result.output


def test_gc_names_an_unusable_database(storage_cli: typer.Typer, tmp_path: Path) -> None:
    env = {"FARM_HOME": str(tmp_path), "FARM_DATABASE_URL": "mysql://nobody@127.0.0.1/farm"}
    result = CliRunner().invoke(storage_cli, ["gc", "--dry-run"], env=env)
    assert result.exit_code == 1 and "FARM_DATABASE_URL" in result.output


def test_a_retry_restores_a_lost_output_blob(fleet: Fleet) -> None:
    _, job_id, first = fleet.render(MANIFESTS)
    fleet.objects.delete(first.output_digest)
    inputs = make_inputs()
    with fleet.sessions.begin() as session:
        again = store_output(
            session,
            fleet.objects,
            fleet.signer,
            manifests=MANIFESTS,
            action_key=action_key(inputs),
            provenance=fleet.provenance(job_id, inputs),
        )
    assert again.reused
    assert fleet.objects.get(first.output_digest) == MANIFESTS


def test_concurrent_twins_of_one_action_key_leave_one_evidence_record(fleet: Fleet) -> None:
    """Two jobs of one action key store at once; the second waits on the first's uncommitted cache
    entry (PostgreSQL) or on the write lock (SQLite). Either way it ends up reusing the first's
    record and keeps no evidence record of its own."""
    inputs = make_inputs()
    run_id = fleet.new_run()
    first_job = fleet.new_job(run_id, inputs)
    second_job = fleet.new_job(run_id, inputs, profile="prod-twin")
    results: dict[str, object] = {}

    def second() -> None:
        try:
            with fleet.sessions.begin() as session:
                results["record"] = store_output(
                    session,
                    fleet.objects,
                    fleet.signer,
                    manifests=MANIFESTS,
                    action_key=action_key(inputs),
                    provenance=fleet.provenance(second_job, inputs, profile="prod-twin"),
                )
        except BaseException as error:  # reported to the main thread
            results["error"] = error

    with fleet.sessions.begin() as session:
        first = store_output(
            session,
            fleet.objects,
            fleet.signer,
            manifests=MANIFESTS,
            action_key=action_key(inputs),
            provenance=fleet.provenance(first_job, inputs),
        )
        twin = threading.Thread(target=second)
        twin.start()
        twin.join(timeout=0.5)
        assert twin.is_alive()  # blocked behind this uncommitted transaction
    twin.join(timeout=30)
    assert "error" not in results, results.get("error")
    again = results["record"]
    assert isinstance(again, OutputRecord) and again.reused
    assert (again.output_digest, again.evidence_id, again.envelope_digest) == (
        first.output_digest,
        first.evidence_id,
        first.envelope_digest,
    )
    assert (_count(fleet.sessions, EvidenceRecord), _count(fleet.sessions, ActionCacheEntry)) == (1, 1)


def test_a_pre_signed_output_whose_key_got_cached_meanwhile_reuses_the_entry(fleet: Fleet) -> None:
    """A worker signs and writes before its transaction; a twin's entry committed in between wins."""
    inputs = make_inputs()
    run_id = fleet.new_run()
    twin_job = fleet.new_job(run_id, inputs, profile="prod-twin")
    signed = sign_and_put(
        fleet.objects, fleet.signer, manifests=MANIFESTS, provenance=fleet.provenance(twin_job, inputs)
    )
    _, _, first = fleet.render(MANIFESTS)
    with fleet.sessions.begin() as session:
        again = store_output(
            session,
            fleet.objects,
            fleet.signer,
            manifests=MANIFESTS,
            action_key=action_key(inputs),
            provenance=fleet.provenance(twin_job, inputs),
            signed=signed,
        )
    assert again.reused and (again.evidence_id, again.envelope_digest) == (
        first.evidence_id,
        first.envelope_digest,
    )
    assert (_count(fleet.sessions, EvidenceRecord), _count(fleet.sessions, ActionCacheEntry)) == (1, 1)
    with pytest.raises(NondeterministicOutputError), fleet.sessions.begin() as session:
        store_output(
            session,
            fleet.objects,
            fleet.signer,
            manifests=MANIFESTS + b"# drift\n",
            action_key=action_key(inputs),
            provenance=fleet.provenance(twin_job, inputs),
            signed=sign_and_put(
                fleet.objects,
                fleet.signer,
                manifests=MANIFESTS + b"# drift\n",
                provenance=fleet.provenance(twin_job, inputs),
            ),
        )
    assert _count(fleet.sessions, RenderOutput) == 1
