"""Revision 0025: render_targets names its run and its output without a foreign key, on both
databases; every row and every other constraint stays, and a downgrade restores both keys, or is
refused while a row would break one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from conftest_store import DATABASES, DatabaseFactory, Fleet
from sqlalchemy import Engine, inspect, select, text, update
from sqlalchemy.exc import IntegrityError
from typer.testing import CliRunner

from farm.evidence.signing import Signer
from farm.store import migrate
from farm.store.db import create_farm_engine, make_session_factory
from farm.store.models import RenderTarget
from farm.store.objects import LocalObjectStore

BEFORE = "0024"
TARGET_KEYS = {
    ("fk_render_jobs_run_id_fleet_runs", ("run_id",), "fleet_runs", ("id",)),
    ("fk_render_jobs_output_digest_render_outputs", ("output_digest",), "render_outputs", ("digest",)),
}


@pytest.fixture(params=DATABASES)
def url(request: pytest.FixtureRequest, databases: DatabaseFactory) -> str:
    return databases.empty(request.param)


@pytest.fixture
def engine(url: str) -> Iterator[Engine]:
    engine = create_farm_engine(url)
    yield engine
    engine.dispose()


def _target_keys(engine: Engine) -> set[tuple[str, tuple[str, ...], str, tuple[str, ...]]]:
    return {
        (
            key["name"],
            tuple(key["constrained_columns"]),
            key["referred_table"],
            tuple(key["referred_columns"]),
        )
        for key in inspect(engine).get_foreign_keys("render_targets")
    }


def _table_sql(engine: Engine) -> str | None:
    if engine.dialect.name != "sqlite":
        return None
    with engine.connect() as connection:
        return connection.scalar(text("SELECT sql FROM sqlite_master WHERE name = 'render_targets'"))


def _target_rows(engine: Engine) -> list[tuple[object, ...]]:
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(text("SELECT * FROM render_targets ORDER BY id"))]


def test_target_rows_lose_their_two_foreign_keys_and_nothing_else_then_get_them_back(
    url: str, engine: Engine, local_store: LocalObjectStore, signer: Signer
) -> None:
    migrate.upgrade(url, BEFORE)
    fleet = Fleet(make_session_factory(engine), local_store, signer)
    run_id, target_id, record = fleet.render(b"kind: ConfigMap\n")
    rows, sql = _target_rows(engine), _table_sql(engine)
    assert _target_keys(engine) == TARGET_KEYS

    migrate.upgrade(url)
    engine.dispose()  # a pooled connection may hold the schema it read before
    assert _target_keys(engine) == set()
    assert _target_rows(engine) == rows
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
    assert _target_keys(engine) == TARGET_KEYS
    assert _table_sql(engine) == sql
    assert _target_rows(engine) == rows


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
    assert "render_targets" in result.output and "stays at 0025" in result.output
    assert migrate.current_revision(engine) == "0025"
    assert _target_keys(engine) == set()
