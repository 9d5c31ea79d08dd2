"""Tampering with any table that holds a digest or a state, or with a blob a row names, fails
``farm verify --all`` naming the row and the check; a forged cached failure is never served.

The good home is built once per module: a fleet run, a qualification, a run after one
application changed and another broke (a signed cached failure), a no-change run (the failure
served from the cache) and an audit. Each case tampers with a fresh copy of it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fleet.conftest import fresh_render_children, make_catalog  # noqa: F401 - the fixture
from sqlalchemy.orm import Session, sessionmaker
from stored_blobs import flip_a_byte, remove_blob, stored_bytes
from typer.testing import CliRunner, Result

from farm.cli import app as cli
from farm.store.fsck import dangling_references
from farm.store.models import Base

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def good_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("good-store")
    catalog = make_catalog(root / "catalog", apps=3, clusters=("cluster-a", "cluster-b"))
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith("FARM_"):
                patch.delenv(name)
        patch.setenv("FARM_HOME", str(root / "home"))
        _farm("run", str(catalog.root), "--processes", "1")
        _farm("qualify", str(catalog.root), "--executor", "local")
        catalog.write_app("app-1", image="ghcr.io/example/app:v2.0.0")
        catalog.break_app("app-2")
        _farm("run", str(catalog.root), "--processes", "1", ok=(0, 1))
        _farm("run", str(catalog.root), "--processes", "1", ok=(0, 1))  # app-2 from the failure cache
        _farm("audit", "--all")
    (root / "catalog-path").write_text(str(catalog.root))
    yield root / "home"


def _farm(*arguments: str, ok: tuple[int, ...] = (0,)) -> Result:
    result = CliRunner().invoke(cli, list(arguments))
    assert result.exit_code in ok, result.output
    return result


def _rotated_key() -> str:
    """``farm keys rotate``: the new signing key's id (the old one stays trusted)."""
    return _farm("keys", "rotate").output.split("signing key: ", 1)[1].split()[0]


@pytest.fixture
def home(good_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(good_home, copy)
    for name in list(os.environ):
        if name.startswith("FARM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FARM_HOME", str(copy))
    return copy


def verify_all(*extra: str) -> Result:
    return CliRunner().invoke(cli, ["verify", "--all", *extra])


def database(home: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(home / "farm.db")
    connection.row_factory = sqlite3.Row
    return connection


def objects(home: Path) -> Path:
    return home / "objects"


def assert_fails(result: Result, *expected: str) -> None:
    assert result.exit_code == 1, result.output
    for text in expected:
        assert text in result.output, result.output


def test_the_untouched_home_after_runs_a_qualification_and_an_audit_verifies_clean(home: Path) -> None:
    result = verify_all()
    assert result.exit_code == 0, result.output
    assert ", 0 failure(s)" in result.output
    for kind in ("failure cache row", "audit record", "qualification statement", "qualification state"):
        assert f" {kind}(s) checked" in result.output
    for kind in ("document", "request pack", "snapshot"):
        assert f" blob: {kind}(s) checked" in result.output
    report = json.loads(verify_all("--json").output)
    assert report["ok"] is True and report["failures"] == []
    assert report["checked"]["failure cache row"] >= 2 and report["checked"]["target row"] > 0


def test_a_forged_failure_row_is_ignored_by_the_next_run_and_reported_by_verify(
    home: Path, good_home: Path
) -> None:
    with database(home) as connection:
        victim = connection.execute(
            "SELECT * FROM render_targets WHERE application = 'app-0' ORDER BY id DESC LIMIT 1"
        ).fetchone()
        connection.execute("DELETE FROM action_cache WHERE action_key = ?", (victim["action_key"],))
        connection.execute(
            "INSERT INTO failed_actions (action_key, error_code, error_message, created_at)"
            " VALUES (?, 'document.invalid', 'forged', '2026-01-01 00:00:00')",
            (victim["action_key"],),
        )
    assert_fails(
        verify_all(),
        f"FAIL failure.unsigned: failure cache row {victim['action_key']}: no signed statement",
    )
    catalog = (good_home.parent / "catalog-path").read_text()
    _farm("run", catalog, "--processes", "1", ok=(0, 1))
    with database(home) as connection:
        rendered = connection.execute(
            "SELECT state, error_code FROM render_targets WHERE action_key = ? ORDER BY id DESC LIMIT 1",
            (victim["action_key"],),
        ).fetchone()
    assert (rendered["state"], rendered["error_code"]) == ("succeeded", None)  # rendered, not served


def test_a_cached_failure_whose_code_was_changed_is_not_served_and_fails_verify(
    home: Path, good_home: Path
) -> None:
    with database(home) as connection:
        row = connection.execute("SELECT * FROM failed_actions ORDER BY action_key LIMIT 1").fetchone()
        connection.execute(
            "UPDATE failed_actions SET error_code = 'policy.refused' WHERE action_key = ?",
            (row["action_key"],),
        )
    assert_fails(
        verify_all(),
        f"FAIL failure.mismatch: failure cache row {row['action_key']}: the signed statement differs in error code",
    )
    catalog = (good_home.parent / "catalog-path").read_text()
    _farm("run", catalog, "--processes", "1", ok=(0, 1))
    with database(home) as connection:
        latest = connection.execute(
            "SELECT state, error_code FROM render_targets WHERE action_key = ? ORDER BY id DESC LIMIT 1",
            (row["action_key"],),
        ).fetchone()
        again = connection.execute(
            "SELECT error_code FROM failed_actions WHERE action_key = ?", (row["action_key"],)
        ).fetchone()
    assert (latest["state"], latest["error_code"]) == ("failed", row["error_code"])  # rendered again
    assert again["error_code"] == row["error_code"]  # and the signed failure recorded anew


def test_a_cached_failure_message_changed_fails_verify(home: Path) -> None:
    with database(home) as connection:
        row = connection.execute("SELECT * FROM failed_actions ORDER BY action_key LIMIT 1").fetchone()
        connection.execute(
            "UPDATE failed_actions SET error_message = 'all is well' WHERE action_key = ?",
            (row["action_key"],),
        )
    assert_fails(
        verify_all(), f"FAIL failure.mismatch: failure cache row {row['action_key']}", "message digest"
    )


def test_an_audit_row_restating_its_record_otherwise_fails_verify(home: Path) -> None:
    with database(home) as connection:
        record = connection.execute("SELECT * FROM audit_records").fetchone()
        connection.execute("UPDATE audit_records SET drifted = drifted + 3 WHERE id = ?", (record["id"],))
    assert_fails(
        verify_all(), f"FAIL audit.record_mismatch: audit {record['id']}", "drifted (row 3, signed 0)"
    )


def test_an_audit_row_naming_another_trusted_signer_than_its_records_fails_verify(home: Path) -> None:
    new_key = _rotated_key()
    with database(home) as connection:
        record = connection.execute("SELECT * FROM audit_records").fetchone()
        connection.execute("UPDATE audit_records SET signer_keyid = ? WHERE id = ?", (new_key, record["id"]))
    assert_fails(
        verify_all(),
        f"FAIL audit.record_mismatch: audit {record['id']}",
        f"signer (row {new_key!r}, signed {record['signer_keyid']!r})",
    )


def test_a_qualification_state_not_derived_from_its_records_fails_verify(home: Path) -> None:
    with database(home) as connection:
        subject = connection.execute(
            "SELECT * FROM qualification_subjects WHERE state = 'qualified' LIMIT 1"
        ).fetchone()
        connection.execute(
            "UPDATE qualification_subjects SET state = 'failed' WHERE id = ?", (subject["id"],)
        )
    assert_fails(
        verify_all(),
        f"FAIL qualification.state_mismatch: qualification subject {subject['cluster_profile']}:",
        "the row says 'failed'",
    )


def test_a_qualification_record_whose_descriptor_identity_is_not_the_signed_one_fails_verify(
    home: Path,
) -> None:
    # the state is derived from the row's identity: a profiled subject's evidence that drifted
    # would be current again with today's identity written into its row
    with database(home) as connection:
        evidence = connection.execute("SELECT * FROM qualification_evidence ORDER BY id LIMIT 1").fetchone()
        connection.execute(
            "UPDATE qualification_evidence SET descriptor_identity = ? WHERE id = ?",
            ("a" * 64, evidence["id"]),
        )
    assert_fails(
        verify_all(),
        f"FAIL qualification.record_mismatch: qualification cluster-a:none #{evidence['id']}: the row's"
        f" descriptor identity {'a' * 64} is not the signed {evidence['descriptor_identity']}",
    )


def test_a_qualification_record_whose_core_version_is_not_its_outputs_fails_verify(home: Path) -> None:
    # the state is derived from the row's core version: an older core's evidence would be current
    # again with today's core written into its row (here the other way, and its state to match)
    with database(home) as connection:
        evidence = connection.execute("SELECT * FROM qualification_evidence ORDER BY id LIMIT 1").fetchone()
        connection.execute(
            "UPDATE qualification_evidence SET core_version = '9.9.9' WHERE id = ?", (evidence["id"],)
        )
        connection.execute(
            "UPDATE qualification_subjects SET state = 'stale', reason = 'renderer_changed' WHERE id = ?",
            (evidence["subject_id"],),
        )
    assert_fails(
        verify_all(),
        f"FAIL qualification.record_mismatch: qualification cluster-a:none #{evidence['id']}: the row's"
        f" core version '9.9.9' is not one its output",
        f"was signed on ({evidence['core_version']})",
    )


def test_a_qualification_record_naming_another_trusted_signer_than_its_statements_fails_verify(
    home: Path,
) -> None:
    new_key = _rotated_key()
    with database(home) as connection:
        evidence = connection.execute("SELECT * FROM qualification_evidence ORDER BY id LIMIT 1").fetchone()
        connection.execute(
            "UPDATE qualification_evidence SET signer_keyid = ? WHERE id = ?", (new_key, evidence["id"])
        )
    assert_fails(
        verify_all(),
        f"FAIL qualification.record_mismatch: qualification cluster-a:none #{evidence['id']}: the row's"
        f" signer {new_key} is not the statement's ({evidence['signer_keyid']})",
    )


def test_a_qualification_subject_naming_another_subjects_evidence_as_current_fails_verify(home: Path) -> None:
    with database(home) as connection:
        first, second = connection.execute(
            "SELECT id, current_evidence_id FROM qualification_subjects WHERE current_evidence_id IS NOT NULL"
            " ORDER BY id LIMIT 2"
        ).fetchall()
        connection.execute(
            "UPDATE qualification_subjects SET current_evidence_id = ? WHERE id = ?",
            (second["current_evidence_id"], first["id"]),
        )
    assert_fails(
        verify_all(),
        f"FAIL qualification.state_mismatch: qualification subject cluster-a:none ({first['id']}): the row"
        f" names current evidence {second['current_evidence_id']}; recomputed from its records it is"
        f" {first['current_evidence_id']}",
    )


def test_an_output_size_not_that_of_its_blob_fails_verify(home: Path) -> None:
    with database(home) as connection:
        output = connection.execute("SELECT * FROM render_outputs LIMIT 1").fetchone()
        connection.execute("UPDATE render_outputs SET size_bytes = 1 WHERE digest = ?", (output["digest"],))
    assert_fails(verify_all(), f"FAIL output.size_mismatch: output {output['digest']}: the row says 1 bytes")


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("SELECT request_pack FROM render_targets LIMIT 1", "request pack"),
        ("SELECT blob_digest FROM cluster_profiles LIMIT 1", "document"),
        ("SELECT blob_digest FROM applications LIMIT 1", "document"),
        ("SELECT blob_digest FROM catalog_snapshots LIMIT 1", "snapshot"),
        ("SELECT envelope_digest FROM audit_records LIMIT 1", "audit record"),
        ("SELECT envelope_digest FROM qualification_evidence LIMIT 1", "qualification record"),
    ],
)
def test_a_blob_a_row_names_edited_in_place_fails_verify_naming_its_kind(
    home: Path, query: str, kind: str
) -> None:
    with database(home) as connection:
        digest = connection.execute(query).fetchone()[0]
    flip_a_byte(objects(home), digest)
    assert_fails(verify_all(), f"FAIL blob.corrupt: {kind} {digest}: named by ")


def test_a_document_only_a_snapshot_manifest_names_deleted_fails_verify(home: Path) -> None:
    with database(home) as connection:
        named = {row[0] for row in connection.execute("SELECT blob_digest FROM applications")}
        named |= {row[0] for row in connection.execute("SELECT blob_digest FROM cluster_profiles")}
        manifest = connection.execute("SELECT blob_digest FROM catalog_snapshots LIMIT 1").fetchone()[0]
    document = json.loads(stored_bytes(objects(home), manifest))["fleet"]  # fleet.yaml: no row names it
    assert document not in named
    remove_blob(objects(home), document)
    assert_fails(verify_all(), f"FAIL blob.missing: document {document}: named by the manifest of snapshot")


def test_a_snapshot_row_pointed_at_another_snapshots_manifest_fails_verify_and_gc_keeps_its_own(
    home: Path,
) -> None:
    with database(home) as connection:
        snapshots = connection.execute("SELECT digest FROM catalog_snapshots ORDER BY created_at").fetchall()
        first, second = snapshots[0][0], snapshots[1][0]
        connection.execute("UPDATE catalog_snapshots SET blob_digest = ? WHERE digest = ?", (first, second))
    assert_fails(
        verify_all(),
        f"FAIL snapshot.manifest_mismatch: snapshot {second}: the row names manifest {first}, the manifest"
        f" of snapshot {first}, not its own",
    )
    assert "blob.orphan" not in verify_all().output
    _farm("gc", "--grace-seconds", "0")
    assert stored_bytes(objects(home), second)  # its manifest, which nothing else names, is kept


def test_gc_removes_nothing_while_a_snapshot_manifest_is_missing(home: Path) -> None:
    # an object store restored from a backup older than the snapshots: the documents only their
    # manifests name look unreferenced, and are the snapshots' own
    with database(home) as connection:
        manifests = [row[0] for row in connection.execute("SELECT blob_digest FROM catalog_snapshots")]
    fleet_document = json.loads(stored_bytes(objects(home), manifests[0]))["fleet"]
    for manifest in manifests:
        remove_blob(objects(home), manifest)
    dry = _farm("gc", "--dry-run", "--grace-seconds", "0", ok=(1,)).output
    assert f"orphan blob sha256/{fleet_document} (" in dry
    assert "would remove" not in dry and "kept (a snapshot manifest cannot be read)" in dry
    result = _farm("gc", "--grace-seconds", "0", ok=(1,))
    assert f"unreadable snapshot {manifests[0]}: its manifest {manifests[0]} is missing" in result.output
    assert ", 0 removed" in result.output
    assert stored_bytes(objects(home), fleet_document)


def test_gc_of_a_snapshot_whose_manifest_is_not_one_removes_nothing_and_says_which(home: Path) -> None:
    with database(home) as connection:
        snapshot = connection.execute("SELECT digest FROM catalog_snapshots LIMIT 1").fetchone()[0]
        output = connection.execute("SELECT digest FROM render_outputs LIMIT 1").fetchone()[0]
        connection.execute(
            "UPDATE catalog_snapshots SET blob_digest = ? WHERE digest = ?", (output, snapshot)
        )
    result = _farm("gc", "--grace-seconds", "0", ok=(1,))
    assert f"unreadable snapshot {snapshot}: its manifest {output} cannot be read (" in result.output
    assert "Traceback" not in result.output and ", 0 removed" in result.output


def test_a_dangling_reference_fails_verify_naming_the_row(home: Path) -> None:
    with database(home) as connection:
        connection.execute("PRAGMA foreign_keys = OFF")
        subject = connection.execute("SELECT id FROM qualification_subjects LIMIT 1").fetchone()[0]
        connection.execute(
            "UPDATE qualification_subjects SET current_evidence_id = 999999 WHERE id = ?", (subject,)
        )
    assert_fails(
        verify_all(),
        f"FAIL reference.dangling: qualification_subjects row {subject}: current_evidence_id 999999 names no",
    )


def test_every_foreign_key_of_the_schema_is_a_reference_verify_checks(
    sessions: sessionmaker[Session],
) -> None:
    with sessions() as session:
        checked = {name for name, _ in dangling_references(session)}
    foreign_keys = {
        f"{table.name}.{key.parent.name} → {key.column.table.name}.{key.column.name}"
        for table in Base.metadata.sorted_tables
        for key in table.foreign_keys
    }
    assert foreign_keys - checked == set()


@pytest.mark.parametrize(
    ("table", "column", "row", "value"),
    [
        ("evidence_envelopes", "signer_keyid", "digest", "f" * 64),
        ("qualification_events", "subject_id", "id", 999999),
        ("qualification_runs", "fleet_run_id", "id", "no-such-run"),
    ],
)
def test_a_row_whose_foreign_key_names_no_row_fails_verify_naming_the_row(
    home: Path, table: str, column: str, row: str, value: object
) -> None:
    with database(home) as connection:
        connection.execute("PRAGMA foreign_keys = OFF")
        for trigger in ("update", "delete"):  # evidence_envelopes is append-only
            connection.execute(f"DROP TRIGGER IF EXISTS {table}_append_only_{trigger}")
        victim = connection.execute(f"SELECT {row} FROM {table} ORDER BY {row} LIMIT 1").fetchone()[0]
        connection.execute(f"UPDATE {table} SET {column} = ? WHERE {row} = ?", (value, victim))
    assert_fails(verify_all(), f"FAIL reference.dangling: {table} row {victim}: {column} {value} names no")


def test_a_target_row_naming_a_missing_run_or_output_fails_verify_naming_the_row(home: Path) -> None:
    # no foreign key guards either reference since revision 0025: verify does
    missing_output = "f" * 64
    with database(home) as connection:
        moved, served = (
            row[0]
            for row in connection.execute(
                "SELECT id FROM render_targets WHERE output_digest IS NOT NULL ORDER BY id LIMIT 2"
            )
        )
        connection.execute("UPDATE render_targets SET run_id = 'no-such-run' WHERE id = ?", (moved,))
        connection.execute(
            "UPDATE render_targets SET output_digest = ? WHERE id = ?", (missing_output, served)
        )
    assert_fails(
        verify_all(),
        f"FAIL reference.dangling: render_targets row {moved}: run_id no-such-run names no fleet_runs row",
        f"FAIL reference.dangling: render_targets row {served}: output_digest {missing_output} names no "
        "render_outputs row",
    )


def test_an_evidence_record_whose_signer_row_is_gone_fails_verify_naming_the_record(home: Path) -> None:
    with database(home) as connection:
        record, keyid = connection.execute(
            "SELECT id, signer_keyid FROM evidence_records ORDER BY id LIMIT 1"
        ).fetchone()
        connection.execute("DELETE FROM signers WHERE keyid = ?", (keyid,))
    assert_fails(
        verify_all(),
        f"FAIL reference.dangling: evidence_records row {record}: signer_keyid {keyid} names no signers row",
    )


def test_an_orphan_blob_is_a_warning_not_a_failure(home: Path) -> None:
    from farm.store.objects import LocalObjectStore

    digest = LocalObjectStore(home / "objects").put(b"nothing names me\n")
    result = verify_all()
    assert result.exit_code == 0, result.output
    assert f"WARN blob.orphan: blob {digest}" in result.output and "1 warning(s)" in result.output


def test_a_cached_failure_signed_by_an_untrusted_key_is_not_served_and_fails_verify(
    home: Path, good_home: Path
) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from farm.evidence.failure import sign_failure
    from farm.evidence.keys import signer_from_private_key

    stranger = signer_from_private_key(Ed25519PrivateKey.generate())
    with database(home) as connection:
        row = connection.execute("SELECT * FROM failed_actions ORDER BY action_key LIMIT 1").fetchone()
        forged = sign_failure(stranger, row["action_key"], row["error_code"], row["error_message"])
        connection.execute(
            "UPDATE failed_actions SET envelope = ?, envelope_digest = ?, signer_keyid = ? WHERE action_key = ?",
            (forged.envelope, forged.envelope_digest, stranger.keyid, row["action_key"]),
        )
    assert_fails(
        verify_all(),
        f"FAIL signature.untrusted: failure cache row {row['action_key']}: signed only by untrusted key(s) {stranger.keyid}",
    )
    catalog = (good_home.parent / "catalog-path").read_text()
    _farm("run", catalog, "--processes", "1", ok=(0, 1))
    with database(home) as connection:
        latest = connection.execute(
            "SELECT state FROM render_targets WHERE action_key = ? ORDER BY id DESC LIMIT 1",
            (row["action_key"],),
        ).fetchone()
        signer = connection.execute(
            "SELECT signer_keyid FROM failed_actions WHERE action_key = ?", (row["action_key"],)
        ).fetchone()
    assert latest["state"] == "failed" and signer["signer_keyid"] != stranger.keyid  # rendered, re-signed


def test_a_failure_row_whose_envelope_does_not_hash_to_its_digest_fails_verify(home: Path) -> None:
    with database(home) as connection:
        row = connection.execute("SELECT * FROM failed_actions ORDER BY action_key LIMIT 1").fetchone()
        connection.execute(
            "UPDATE failed_actions SET envelope_digest = ? WHERE action_key = ?",
            ("0" * 64, row["action_key"]),
        )
    assert_fails(verify_all(), f"FAIL failure.corrupt: failure cache row {row['action_key']}")


def test_a_failure_row_naming_another_trusted_signer_than_its_statements_fails_verify(home: Path) -> None:
    new_key = _rotated_key()
    with database(home) as connection:
        row = connection.execute("SELECT * FROM failed_actions ORDER BY action_key LIMIT 1").fetchone()
        connection.execute(
            "UPDATE failed_actions SET signer_keyid = ? WHERE action_key = ?", (new_key, row["action_key"])
        )
    assert_fails(
        verify_all(),
        f"FAIL failure.mismatch: failure cache row {row['action_key']}: the signed statement differs in"
        f" signer (row {new_key!r}, signed {row['signer_keyid']!r})",
    )


def test_a_run_state_not_derived_from_its_targets_fails_verify(home: Path) -> None:
    with database(home) as connection:
        run = connection.execute(
            "SELECT id FROM fleet_runs WHERE state = 'completed_with_failures' LIMIT 1"
        ).fetchone()
        connection.execute("UPDATE fleet_runs SET state = 'completed' WHERE id = ?", (run["id"],))
    assert_fails(
        verify_all(),
        f"FAIL run.state_mismatch: run {run['id']}: the row says 'completed'",
        "say 'completed_with_failures'",
    )
