"""The embedded SQLite database under concurrent writers from several processes.

Each process runs read-then-write transactions on one counter, the shape of a job claim followed
by its bookkeeping. With pysqlite's own transaction handling the read runs before its implicit
BEGIN, so concurrent increments get lost; with a deferred BEGIN the write of a stale snapshot fails
with "database is locked". ``BEGIN IMMEDIATE`` (farm/store/db.py) makes every writer wait its turn.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from farm.store.db import create_farm_engine, make_session_factory, session_scope

PROCESSES = 4
INCREMENTS = 200


def _increment(url: str, start: Any) -> str | None:
    engine = create_farm_engine(url)
    sessions = make_session_factory(engine)
    start.wait()
    try:
        for _ in range(INCREMENTS):
            with session_scope(sessions) as session:
                value = session.execute(text("SELECT value FROM counter WHERE id = 1")).scalar_one()
                session.execute(text("UPDATE counter SET value = :v WHERE id = 1"), {"v": value + 1})
    except Exception as error:  # reported to the parent, which asserts there were none
        return f"{type(error).__name__}: {error}"
    finally:
        engine.dispose()
    return None


def test_concurrent_read_then_write_transactions_wait_instead_of_failing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'farm.db'}"
    engine = create_farm_engine(url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE counter (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)"))
        connection.execute(text("INSERT INTO counter (id, value) VALUES (1, 0)"))
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        start = manager.Event()
        with context.Pool(PROCESSES) as pool:
            pending = [pool.apply_async(_increment, (url, start)) for _ in range(PROCESSES)]
            start.set()
            errors = [result.get() for result in pending]
    assert errors == [None] * PROCESSES
    with engine.connect() as connection:
        # No lost update either: every read-then-write saw the previous commit.
        assert connection.execute(text("SELECT value FROM counter")).scalar_one() == PROCESSES * INCREMENTS
    engine.dispose()


def test_a_transaction_takes_the_write_lock_when_it_begins(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'farm.db'}"
    engine = create_farm_engine(url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE t (x INTEGER)"))
    holder = engine.connect()
    holder.begin()
    holder.execute(text("SELECT count(*) FROM t")).scalar_one()  # a read only, yet the lock is held
    probe = sqlite3.connect(tmp_path / "farm.db", timeout=0, isolation_level=None)
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            probe.execute("BEGIN IMMEDIATE")
    finally:
        probe.close()
        holder.rollback()
        holder.close()
        engine.dispose()
