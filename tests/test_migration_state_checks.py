"""Revision 0027: the state checks of runs, jobs, targets and publishes compare with each state in
turn instead of an ``IN`` list (SQLite rebuilt the list for every row written), on both databases;
they refuse and accept the same states, every row stays, and a downgrade restores the lists
(SQLite: the tables' text, byte for byte)."""

from __future__ import annotations

import pytest
from conftest_store import (
    DatabaseFactory,
    Fleet,
    assert_sqlite_intact,
    sqlite_defensive_mode,
    sqlite_tables_sql,
    table_rows,
)
from sqlalchemy import Engine, inspect, update
from sqlalchemy.exc import IntegrityError

from farm.evidence.signing import Signer
from farm.store import migrate
from farm.store.db import create_farm_engine, make_session_factory
from farm.store.models import FleetRun, RenderJob, RenderTarget
from farm.store.objects import LocalObjectStore

BEFORE = "0026"
TABLES = ("fleet_runs", "render_jobs", "render_targets", "publishes")


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
    empty_url: str, empty_engine: Engine, local_store: LocalObjectStore, signer: Signer
) -> None:
    migrate.upgrade(empty_url, BEFORE)
    fleet = Fleet(make_session_factory(empty_engine), local_store, signer)
    run_id, target_id, _ = fleet.render(b"kind: ConfigMap\n")
    rows, sql, lists = (
        table_rows(empty_engine, TABLES),
        sqlite_tables_sql(empty_engine, TABLES),
        _checks(empty_engine),
    )
    assert all(_listed(check) for check in lists.values())

    migrate.upgrade(empty_url)
    compared = _checks(empty_engine)
    assert all(not _listed(check) and " OR " in check.upper() for check in compared.values())
    assert "'completed_with_failures'" in compared["fleet_runs"] and "'cached'" in compared["render_targets"]
    assert table_rows(empty_engine, TABLES) == rows
    assert_sqlite_intact(empty_engine)
    _refuses_a_state_it_does_not_know(fleet, run_id, target_id)
    _accepts_every_state(fleet, target_id)

    migrate.downgrade(empty_url, BEFORE)
    assert _checks(empty_engine) == lists
    if empty_engine.dialect.name == "sqlite":
        assert sqlite_tables_sql(empty_engine, TABLES) == sql
    _refuses_a_state_it_does_not_know(fleet, run_id, target_id)


def test_an_sqlite_in_defensive_mode_keeps_its_state_lists_and_migrates_both_ways(
    databases: DatabaseFactory,
    local_store: LocalObjectStore,
    signer: Signer,
    capfd: pytest.CaptureFixture[str],
) -> None:
    url = databases.empty("sqlite")
    migrate.upgrade(url, BEFORE)
    with sqlite_defensive_mode():
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
