"""Revision 0027: the state checks of runs, jobs, targets and publishes compare with each state in
turn instead of an ``IN`` list (SQLite rebuilt the list for every row written), on both databases;
they refuse and accept the same states, every row stays, and a downgrade restores the lists
(SQLite: the tables' text, byte for byte)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest_store import DATABASES, DatabaseFactory, Fleet
from sqlalchemy import Engine, event, inspect, text, update
from sqlalchemy.exc import IntegrityError
from test_migration_target_references import _defensive

from farm.evidence.signing import Signer
from farm.store import migrate
from farm.store.db import create_farm_engine, make_session_factory
from farm.store.models import FleetRun, RenderJob, RenderTarget
from farm.store.objects import LocalObjectStore

BEFORE = "0026"
TABLES = ("fleet_runs", "render_jobs", "render_targets", "publishes")


@pytest.fixture(params=DATABASES)
def url(request: pytest.FixtureRequest, databases: DatabaseFactory) -> str:
    return databases.empty(request.param)


@pytest.fixture
def engine(url: str) -> Iterator[Engine]:
    engine = create_farm_engine(url)
    yield engine
    engine.dispose()


def _checks(engine: Engine) -> dict[str, str]:
    """Each table's state check as the database holds it."""
    engine.dispose()  # a pooled connection may hold the schema it read before
    inspector = inspect(engine)
    found = {}
    for table in TABLES:
        [check] = [
            check for check in inspector.get_check_constraints(table) if check["name"].endswith("_state")
        ]
        found[table] = check["sqltext"]
    return found


def _listed(check: str) -> bool:
    """Whether a check tests a list (PostgreSQL reads ``IN (…)`` back as ``= ANY (ARRAY[…])``)."""
    return " IN " in check.upper() or "= ANY (" in check.upper()


def _rows(engine: Engine) -> dict[str, list[tuple[object, ...]]]:
    with engine.connect() as connection:
        return {
            table: sorted(
                (tuple(row) for row in connection.execute(text(f"SELECT * FROM {table}"))), key=repr
            )
            for table in TABLES
        }


def _tables_sql(engine: Engine) -> dict[str, str] | None:
    if engine.dialect.name != "sqlite":
        return None
    with engine.connect() as connection:
        return {
            table: connection.scalar(
                text("SELECT sql FROM sqlite_master WHERE name = :name"), {"name": table}
            )
            for table in TABLES
        }


def _refuses_a_state_it_does_not_know(fleet: Fleet, run_id: str, target_id: str) -> None:
    for model, key in ((RenderTarget, target_id), (FleetRun, run_id)):
        with pytest.raises(IntegrityError), fleet.sessions.begin() as session:
            session.execute(update(model).where(model.id == key).values(state="exploded"))
    with pytest.raises(IntegrityError), fleet.sessions.begin() as session:
        session.execute(update(RenderJob).where(RenderJob.run_id == run_id).values(state="done"))


def _accepts_every_state(fleet: Fleet, target_id: str) -> None:
    with fleet.sessions.begin() as session:
        for state in ("planned", "queued", "running", "failed", "cached", "succeeded"):
            session.execute(update(RenderTarget).where(RenderTarget.id == target_id).values(state=state))


def test_state_checks_become_comparisons_accepting_the_same_states_then_lists_again(
    url: str, engine: Engine, local_store: LocalObjectStore, signer: Signer
) -> None:
    migrate.upgrade(url, BEFORE)
    fleet = Fleet(make_session_factory(engine), local_store, signer)
    run_id, target_id, _ = fleet.render(b"kind: ConfigMap\n")
    rows, sql, lists = _rows(engine), _tables_sql(engine), _checks(engine)
    assert all(_listed(check) for check in lists.values())

    migrate.upgrade(url)
    compared = _checks(engine)
    assert all(not _listed(check) and " OR " in check.upper() for check in compared.values())
    assert "'completed_with_failures'" in compared["fleet_runs"] and "'cached'" in compared["render_targets"]
    assert _rows(engine) == rows
    if engine.dialect.name == "sqlite":
        with engine.connect() as connection:
            assert connection.scalar(text("PRAGMA integrity_check")) == "ok"
    _refuses_a_state_it_does_not_know(fleet, run_id, target_id)
    _accepts_every_state(fleet, target_id)

    migrate.downgrade(url, BEFORE)
    assert _checks(engine) == lists
    if engine.dialect.name == "sqlite":
        assert _tables_sql(engine) == sql
    _refuses_a_state_it_does_not_know(fleet, run_id, target_id)


def test_an_sqlite_in_defensive_mode_keeps_its_state_lists_and_migrates_both_ways(
    databases: DatabaseFactory,
    local_store: LocalObjectStore,
    signer: Signer,
    capfd: pytest.CaptureFixture[str],
) -> None:
    url = databases.empty("sqlite")
    migrate.upgrade(url, BEFORE)
    event.listen(Engine, "connect", _defensive)
    try:
        engine = create_farm_engine(url)
        lists = _checks(engine)
        migrate.upgrade(url)
        assert "the state checks keep their spelling (revision 0027)" in capfd.readouterr().err
        assert migrate.current_revision(engine) == migrate.HEAD_REVISION
        assert _checks(engine) == lists
        fleet = Fleet(make_session_factory(engine), local_store, signer)
        run_id, target_id, _ = fleet.render(b"kind: ConfigMap\n")
        _refuses_a_state_it_does_not_know(fleet, run_id, target_id)
        migrate.downgrade(url, BEFORE)
        assert _checks(engine) == lists
        engine.dispose()
    finally:
        event.remove(Engine, "connect", _defensive)
