"""Alembic owns the schema: upgrade, downgrade, and agreement with the models, on both databases."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import typer
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import DBAPIError
from typer.testing import CliRunner

from farm.store import migrate
from farm.store.db import create_farm_engine
from farm.store.models import Base

PROFILE_TABLES = {"profile_declarations", "profile_values", "qualification_states"}
# What revision 0004 adds; 0001 had the per-target rows under the name render_jobs.
BATCH_TABLES = {"render_targets", "failed_actions"}
AUDIT_TABLES = {"audit_records"}
PUBLISH_TABLES = {"publishes"}  # revision 0015
ENVELOPE_TABLES = {"evidence_envelopes"}  # revision 0018: batch envelopes
# What revision 0005 adds: qualification subjects, evidence, runs and the event log.
QUALIFICATION_TABLES = {
    "qualification_subjects",
    "qualification_evidence",
    "qualification_runs",
    "qualification_events",
}
AFTER_0001 = (
    PROFILE_TABLES | BATCH_TABLES | QUALIFICATION_TABLES | AUDIT_TABLES | PUBLISH_TABLES | ENVELOPE_TABLES
)


def _tables(url: str) -> set[str]:
    engine = create_farm_engine(url)
    try:
        return set(inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def test_migrated_schema_matches_the_models(empty_url: str) -> None:
    migrate.upgrade(empty_url)
    engine = create_farm_engine(empty_url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, Base.metadata) == []
        assert migrate.current_revision(engine) == migrate.head_revision()
    finally:
        engine.dispose()


def test_the_head_revision_known_without_alembic_is_alembics_head() -> None:
    assert migrate.head_revision() == migrate.HEAD_REVISION


def test_a_database_is_at_head_only_once_migrated_to_it(empty_url: str) -> None:
    engine = create_farm_engine(empty_url)
    try:
        assert not migrate.is_at_head(engine)  # never migrated: no alembic_version table
        migrate.upgrade(empty_url, "0007")
        assert not migrate.is_at_head(engine)
        migrate.upgrade(empty_url)
        assert migrate.is_at_head(engine)
    finally:
        engine.dispose()


def test_downgrade_step_by_step_and_up_again(empty_url: str) -> None:
    migrate.upgrade(empty_url)
    assert _tables(empty_url) == set(Base.metadata.tables)
    migrate.downgrade(empty_url, "0001")
    assert _tables(empty_url) == set(Base.metadata.tables) - AFTER_0001
    migrate.downgrade(empty_url, "base")
    assert _tables(empty_url) == set()
    migrate.upgrade(empty_url)
    assert _tables(empty_url) == set(Base.metadata.tables)


def test_farm_db_commands_work_from_any_directory(
    empty_url: str, storage_cli: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"FARM_DATABASE_URL": empty_url, "FARM_HOME": str(tmp_path / ".farm")}
    runner = CliRunner()
    result = runner.invoke(storage_cli, ["db", "upgrade"], env=env)
    assert result.exit_code == 0, result.output
    assert _tables(empty_url) == set(Base.metadata.tables)
    result = runner.invoke(storage_cli, ["db", "downgrade", "0001"], env=env)
    assert result.exit_code == 0, result.output
    assert not PROFILE_TABLES & _tables(empty_url)


def test_embedded_default_creates_the_sqlite_file_under_dot_farm(
    storage_cli: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("FARM_HOME", "FARM_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(storage_cli, ["db", "upgrade"])
    assert result.exit_code == 0, result.output
    assert _tables(f"sqlite:///{tmp_path / '.farm' / 'farm.db'}") == set(Base.metadata.tables)


def test_an_unknown_revision_is_a_clear_error(storage_cli: typer.Typer, tmp_path: Path) -> None:
    env = {"FARM_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}", "FARM_HOME": str(tmp_path)}
    result = CliRunner().invoke(storage_cli, ["db", "downgrade", "nonexistent"], env=env)
    assert result.exit_code == 1
    assert "nonexistent" in result.output


def test_migrations_never_import_the_orm_models() -> None:
    folder = migrate.migrations_dir()
    scripts = [folder / "env.py", *sorted((folder / "versions").glob("*.py"))]
    assert len(scripts) >= 3
    for script in scripts:
        tree = ast.parse(script.read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} | {
            alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
        }
        assert not any(name and name.startswith("farm.store.models") for name in imported), script


def test_upgrade_embedded_only_touches_the_embedded_database(tmp_path: Path) -> None:
    from farm.settings import load_settings

    embedded = load_settings(home=tmp_path / ".farm")
    assert migrate.upgrade_embedded(embedded)
    assert _tables(embedded.database_url) == set(Base.metadata.tables)
    other_url = f"sqlite:///{tmp_path / 'shared.db'}"
    assert not migrate.upgrade_embedded(load_settings(home=tmp_path / ".farm", database_url=other_url))
    assert _tables(other_url) == set()


def _insert_evidence_row(engine: Engine, envelope: bytes | None = None) -> None:
    columns = "envelope_digest, statement_digest, subject_name, subject_digest, predicate_type, signer_keyid, created_at"
    values = ":digest, :digest, 'render:web/prod', :digest, 'p', 'k', CURRENT_TIMESTAMP"
    if envelope is not None:
        columns, values = f"{columns}, envelope", f"{values}, :envelope"
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO signers (keyid, public_key_pem, trusted, first_seen_at) VALUES ('k', 'pem', true, CURRENT_TIMESTAMP)"
            )
        )
        connection.execute(
            text(f"INSERT INTO evidence_records ({columns}) VALUES ({values})"),
            {"digest": "a" * 64, "envelope": envelope},
        )


def test_moving_envelopes_into_rows_keeps_older_rows_and_the_append_only_triggers(empty_url: str) -> None:
    migrate.upgrade(empty_url, "0009")
    engine = create_farm_engine(empty_url)
    try:
        _insert_evidence_row(engine)  # written by revision 0009: its envelope is a blob
        migrate.upgrade(empty_url)
        with engine.connect() as connection:
            assert connection.execute(text("SELECT envelope FROM evidence_records")).scalar_one() is None
        with pytest.raises(DBAPIError, match="append-only"), engine.begin() as connection:
            connection.execute(text("UPDATE evidence_records SET envelope = :data"), {"data": b"forged"})
    finally:
        engine.dispose()


def test_downgrading_below_envelopes_in_rows_is_refused_while_a_row_holds_one(
    empty_url: str, storage_cli: typer.Typer, tmp_path: Path
) -> None:
    migrate.upgrade(empty_url)
    engine = create_farm_engine(empty_url)
    try:
        _insert_evidence_row(engine, envelope=b'{"payload": ""}')
    finally:
        engine.dispose()
    env = {"FARM_DATABASE_URL": empty_url, "FARM_HOME": str(tmp_path)}
    result = CliRunner().invoke(storage_cli, ["db", "downgrade", "0009"], env=env)
    assert result.exit_code == 1
    assert result.output.count("Error: ") == 1 and "Traceback" not in result.output
    assert "1 evidence records hold their envelope in the row (revision 0010)" in result.output
    engine = create_farm_engine(empty_url)
    try:
        assert migrate.current_revision(engine) == migrate.HEAD_REVISION
        with engine.connect() as connection:
            assert connection.execute(text("SELECT envelope FROM evidence_records")).scalar_one() is not None
    finally:
        engine.dispose()
