"""Revision 0025: the rows written per target (its target row, evidence record and action cache
entry) name what they refer to without a foreign key, on both databases; every row and every other
constraint stays, and a downgrade restores the keys, or is refused while a row would break one."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from conftest_store import (
    DatabaseFactory,
    Fleet,
    assert_sqlite_intact,
    refused_downgrade,
    sqlite_defensive_mode,
    sqlite_tables_sql,
    table_rows,
)
from sqlalchemy import Engine, inspect, select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError

from farm.evidence.signing import Signer
from farm.store import migrate
from farm.store.db import create_farm_engine, make_session_factory
from farm.store.models import RenderTarget
from farm.store.objects import LocalObjectStore

BEFORE = "0024"
DROPPED_KEYS = {
    "render_targets": {
        ("fk_render_jobs_run_id_fleet_runs", ("run_id",), "fleet_runs", ("id",)),
        ("fk_render_jobs_output_digest_render_outputs", ("output_digest",), "render_outputs", ("digest",)),
    },
    "evidence_records": {
        ("fk_evidence_records_signer_keyid_signers", ("signer_keyid",), "signers", ("keyid",)),
        ("fk_evidence_records_job_id_render_jobs", ("target_id",), "render_targets", ("id",)),
    },
    "action_cache": {
        ("fk_action_cache_output_digest_render_outputs", ("output_digest",), "render_outputs", ("digest",)),
        ("fk_action_cache_evidence_id_evidence_records", ("evidence_id",), "evidence_records", ("id",)),
    },
}
NO_KEYS = dict.fromkeys(DROPPED_KEYS, set())


def _foreign_keys(engine: Engine) -> dict[str, set[tuple[str, tuple[str, ...], str, tuple[str, ...]]]]:
    inspector = inspect(engine)
    return {
        table: {
            (
                key["name"],
                tuple(key["constrained_columns"]),
                key["referred_table"],
                tuple(key["referred_columns"]),
            )
            for key in inspector.get_foreign_keys(table)
        }
        for table in DROPPED_KEYS
    }


def test_per_target_rows_lose_their_foreign_keys_and_nothing_else_then_get_them_back(
    empty_url: str, empty_engine: Engine, local_store: LocalObjectStore, signer: Signer
) -> None:
    migrate.upgrade(empty_url, BEFORE)
    fleet = Fleet(make_session_factory(empty_engine), local_store, signer)
    run_id, target_id, record = fleet.render(b"kind: ConfigMap\n")
    rows, sql = table_rows(empty_engine, DROPPED_KEYS), sqlite_tables_sql(empty_engine, DROPPED_KEYS)
    assert all(rows.values())
    assert _foreign_keys(empty_engine) == DROPPED_KEYS

    migrate.upgrade(empty_url)
    empty_engine.dispose()  # a pooled connection may hold the schema it read before
    assert _foreign_keys(empty_engine) == NO_KEYS
    assert table_rows(empty_engine, DROPPED_KEYS) == rows
    assert_sqlite_intact(empty_engine)  # the table's text was edited in place
    with fleet.sessions() as session:
        row = session.execute(select(RenderTarget.run_id, RenderTarget.output_digest)).one()
    assert tuple(row) == (run_id, record.output_digest)
    with pytest.raises(IntegrityError), fleet.sessions.begin() as session:  # the check stays
        session.execute(update(RenderTarget).where(RenderTarget.id == target_id).values(state="exploded"))
    with pytest.raises(IntegrityError), fleet.sessions.begin() as session:  # the unique key stays
        session.add(
            RenderTarget(run_id=run_id, application="web", cluster_profile="prod", action_key="0" * 64)
        )

    migrate.downgrade(empty_url, BEFORE)
    empty_engine.dispose()
    assert _foreign_keys(empty_engine) == DROPPED_KEYS
    assert sqlite_tables_sql(empty_engine, DROPPED_KEYS) == sql
    assert table_rows(empty_engine, DROPPED_KEYS) == rows


def test_downgrading_below_0025_is_refused_while_a_target_names_a_missing_output(
    empty_url: str,
    empty_engine: Engine,
    local_store: LocalObjectStore,
    signer: Signer,
    storage_cli: typer.Typer,
    tmp_path: Path,
) -> None:
    migrate.upgrade(empty_url)
    fleet = Fleet(make_session_factory(empty_engine), local_store, signer)
    _, target_id, _ = fleet.render(b"kind: ConfigMap\n")
    with fleet.sessions.begin() as session:
        session.execute(
            update(RenderTarget).where(RenderTarget.id == target_id).values(output_digest="f" * 64)
        )
    empty_engine.dispose()

    output = refused_downgrade(storage_cli, empty_url, tmp_path, BEFORE)
    assert "1 render_targets rows name a render_outputs row that is missing (output_digest" in output
    assert "stays at 0025" in output
    assert migrate.current_revision(empty_engine) == "0025"
    assert _foreign_keys(empty_engine) == NO_KEYS


def test_an_sqlite_in_defensive_mode_keeps_the_keys_and_still_migrates_both_ways(
    databases: DatabaseFactory,
    local_store: LocalObjectStore,
    signer: Signer,
    capfd: pytest.CaptureFixture[str],
) -> None:
    url = databases.empty("sqlite")
    with sqlite_defensive_mode():
        engine = create_farm_engine(url)
        with (
            engine.connect() as connection,
            pytest.raises(OperationalError, match="may not be modified"),
        ):
            connection.execute(text("PRAGMA writable_schema = ON"))
            connection.execute(text("UPDATE sqlite_master SET sql = sql WHERE 0"))
        migrate.upgrade(url)
        assert "this SQLite refuses schema edits (defensive mode)" in capfd.readouterr().err
        assert migrate.current_revision(engine) == migrate.HEAD_REVISION
        assert _foreign_keys(engine) == DROPPED_KEYS  # kept, and enforced
        fleet = Fleet(make_session_factory(engine), local_store, signer)
        run_id, _, record = fleet.render(b"kind: ConfigMap\n")
        with fleet.sessions() as session:
            assert session.execute(select(RenderTarget.run_id, RenderTarget.output_digest)).one() == (
                run_id,
                record.output_digest,
            )
        migrate.downgrade(url, BEFORE)
        assert _foreign_keys(engine) == DROPPED_KEYS
        migrate.upgrade(url)
        assert migrate.current_revision(engine) == migrate.HEAD_REVISION
        engine.dispose()
