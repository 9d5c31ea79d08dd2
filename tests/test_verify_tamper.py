"""``farm verify`` detects every kind of tampering, names what failed, and exits 1."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from conftest_store import Fleet, OutputRecord, S3Bucket, make_inputs
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from stored_blobs import overwrite_blob, stored_bytes
from typer.testing import CliRunner, Result

from farm.evidence.dsse import sign_envelope
from farm.evidence.keys import signer_from_private_key
from farm.evidence.provenance import RenderProvenance, build_render_provenance
from farm.identity.canonical import sha256_hex
from farm.store.models import EvidenceRecord, utcnow
from farm.store.objects import LocalObjectStore, S3ObjectStore

MANIFESTS = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  key: value\n"


def _verify(app: typer.Typer, env: dict[str, str], *arguments: str) -> Result:
    return CliRunner().invoke(app, ["verify", *arguments], env=env)


def _objects(fleet: Fleet) -> Path:
    assert isinstance(fleet.objects, LocalObjectStore)
    return fleet.objects.root


def _rendered(fleet: Fleet) -> tuple[str, OutputRecord]:
    run_id, _, record = fleet.render(MANIFESTS)
    return run_id, record


def test_untouched_outputs_verify(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    run_id, record = _rendered(cli_fleet)
    for arguments in (["--all"], ["--run", run_id], ["--output", record.output_digest]):
        result = _verify(storage_cli, farm_env, *arguments)
        assert result.exit_code == 0, result.output
        assert f"ok   output {record.output_digest}" in result.output
        assert "1 output(s) checked, 0 failure(s)" in result.output


def test_one_flipped_byte_in_a_stored_output(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    run_id, record = _rendered(cli_fleet)
    data = bytearray(stored_bytes(_objects(cli_fleet), record.output_digest))
    data[10] ^= 0x01
    overwrite_blob(_objects(cli_fleet), record.output_digest, bytes(data))
    result = _verify(storage_cli, farm_env, "--run", run_id)
    assert result.exit_code == 1
    assert (
        f"FAIL blob.corrupt: output {record.output_digest}: blob sha256/{record.output_digest}"
        in result.output
    )
    assert "ok   output" not in result.output


def test_a_truncated_blob(cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer) -> None:
    _, record = _rendered(cli_fleet)
    stored = stored_bytes(_objects(cli_fleet), record.output_digest)
    overwrite_blob(_objects(cli_fleet), record.output_digest, stored[:20])
    result = _verify(storage_cli, farm_env, "--all")
    assert result.exit_code == 1
    assert f"FAIL blob.corrupt: output {record.output_digest}" in result.output
    assert "its 20 bytes hash to" in result.output


def test_a_deleted_blob(cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer) -> None:
    _, record = _rendered(cli_fleet)
    cli_fleet.objects.delete(record.output_digest)
    result = _verify(storage_cli, farm_env, "--output", record.output_digest)
    assert result.exit_code == 1
    assert (
        f"FAIL blob.missing: output {record.output_digest}: blob sha256/{record.output_digest} is missing"
        in result.output
    )


def test_a_replaced_envelope(cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer) -> None:
    _, record = _rendered(cli_fleet)
    _, _, other = cli_fleet.render(b"kind: Other\n", application="api")
    replacement = cli_fleet.envelope(other.evidence_id)  # validly signed, but for other bytes
    cli_fleet.overwrite_envelope(record.evidence_id, replacement)
    result = _verify(storage_cli, farm_env, "--all")
    assert result.exit_code == 1
    assert (
        f"FAIL envelope.corrupt: output {record.output_digest}, evidence {record.evidence_id}"
        in result.output
    )
    assert (
        f"sha256/{record.envelope_digest} in the row of evidence record {record.evidence_id}" in result.output
    )
    assert f"hash to sha256 {other.envelope_digest}" in result.output
    assert f"ok   output {other.output_digest}" in result.output


def test_an_envelope_blob_of_a_record_written_before_envelopes_moved_into_rows_is_still_checked(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    _, record = _rendered(cli_fleet)
    envelope = cli_fleet.envelope(record.evidence_id)
    # the same evidence as a row of revision 0009 wrote it: no envelope in the row, a blob instead
    cli_fleet.overwrite_envelope(record.evidence_id, None)
    assert cli_fleet.objects.put(envelope) == record.envelope_digest
    assert _verify(storage_cli, farm_env, "--all").exit_code == 0
    overwrite_blob(_objects(cli_fleet), record.envelope_digest, b"{}")
    result = _verify(storage_cli, farm_env, "--all")
    assert result.exit_code == 1
    assert f"FAIL envelope.corrupt: output {record.output_digest}" in result.output
    assert f"blob sha256/{record.envelope_digest} in" in result.output
    cli_fleet.objects.delete(record.envelope_digest)
    result = _verify(storage_cli, farm_env, "--all")
    assert f"FAIL envelope.missing: output {record.output_digest}" in result.output


def _forge_record(
    fleet: Fleet, claimed_subject: str, envelope_digest: str, statement_subject: str, keyid: str
) -> None:
    with fleet.sessions.begin() as session:
        session.add(
            EvidenceRecord(
                envelope_digest=envelope_digest,
                statement_digest=sha256_hex(envelope_digest.encode()),
                subject_name="render:web/prod",
                subject_digest=claimed_subject,
                predicate_type="https://slsa.dev/provenance/v1",
                signer_keyid=keyid,
                action_key=None,
                created_at=utcnow(),
            )
        )


def test_a_statement_whose_subject_does_not_match(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    _, record = _rendered(cli_fleet)
    elsewhere = sha256_hex(b"some other output")
    provenance = RenderProvenance(make_inputs(), "web", "prod", cli_fleet.snapshot, "")
    statement = build_render_provenance(elsewhere, provenance)
    envelope_digest = cli_fleet.objects.put(sign_envelope(statement.to_bytes(), cli_fleet.signer).to_bytes())
    _forge_record(cli_fleet, record.output_digest, envelope_digest, elsewhere, cli_fleet.signer.keyid)
    result = _verify(storage_cli, farm_env, "--output", record.output_digest)
    assert result.exit_code == 1
    assert "FAIL statement.subject_mismatch" in result.output
    assert f"statement subject ['{elsewhere}'] is not {record.output_digest}" in result.output


def test_a_signature_by_an_untrusted_key(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    stranger = signer_from_private_key(Ed25519PrivateKey.generate())
    run_id, _, record = cli_fleet.render(MANIFESTS, signer=stranger)
    result = _verify(storage_cli, farm_env, "--run", run_id)
    assert result.exit_code == 1
    assert f"FAIL signature.untrusted: output {record.output_digest}" in result.output
    assert f"signed only by untrusted key(s) {stranger.keyid}" in result.output


def test_trusting_a_key_makes_its_signatures_count(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer, tmp_path: Path
) -> None:
    stranger = signer_from_private_key(Ed25519PrivateKey.generate())
    cli_fleet.render(MANIFESTS, signer=stranger)
    assert _verify(storage_cli, farm_env, "--all").exit_code == 1
    pub = tmp_path / "stranger.pub"
    pub.write_text(stranger.public_key_pem)
    assert CliRunner().invoke(storage_cli, ["keys", "trust", str(pub)], env=farm_env).exit_code == 0
    result = _verify(storage_cli, farm_env, "--all")
    assert result.exit_code == 0, result.output


def test_every_failure_is_listed_not_just_the_first(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    _, first = _rendered(cli_fleet)
    _, _, second = cli_fleet.render(b"kind: Second\n", application="api")
    cli_fleet.objects.delete(first.output_digest)
    cli_fleet.overwrite_envelope(second.evidence_id, b"{}")
    result = _verify(storage_cli, farm_env, "--all")
    assert result.exit_code == 1
    assert f"FAIL blob.missing: output {first.output_digest}" in result.output
    assert f"FAIL envelope.corrupt: output {second.output_digest}" in result.output
    assert "2 output(s) checked, 2 failure(s)" in result.output


def test_unknown_run_and_output_are_failures(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    result = _verify(storage_cli, farm_env, "--run", "no-such-run")
    assert result.exit_code == 1 and "Error: --run: run no-such-run does not exist" in result.output
    digest = sha256_hex(b"never rendered")
    result = _verify(storage_cli, farm_env, "--output", digest)
    assert result.exit_code == 1 and f"FAIL output.unknown: output {digest}" in result.output


@pytest.mark.parametrize("arguments", [[], ["--all", "--run", "x"]])
def test_exactly_one_selector_is_required(
    storage_cli: typer.Typer, farm_env: dict[str, str], arguments: list[str]
) -> None:
    result = _verify(storage_cli, farm_env, *arguments)
    assert result.exit_code == 1 and "exactly one of --run" in result.output


def test_a_bad_trusted_signers_file_is_named(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    _rendered(cli_fleet)
    Path(farm_env["FARM_TRUSTED_SIGNERS"]).write_text("garbage\n")
    result = _verify(storage_cli, farm_env, "--all")
    assert result.exit_code == 1 and farm_env["FARM_TRUSTED_SIGNERS"] in result.output


def test_tampering_on_s3_is_detected(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer, s3_bucket: S3Bucket
) -> None:
    objects = S3ObjectStore(s3_bucket.client, s3_bucket.name, "farm")
    fleet = Fleet(cli_fleet.sessions, objects, cli_fleet.signer)
    _, _, record = fleet.render(MANIFESTS)
    env = {
        **farm_env,
        "FARM_OBJECT_STORE": f"s3://{s3_bucket.name}/farm",
        "FARM_S3_ENDPOINT_URL": s3_bucket.endpoint,
    }
    assert _verify(storage_cli, env, "--all").exit_code == 0
    s3_bucket.client.put_object(  # type: ignore[attr-defined]
        Bucket=s3_bucket.name, Key=f"farm/sha256/{record.output_digest}", Body=MANIFESTS[:-1]
    )
    result = _verify(storage_cli, env, "--all")
    assert result.exit_code == 1
    assert f"FAIL blob.corrupt: output {record.output_digest}" in result.output
