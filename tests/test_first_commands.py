"""Two first commands on a fresh home at once: the migration lock lets one create and migrate
``farm.db`` while the other waits, so both succeed and the database is whole and at head."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from farm.store.migrate import HEAD_REVISION

REPETITIONS = 10
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "fleet"


def _start(home: Path, *args: str) -> subprocess.Popen[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env |= {"FARM_HOME": str(home), "FARM_DAEMON": "off"}
    return subprocess.Popen(
        [sys.executable, "-m", "farm", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.timeout(600)
def test_two_first_commands_on_a_fresh_home_at_once_both_succeed_and_migrate_it_once(tmp_path: Path) -> None:
    for repetition in range(REPETITIONS):
        home = tmp_path / f"home-{repetition}"
        first, second = _start(home, "db", "upgrade"), _start(home, "run", str(EXAMPLES), "--json")
        for process in (first, second):
            _, err = process.communicate(timeout=240)
            assert process.returncode == 0, f"repetition {repetition}: {err}"
            assert "Traceback" not in err
        with sqlite3.connect(home / "farm.db") as database:
            assert database.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert database.execute("SELECT version_num FROM alembic_version").fetchall() == [
                (HEAD_REVISION,)
            ]


def _posix_locks_of_this_process(path: Path) -> list[str]:
    """The kernel's POSIX locks this process holds on ``path`` (``/proc/locks``: ``N: POSIX
    ADVISORY READ PID MAJ:MIN:INODE START END``)."""
    inode = path.stat().st_ino
    held = []
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "POSIX" in fields and fields[4] == str(os.getpid()) and fields[5].endswith(f":{inode}"):
            held.append(" ".join(fields[3:]))
    return held


def test_opening_another_engine_on_a_live_database_keeps_this_process_s_sqlite_locks(tmp_path: Path) -> None:
    """Closing any descriptor of a file drops the POSIX locks a process holds on it: an engine
    made while a connection is open must not open the database file itself (it did, to create it
    0600, and a racing process then deleted the WAL the workers were writing)."""
    from sqlalchemy import text

    from farm.store.db import create_farm_engine

    database = tmp_path / "farm.db"
    url = f"sqlite:///{database}"
    first = create_farm_engine(url)
    with first.connect() as connection:
        connection.execute(text("CREATE TABLE t (x INTEGER)"))
        connection.commit()
        connection.execute(text("SELECT * FROM t")).all()
        held = _posix_locks_of_this_process(database)
        assert held, "a WAL connection holds a shared lock on its database file"
        second = create_farm_engine(url)
        assert _posix_locks_of_this_process(database) == held
        second.dispose()
    first.dispose()
