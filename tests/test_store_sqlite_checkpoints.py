"""A local pool worker's commits leave the checkpoints of SQLite's write-ahead log to its pool's
owner (``WalCheckpointer``, called while the owner waits): a worker that checkpointed on its own
commit stopped for the copy and its flushes, about 10 ms every seventh job of a run."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, text

from farm.store.db import DEFERRED_CHECKPOINT_PAGES, WalCheckpointer, create_farm_engine

ROWS = 1_500
ROW_BYTES = 4_000  # 6 MB in all: past SQLite's own checkpoint threshold (1,000 pages, 4 MiB)


def _write_rows(engine: Engine, rows: int = ROWS) -> None:
    """Rows in commits of a hundred, as jobs commit (the engine stays open: SQLite checkpoints
    when the last connection to a database closes)."""
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, data BLOB)"))
    for _ in range(0, rows, 100):
        with engine.begin() as connection:
            connection.execute(
                text("INSERT INTO blobs (data) VALUES (randomblob(:size))"), [{"size": ROW_BYTES}] * 100
            )


def _autocheckpoint(engine: Engine) -> int:
    with engine.connect() as connection:
        return connection.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar_one()


def test_a_pool_worker_s_commits_leave_the_log_to_its_owner_who_checkpoints_it(tmp_path: Path) -> None:
    database = tmp_path / "farm.db"
    url = f"sqlite:///{database}"
    worker = create_farm_engine(url, checkpoints_elsewhere=True)
    checkpoint = WalCheckpointer(url)
    try:
        assert _autocheckpoint(worker) == DEFERRED_CHECKPOINT_PAGES
        _write_rows(worker)
        assert database.stat().st_size < 1_000_000  # the rows are still in the log only
        checkpoint()
        assert database.stat().st_size > ROWS * ROW_BYTES  # the owner copied them into the file
    finally:
        checkpoint.close()
        worker.dispose()


def test_any_other_connection_checkpoints_on_its_own_commits_as_sqlite_does(tmp_path: Path) -> None:
    database = tmp_path / "farm.db"
    engine = create_farm_engine(f"sqlite:///{database}")
    try:
        assert _autocheckpoint(engine) == 1_000
        _write_rows(engine)
        assert database.stat().st_size > 2_000_000  # its commits checkpointed (at 1,000 pages)
    finally:
        engine.dispose()


def test_the_checkpointer_creates_no_database_and_ignores_postgresql(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here.db"
    for url in (f"sqlite:///{missing}", "postgresql+psycopg://nobody@127.0.0.1:1/none"):
        checkpoint = WalCheckpointer(url)
        checkpoint()
        checkpoint.close()
    assert not missing.exists()


def test_the_checkpointer_runs_at_most_once_an_interval(tmp_path: Path) -> None:
    database = tmp_path / "farm.db"
    url = f"sqlite:///{database}"
    worker = create_farm_engine(url, checkpoints_elsewhere=True)
    checkpoint = WalCheckpointer(url, interval=3600)
    try:
        _write_rows(worker)
        checkpoint()  # the first call checkpoints
        size = database.stat().st_size
        _write_rows(worker)
        checkpoint()  # within the interval: nothing
        assert database.stat().st_size == size
    finally:
        checkpoint.close()
        worker.dispose()
