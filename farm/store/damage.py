"""A damaged SQLite ``farm.db`` (truncated, overwritten, a torn page): how it is recognised, and
what can still be read of it for ``farm verify``.

The report opens the file read-only with the standard library's ``sqlite3`` (no WAL set-up, no
migration, nothing written) and asks, table by table and run by run, what still reads back. What
it cannot read it names; it never repairs (restoring the file from a backup does, see
docs/reliability.md, "A damaged farm.db").
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

DAMAGE_MARKS = ("database disk image is malformed", "file is not a database", "database corrupt")
RECOVERY = "docs/reliability.md, 'A damaged farm.db'"
TABLES = (
    "fleet_runs",
    "render_jobs",
    "render_targets",
    "render_outputs",
    "evidence_records",
    "action_cache",
    "failed_actions",
    "catalog_snapshots",
)
MAX_LINES = 50  # lines of one report: a name per run past that would drown the point


def is_damage(error: BaseException) -> bool:
    """Whether ``error`` (a driver error, wrapped or not) says the database file is damaged; the
    object store's own file (its small blobs) is not the database: its errors say so themselves."""
    from farm.store.objects import ObjectStoreError

    if isinstance(error, ObjectStoreError):
        return False
    text = f"{error} {getattr(error, 'orig', '')}".lower()
    return any(mark in text for mark in DAMAGE_MARKS)


def damage_report(database: Path) -> list[str]:
    """What reads back from the damaged SQLite file ``database``: one line per finding.

    Read from a copy, padded with zeros to the length its header gives when it was cut short
    (SQLite refuses a file shorter than its header says even for the pages that are there)."""
    with tempfile.TemporaryDirectory(prefix="farm-damage-") as folder:
        copy = Path(folder) / "farm.db"
        try:
            shutil.copyfile(database, copy)
            _pad_to_header_length(copy)
            connection = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
        except (OSError, sqlite3.Error) as error:
            return [f"{database}: cannot be read: {error}"]
        try:
            return _report(connection, database)[:MAX_LINES]
        finally:
            connection.close()


def integrity_problems(database: Path, limit: int = 20) -> list[str]:
    """``PRAGMA quick_check`` of the SQLite file ``database``, read-only: [] when it is whole."""
    try:
        connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        try:
            rows = [row[0] for row in connection.execute(f"PRAGMA quick_check({int(limit)})")]
        finally:
            connection.close()
    except sqlite3.Error as error:
        return [str(error)]
    return [] if rows == ["ok"] else rows


def _pad_to_header_length(copy: Path) -> None:
    with copy.open("r+b") as file:
        header = file.read(100)
        if len(header) < 100 or not header.startswith(b"SQLite format 3\0"):
            return
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        length = page_size * int.from_bytes(header[28:32], "big")
        if length > copy.stat().st_size:
            file.truncate(length)  # extends with zeros


def _report(connection: sqlite3.Connection, database: Path) -> list[str]:
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as error:
        return [f"{database}: nothing reads back ({error}): every run and output recorded there is affected"]
    lines = [_table_line(connection, table) for table in TABLES]
    return lines + _affected_runs(connection)


def _table_line(connection: sqlite3.Connection, table: str) -> str:
    try:
        rows = connection.execute(f"SELECT * FROM {table}").fetchall()  # every row: every data page
    except sqlite3.Error as error:
        return f"table {table}: damaged ({error})"
    return f"table {table}: {len(rows)} rows read back"


def _affected_runs(connection: sqlite3.Connection) -> list[str]:
    """A line per run whose jobs or targets do not read back (or one saying the runs do not)."""
    try:
        runs = [row[0] for row in connection.execute("SELECT id FROM fleet_runs ORDER BY created_at")]
    except sqlite3.Error as error:
        return [f"runs: the list of runs does not read back ({error}): every run may be affected"]
    affected = []
    for run_id in runs:
        try:
            for table in ("render_targets", "render_jobs"):
                connection.execute(f"SELECT * FROM {table} WHERE run_id = ?", (run_id,)).fetchall()
        except sqlite3.Error as error:
            affected.append(f"run {run_id}: affected: its {table} do not read back ({error})")
    if not affected:
        return [f"runs: all {len(runs)} read back whole"]
    return affected
