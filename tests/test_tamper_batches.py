"""A job's outputs share one signed batch statement, and each output still verifies alone.

The batch envelope is stored once; every output's evidence record names it and its subject. Each
tamper specific to batches is caught by ``farm verify``'s checks of one output: a subject swapped
between two records of one batch, a record pointed at another batch's envelope, an envelope with a
subject removed or added (its signature breaks), the envelope's bytes replaced, two targets of one
batch pointed at each other's output. Both databases.
"""

from __future__ import annotations

import base64
import json

import pytest
import typer
from conftest_store import Fleet, tamper_evidence
from sqlalchemy import func, insert, select, update
from typer.testing import CliRunner

from farm.evidence.batch import subject_reference
from farm.evidence.keys import TrustedSigners
from farm.evidence.verify import Failure
from farm.identity.canonical import canonical_json, sha256_hex
from farm.store.audit import check_every_output, verify_output
from farm.store.fsck import dangling_references
from farm.store.models import EvidenceEnvelope, EvidenceRecord, RenderTarget, Signer, utcnow

OUTPUTS = {
    "prod": b"kind: ConfigMap\nmetadata:\n  name: web-prod\n",
    "staging": b"kind: ConfigMap\nmetadata:\n  name: web-staging\n",
    "dev": b"kind: ConfigMap\nmetadata:\n  name: web-dev\n",
}


def failures_of(fleet: Fleet, trusted: TrustedSigners) -> dict[str, list[Failure]]:
    with fleet.sessions() as session:
        return {
            digest: found for digest, found in check_every_output(session, fleet.objects, trusted) if found
        }


def codes(failures: list[Failure]) -> set[str]:
    return {failure.code for failure in failures}


def records_of(fleet: Fleet, envelope_digest: str) -> list[EvidenceRecord]:
    with fleet.sessions() as session:
        query = select(EvidenceRecord).where(EvidenceRecord.batch_envelope == envelope_digest)
        return list(session.scalars(query.order_by(EvidenceRecord.subject_index)))


def test_a_batch_stores_its_envelope_once_and_each_output_verifies_alone(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    _, target_ids, signed = fleet.render_batch("web", OUTPUTS)
    envelope = signed[0].envelope_digest
    assert {output.envelope_digest for output in signed} == {envelope}
    with fleet.sessions() as session:
        assert session.scalar(select(func.count()).select_from(EvidenceEnvelope)) == 1
        records = session.scalars(select(EvidenceRecord).order_by(EvidenceRecord.subject_index)).all()
        assert [record.subject_index for record in records] == [0, 1, 2]
        assert [record.envelope for record in records] == [None, None, None]
        assert [record.envelope_digest for record in records] == [
            subject_reference(envelope, i) for i in range(3)
        ]
        assert [record.target_id for record in records] == target_ids
        for output in signed:
            assert verify_output(session, fleet.objects, trusted, output.output_digest) == []
    assert failures_of(fleet, trusted) == {}


def test_rows_signed_one_output_per_statement_before_batches_still_verify_beside_a_batch(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    _, _, single = fleet.render(b"kind: ConfigMap\nmetadata:\n  name: api\n", application="api")
    fleet.render_batch("web", OUTPUTS)
    with fleet.sessions() as session:
        record = session.get(EvidenceRecord, single.evidence_id)
        assert record is not None and record.envelope is not None and record.batch_envelope is None
    assert failures_of(fleet, trusted) == {}


def test_a_record_holding_its_own_envelope_whose_subject_name_was_changed_fails_naming_it(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    _, _, single = fleet.render(b"kind: ConfigMap\nmetadata:\n  name: api\n", application="api")
    tamper_evidence(
        fleet.sessions,
        "UPDATE evidence_records SET subject_name = 'render:web/prod' WHERE id = :id",
        {"id": single.evidence_id},
    )
    [failure] = failures_of(fleet, trusted)[single.output_digest]
    assert failure.code == "evidence.record_mismatch"
    assert "subject name (row 'render:web/prod', signed 'render:api/prod')" in failure.message


def test_a_subject_swapped_between_two_records_of_one_batch_fails_both_outputs(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    _, _, signed = fleet.render_batch("web", OUTPUTS)
    first, second = records_of(fleet, signed[0].envelope_digest)[:2]
    # the whole reference moves (index and key), so only the subject's digest and name tell
    for record, other in ((first, second), (second, first)):
        tamper_evidence(
            fleet.sessions,
            "UPDATE evidence_records SET subject_index = :index, envelope_digest = :key WHERE id = :id",
            {"index": other.subject_index + 10, "key": f"{record.id:064x}", "id": record.id},
        )
    for record, other in ((first, second), (second, first)):
        tamper_evidence(
            fleet.sessions,
            "UPDATE evidence_records SET subject_index = :index, envelope_digest = :key WHERE id = :id",
            {"index": other.subject_index, "key": other.envelope_digest, "id": record.id},
        )
    found = failures_of(fleet, trusted)
    for record, other in ((first, second), (second, first)):
        messages = [str(failure) for failure in found[record.subject_digest]]
        assert any(
            f"statement.subject_mismatch: output {record.subject_digest}, evidence {record.id}" in message
            and f"subject {other.subject_index} of the batch statement is {other.subject_digest}" in message
            for message in messages
        ), messages


def test_a_record_pointed_at_another_batchs_envelope_fails_its_output(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    _, _, web = fleet.render_batch("web", OUTPUTS)
    _, _, api = fleet.render_batch("api", {"prod": b"kind: ConfigMap\nmetadata:\n  name: api-prod\n"})
    victim = records_of(fleet, web[0].envelope_digest)[0]
    other = api[0].envelope_digest
    # the database refuses a second record of api's subject 0: an attacker drops that index first
    tamper_evidence(fleet.sessions, "DROP INDEX uq_evidence_records_batch_envelope_subject_index", {})
    try:
        tamper_evidence(
            fleet.sessions,
            "UPDATE evidence_records SET batch_envelope = :batch, envelope_digest = :key WHERE id = :id",
            {"batch": other, "key": "d" * 64, "id": victim.id},  # subject 0's reference is api's record's
        )
        found = failures_of(fleet, trusted)
        assert set(found) == {victim.subject_digest}
        assert codes(found[victim.subject_digest]) >= {
            "statement.subject_mismatch",
            "evidence.reference_mismatch",
        }
    finally:  # PostgreSQL's database is the session's: the tests after this one need the index
        tamper_evidence(fleet.sessions, "DELETE FROM evidence_records WHERE id = :id", {"id": victim.id})
        tamper_evidence(
            fleet.sessions,
            "CREATE UNIQUE INDEX uq_evidence_records_batch_envelope_subject_index"
            " ON evidence_records (batch_envelope, subject_index)",
            {},
        )


def _forge(envelope: bytes, change: str) -> bytes:
    """The envelope with one subject (and its render) removed or a forged one added, its
    signature kept."""
    document = json.loads(envelope)
    statement = json.loads(base64.b64decode(document["payload"]))
    renders = statement["predicate"]["buildDefinition"]["externalParameters"]["renders"]
    if change == "remove":
        del statement["subject"][-1], renders[-1]
    else:
        statement["subject"].append({"name": "render:web/forged", "digest": {"sha256": "f" * 64}})
        renders.append({**renders[0], "clusterProfile": "forged"})
    document["payload"] = base64.b64encode(canonical_json(statement)).decode()
    return canonical_json(document)


def test_a_batch_envelope_with_a_subject_removed_or_added_fails_its_signature(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    for change in ("remove", "add"):
        _, _, signed = fleet.render_batch("web", OUTPUTS)
        forged = _forge(signed[0].envelope, change)
        forged_digest = sha256_hex(forged)
        with fleet.sessions.begin() as session:
            session.add(
                EvidenceEnvelope(digest=forged_digest, envelope=forged, signer_keyid=fleet.signer.keyid)
            )
        for record in records_of(fleet, signed[0].envelope_digest)[:2]:
            tamper_evidence(
                fleet.sessions,
                "UPDATE evidence_records SET batch_envelope = :batch, envelope_digest = :key WHERE id = :id",
                {
                    "batch": forged_digest,
                    "key": subject_reference(forged_digest, record.subject_index),
                    "id": record.id,
                },
            )
        found = failures_of(fleet, trusted)
        assert set(found) == {signed[0].output_digest, signed[1].output_digest}, change
        for failures in found.values():
            assert "signature.invalid" in codes(failures), (change, failures)
        tamper_evidence(
            fleet.sessions, "DELETE FROM evidence_envelopes WHERE digest = :d", {"d": forged_digest}
        )
        tamper_evidence(fleet.sessions, "DELETE FROM action_cache", {})
        tamper_evidence(fleet.sessions, "DELETE FROM evidence_records", {})


def test_a_batch_envelope_whose_bytes_were_replaced_fails_every_output_as_corrupt(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    _, _, signed = fleet.render_batch("web", OUTPUTS)
    tamper_evidence(
        fleet.sessions,
        "UPDATE evidence_envelopes SET envelope = :data WHERE digest = :d",
        {"data": _forge(signed[0].envelope, "remove"), "d": signed[0].envelope_digest},
    )
    found = failures_of(fleet, trusted)
    assert set(found) == {output.output_digest for output in signed}
    for failures in found.values():
        assert codes(failures) == {"envelope.corrupt"}


def test_a_batch_record_whose_key_is_not_its_subject_reference_fails(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    _, _, signed = fleet.render_batch("web", OUTPUTS)
    victim = records_of(fleet, signed[0].envelope_digest)[1]
    tamper_evidence(
        fleet.sessions,
        "UPDATE evidence_records SET envelope_digest = :key WHERE id = :id",
        {"key": "e" * 64, "id": victim.id},
    )
    assert codes(failures_of(fleet, trusted)[victim.subject_digest]) == {"evidence.reference_mismatch"}


def test_two_records_of_one_batch_whose_target_ids_were_swapped_each_fail_naming_the_target_id(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    _, _, signed = fleet.render_batch("web", OUTPUTS)
    first, second = records_of(fleet, signed[0].envelope_digest)[:2]
    for record, other in ((first, second), (second, first)):
        tamper_evidence(
            fleet.sessions,
            "UPDATE evidence_records SET target_id = :other WHERE id = :id",
            {"other": other.target_id, "id": record.id},
        )
    found = failures_of(fleet, trusted)
    for record, other in ((first, second), (second, first)):
        assert codes(found[record.subject_digest]) == {"evidence.record_mismatch"}
        [failure] = found[record.subject_digest]
        assert f"evidence {record.id} (subject {record.subject_index} of envelope" in failure.target
        assert f"target id (row {other.target_id!r}, signed {record.target_id!r})" in failure.message


@pytest.mark.parametrize(
    ("column", "value", "named"),
    [
        ("cluster_profile", "staging", "cluster (row 'staging', signed 'prod')"),
        ("selection", "tier=gold", "selection (row 'tier=gold', signed '')"),
        ("signer_keyid", "f" * 64, f"signer (row {'f' * 64!r}, signed "),
        ("statement_digest", "0" * 64, f"statement digest (row {'0' * 64!r}, signed "),
        ("predicate_type", "https://example.com/other", "predicate type (row 'https://example.com/other'"),
    ],
)
def test_an_evidence_record_restating_its_statement_otherwise_fails_naming_the_column(
    fleet: Fleet, trusted: TrustedSigners, column: str, value: str, named: str
) -> None:
    _, _, signed = fleet.render_batch("web", OUTPUTS)
    victim = records_of(fleet, signed[0].envelope_digest)[0]
    tamper_evidence(
        fleet.sessions,
        f"UPDATE evidence_records SET {column} = :value WHERE id = :id",
        {"value": value, "id": victim.id},
    )
    found = failures_of(fleet, trusted)
    assert list(found) == [victim.subject_digest]
    [failure] = found[victim.subject_digest]
    assert failure.code == "evidence.record_mismatch"
    assert named in failure.message, failure.message


def test_a_batch_envelope_row_naming_another_signer_than_its_signature_fails_verify_naming_both(
    cli_fleet: Fleet, farm_env: dict[str, str], storage_cli: typer.Typer
) -> None:
    _, _, signed = cli_fleet.render_batch("web", OUTPUTS)
    envelope = signed[0].envelope_digest
    other = "f" * 64
    with cli_fleet.sessions.begin() as session:
        session.execute(
            insert(Signer).values(keyid=other, public_key_pem="", trusted=False, first_seen_at=utcnow())
        )
    tamper_evidence(
        cli_fleet.sessions,
        "UPDATE evidence_envelopes SET signer_keyid = :other WHERE digest = :digest",
        {"other": other, "digest": envelope},
    )
    result = CliRunner().invoke(storage_cli, ["verify", "--all"], env=farm_env)
    assert result.exit_code == 1, result.output
    assert (
        f"FAIL envelope.signer_mismatch: evidence envelope {envelope}: the row names signer {other};"
        f" the envelope is signed by {cli_fleet.signer.keyid}" in result.output
    )
    assert "1 evidence envelope(s) checked" in result.output


def test_two_targets_of_one_batch_pointed_at_each_others_output_fail_naming_both(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    _, target_ids, signed = fleet.render_batch("web", OUTPUTS)
    with fleet.sessions.begin() as session:
        for target_id, output in ((target_ids[0], signed[1]), (target_ids[1], signed[0])):
            session.execute(
                update(RenderTarget)
                .where(RenderTarget.id == target_id)
                .values(output_digest=output.output_digest)
            )
    found = failures_of(fleet, trusted)
    assert set(found) == {signed[0].output_digest, signed[1].output_digest}
    for target_id, output in ((target_ids[0], signed[1]), (target_ids[1], signed[0])):
        assert any(
            failure.code == "binding.target_mismatch" and f"({target_id})" in failure.message
            for failure in found[output.output_digest]
        )


def test_two_targets_of_one_batch_with_the_same_output_each_have_their_subject(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    same = b"kind: ConfigMap\nmetadata:\n  name: same\n"
    _, _, signed = fleet.render_batch("web", {"prod": same, "staging": same})
    assert [output.subject_index for output in signed] == [0, 1]
    records = records_of(fleet, signed[0].envelope_digest)
    assert [record.subject_name for record in records] == ["render:web/prod", "render:web/staging"]
    assert failures_of(fleet, trusted) == {}


def test_a_deleted_batch_envelope_fails_each_of_its_outputs_as_missing_and_each_record_as_dangling(
    fleet: Fleet, trusted: TrustedSigners
) -> None:
    _, _, signed = fleet.render_batch("web", OUTPUTS)
    envelope = signed[0].envelope_digest
    tamper_evidence(fleet.sessions, "DELETE FROM evidence_envelopes WHERE digest = :d", {"d": envelope})
    found = failures_of(fleet, trusted)
    assert set(found) == {output.output_digest for output in signed}
    for failures in found.values():
        assert codes(failures) == {"envelope.missing"}
    with fleet.sessions() as session:
        dangling = [failure for _, failure in dangling_references(session) if failure is not None]
    assert len(dangling) == len(signed)
    assert all(f"batch_envelope {envelope} names no evidence_envelopes row" in f.message for f in dangling)
