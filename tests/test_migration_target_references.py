"""Revision 0025: the rows written per target (its target row, evidence record and action cache
entry) name what they refer to without a foreign key, on both databases; every row and every other
constraint stays, and a downgrade restores the keys, or is refused while a row would break one."""

from __future__ import annotations

import ctypes
import ctypes.util
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from conftest_store import DATABASES, DatabaseFactory, Fleet
from sqlalchemy import Engine, event, inspect, select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError
from typer.testing import CliRunner

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


@pytest.fixture(params=DATABASES)
def url(request: pytest.FixtureRequest, databases: DatabaseFactory) -> str:
    return databases.empty(request.param)


@pytest.fixture
def engine(url: str) -> Iterator[Engine]:
    engine = create_farm_engine(url)
    yield engine
    engine.dispose()


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


def _tables_sql(engine: Engine) -> dict[str, str] | None:
    if engine.dialect.name != "sqlite":
        return None
    with engine.connect() as connection:
        return {
            table: connection.scalar(
                text("SELECT sql FROM sqlite_master WHERE name = :name"), {"name": table}
            )
            for table in DROPPED_KEYS
        }


def _rows(engine: Engine) -> dict[str, list[tuple[object, ...]]]:
    with engine.connect() as connection:
        return {
            table: sorted(
                (tuple(row) for row in connection.execute(text(f"SELECT * FROM {table}"))), key=repr
            )
            for table in DROPPED_KEYS
        }


def test_per_target_rows_lose_their_foreign_keys_and_nothing_else_then_get_them_back(
    url: str, engine: Engine, local_store: LocalObjectStore, signer: Signer
) -> None:
    migrate.upgrade(url, BEFORE)
    fleet = Fleet(make_session_factory(engine), local_store, signer)
    run_id, target_id, record = fleet.render(b"kind: ConfigMap\n")
    rows, sql = _rows(engine), _tables_sql(engine)
    assert all(rows.values())
    assert _foreign_keys(engine) == DROPPED_KEYS

    migrate.upgrade(url)
    engine.dispose()  # a pooled connection may hold the schema it read before
    assert _foreign_keys(engine) == NO_KEYS
    assert _rows(engine) == rows
    if engine.dialect.name == "sqlite":  # the table's text was edited in place
        with engine.connect() as connection:
            assert connection.scalar(text("PRAGMA integrity_check")) == "ok"
    with fleet.sessions() as session:
        row = session.execute(select(RenderTarget.run_id, RenderTarget.output_digest)).one()
    assert tuple(row) == (run_id, record.output_digest)
    with pytest.raises(IntegrityError), fleet.sessions.begin() as session:  # the check stays
        session.execute(update(RenderTarget).where(RenderTarget.id == target_id).values(state="exploded"))
    with pytest.raises(IntegrityError), fleet.sessions.begin() as session:  # the unique key stays
        session.add(
            RenderTarget(run_id=run_id, application="web", cluster_profile="prod", action_key="0" * 64)
        )

    migrate.downgrade(url, BEFORE)
    engine.dispose()
    assert _foreign_keys(engine) == DROPPED_KEYS
    assert _tables_sql(engine) == sql
    assert _rows(engine) == rows


def test_downgrading_below_0025_is_refused_while_a_target_names_a_missing_output(
    url: str,
    engine: Engine,
    local_store: LocalObjectStore,
    signer: Signer,
    storage_cli: typer.Typer,
    tmp_path: Path,
) -> None:
    migrate.upgrade(url)
    fleet = Fleet(make_session_factory(engine), local_store, signer)
    _, target_id, _ = fleet.render(b"kind: ConfigMap\n")
    with fleet.sessions.begin() as session:
        session.execute(
            update(RenderTarget).where(RenderTarget.id == target_id).values(output_digest="f" * 64)
        )
    engine.dispose()

    env = {"FARM_DATABASE_URL": url, "FARM_HOME": str(tmp_path)}
    result = CliRunner().invoke(storage_cli, ["db", "downgrade", BEFORE], env=env)

    assert result.exit_code == 1
    assert result.output.count("Error: ") == 1 and "Traceback" not in result.output
    assert "1 render_targets rows name a render_outputs row that is missing (output_digest" in result.output
    assert "stays at 0025" in result.output
    assert migrate.current_revision(engine) == "0025"
    assert _foreign_keys(engine) == NO_KEYS


SQLITE_DBCONFIG_DEFENSIVE = 1010


def _defensive(dbapi_connection: sqlite3.Connection, _record: object) -> None:
    """Switch SQLite's defensive mode on for a new connection, as some builds have it by default:
    it refuses writes to ``sqlite_master``. Python 3.11's sqlite3 has no call for it, so the
    C library's is called on the connection's handle (CPython's ``pysqlite_Connection`` holds it
    right after the object header)."""
    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    library = ctypes.CDLL(ctypes.util.find_library("sqlite3"))
    handle = ctypes.c_void_p.from_address(id(dbapi_connection) + object.__basicsize__).value
    status = library.sqlite3_db_config(
        ctypes.c_void_p(handle), ctypes.c_int(SQLITE_DBCONFIG_DEFENSIVE), ctypes.c_int(1), ctypes.c_void_p(0)
    )
    assert status == 0


def test_an_sqlite_in_defensive_mode_keeps_the_keys_and_still_migrates_both_ways(
    databases: DatabaseFactory,
    local_store: LocalObjectStore,
    signer: Signer,
    capfd: pytest.CaptureFixture[str],
) -> None:
    url = databases.empty("sqlite")
    event.listen(Engine, "connect", _defensive)
    try:
        engine = create_farm_engine(url)
        with engine.connect() as connection, pytest.raises(OperationalError, match="may not be modified"):
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
    finally:
        event.remove(Engine, "connect", _defensive)
