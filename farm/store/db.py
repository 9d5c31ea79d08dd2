"""Engines and sessions for PostgreSQL (psycopg 3) and SQLite.

``postgresql://`` and ``postgres://`` URLs are rewritten to ``postgresql+psycopg://`` so the
driver is always psycopg 3. SQLite connections run in WAL mode with foreign keys enforced and a
busy timeout, so a scheduler and a few local workers can share the embedded file.

SQLite transactions start with ``BEGIN IMMEDIATE`` (SQLAlchemy's documented pysqlite recipe:
pysqlite's own implicit BEGIN is switched off and the engine's ``begin`` event emits ours).
pysqlite alone begins only before the first INSERT/UPDATE/DELETE, so the reads of a transaction
ran outside it and a read-then-write could overwrite a concurrent commit; a deferred BEGIN instead
fails with "database is locked" when a stale read snapshot tries to write, without waiting on the
busy timeout. Taking the write lock when the transaction begins makes concurrent writers queue on
``busy_timeout`` and every transaction read the latest commit.

Work that only reads (progress polls, run summaries, the completion check after a job) uses
``read_scope`` instead: on SQLite its transaction begins DEFERRED, so it reads one consistent WAL
snapshot without taking the write lock and never makes a writer wait. It must not write.

Every SQLite engine of a process is closed when the process exits (``close_sqlite_engines``, an
exit handler), even when ``farm run`` leaves without the interpreter's teardown: the last
connection to close checkpoints the write-ahead log into the database and removes it. Left open,
the log is never restarted from its beginning (a process that opens it cannot know its frames were
already copied), so it grew by every run's writes, hundreds of MiB per 100,000-target run, and
every open read all of it back.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import os
import sqlite3
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from farm.settings import SettingsError, make_private_folder, redact_url

SQLITE_BUSY_TIMEOUT_MS = 30_000
READ_ONLY_OPTION = "farm_read_only"


def normalize_database_url(url: str) -> str:
    """Pin PostgreSQL to psycopg 3; leave other URLs alone. Names FARM_DATABASE_URL when unusable
    (a :class:`SettingsError` that never shows the URL's password)."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    try:
        parsed = make_url(url)
    except Exception:  # its message would echo the URL, password and all
        raise SettingsError(
            "FARM_DATABASE_URL: not a database URL (expected postgresql://… or sqlite:///…; "
            "the value is not shown, as it may hold a password)"
        ) from None
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise SettingsError(
            f"FARM_DATABASE_URL: only sqlite and postgresql are supported, got {redact_url(url)!r}"
        )
    return url


def preload_driver(url: str) -> None:
    """Import the dialect and driver of ``url`` in this process: a Celery worker's main process,
    before its pool processes fork, so each starts with them loaded instead of importing them
    (psycopg and its dialect: about 0.4 s) in its first job."""
    make_url(normalize_database_url(url)).get_dialect().import_dbapi()


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite database URL (None for PostgreSQL or an in-memory SQLite)."""
    parsed = make_url(normalize_database_url(url))
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def create_farm_engine(
    url: str,
    *,
    synchronous_commit: bool = True,
    checkpoints_elsewhere: bool = False,
    journals_in_memory: bool = False,
    **kwargs: Any,
) -> Engine:
    """An engine for ``url`` with the farm's connection settings applied. ``synchronous_commit``
    False (PostgreSQL): its commits return before their write-ahead log is flushed
    (``FARM_WORKER_SYNCHRONOUS_COMMIT``); SQLite ignores it. ``checkpoints_elsewhere`` (SQLite; a
    local pool worker, whose pool's owner checkpoints while it waits, ``WalCheckpointer``): its
    commits checkpoint the write-ahead log only once it holds ``DEFERRED_CHECKPOINT_PAGES``.
    ``journals_in_memory`` (SQLite; a worker, whose statements a job's size bounds): SQLite's
    temporary storage stays in memory (``temp_store=MEMORY``). A multi-row statement inside a
    transaction keeps the pages it changes in a statement journal, which SQLite moves to a new
    temporary file once it passes 64 KiB: a job's record of its evidence rows did, one job in two
    at 10 targets a job, and creating a file cost 25 to 950 µs of system CPU on a loaded ext4
    (docs/performance.md). Other processes keep files: ``farm gc``'s deletes and ``farm verify``'s
    sorts are bounded by the database's size, not by a job's."""
    url = normalize_database_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            _create_private_file(Path(parsed.database))
        engine = create_engine(url, **kwargs)
        pages = DEFERRED_CHECKPOINT_PAGES if checkpoints_elsewhere else SQLITE_CHECKPOINT_PAGES
        if _checkpoints_when_closed:
            pages = 0  # never on commit (``checkpoint_when_closed``)
        configure = functools.partial(
            _configure_sqlite_connection, checkpoint_pages=pages, journals_in_memory=journals_in_memory
        )
        event.listen(engine, "connect", configure)
        event.listen(engine, "begin", _begin_immediate)
        _SQLITE_ENGINES.add(engine)
        return engine
    options = _with_custom_plans(parsed.query.get("options"))
    if not synchronous_commit:
        options = f"{options} {ASYNC_COMMITS}"
    connect_args = {"options": options} | kwargs.pop("connect_args", {})
    return create_engine(url, pool_pre_ping=True, connect_args=connect_args, **kwargs)


CUSTOM_PLANS = "-c plan_cache_mode=force_custom_plan"
ASYNC_COMMITS = "-c synchronous_commit=off"


def _with_custom_plans(options: str | tuple[str, ...] | None) -> str:
    """libpq ``options`` that plan every statement with its own parameters and the tables' current
    sizes. psycopg prepares a statement on its fifth execution, and PostgreSQL may then keep one
    generic plan for the connection's life: a plan made while ``evidence_records`` and
    ``action_cache`` were small (a sequential scan) stayed in a worker's pooled connection, so
    each job's look-ups read every row earlier runs left (a job of the sixth run on one database
    spent ten times the first's time in them). A custom plan costs well under a millisecond."""
    given = options if isinstance(options, str) else " ".join(options or ())
    return f"{given} {CUSTOM_PLANS}".strip()


# A job's statements on PostgreSQL, planned once per connection: each has an index to read by its
# parameters, so one generic plan made without sequential scans fits every table size.
_JOB_PLANS = ("SET plan_cache_mode = force_generic_plan", "SET enable_seqscan = off")
_JOB_PLANS_RESET = ("RESET plan_cache_mode", "RESET enable_seqscan")


@contextmanager
def job_plans_kept(connection: Connection) -> Iterator[None]:
    """For the block, on PostgreSQL, ``connection``'s statements keep the one plan psycopg's
    prepared statement gets (a generic plan, which may not scan a table whole) instead of a
    custom plan per execution (``_with_custom_plans``): planning a job's claim, record and
    finish each time took about half of PostgreSQL's CPU per job. A generic plan made while the
    tables were small could scan them whole; one made without sequential scans reads by index
    whatever their size. The connection's settings are restored after the block (it goes back
    to the pool). Nothing on SQLite. ``connection`` is outside any transaction."""
    if connection.dialect.name != "postgresql":
        yield
        return
    with connection.begin():
        for setting in _JOB_PLANS:
            connection.exec_driver_sql(setting)
    try:
        yield
    finally:
        with contextlib.suppress(*STORE_ERRORS):
            if connection.in_transaction():  # the block ended in the middle of one (an error)
                connection.rollback()
            with connection.begin():
                for setting in _JOB_PLANS_RESET:
                    connection.exec_driver_sql(setting)


_SQLITE_ENGINES: weakref.WeakSet[Engine] = weakref.WeakSet()
_checkpoints_when_closed = False


def checkpoint_when_closed() -> None:
    """The SQLite engines this process makes from now on never checkpoint the write-ahead log
    when they commit: ``close_sqlite_engines`` does. For the farm daemon, which closes a command's
    engines once its client has the exit status: a no-change re-run of 100,000 targets commits
    about 20,000 pages, and the checkpoint its commit took inline (copying them into the database
    and syncing it) was most of the commit the client waited for."""
    global _checkpoints_when_closed
    _checkpoints_when_closed = True


def close_sqlite_engines() -> None:
    """Checkpoint (``PASSIVE``: never waiting for another connection) and close the pooled
    connections of every SQLite engine this process still has (see the module docstring); an
    engine used afterwards opens new ones."""
    for engine in list(_SQLITE_ENGINES):
        _checkpoint(engine)
        engine.dispose()


def _checkpoint(engine: Engine) -> None:
    """Checkpoint the engine's database through one of its pooled connections, if it has one (a
    closing connection checkpoints only when it is the database's last: a daemon's pool workers
    keep theirs open)."""
    checkedin = getattr(engine.pool, "checkedin", None)
    if checkedin is None or checkedin() == 0:
        return
    with contextlib.suppress(*STORE_ERRORS, sqlite3.Error):
        pooled = engine.raw_connection()
        try:
            pooled.driver_connection.execute("PRAGMA wal_checkpoint(PASSIVE)")  # type: ignore[union-attr]
        finally:
            pooled.close()


atexit.register(close_sqlite_engines)


SQLITE_CACHE_KIB = 128 * 1024


def _create_private_file(database: Path) -> None:
    """A new SQLite file is created empty with mode 0600 in a 0700 folder before SQLite opens it;
    SQLite gives its -wal and -shm files the database file's mode.

    An existing file is never opened here: closing any descriptor of a file drops every POSIX lock
    this process holds on it, the locks of its SQLite connections included. Another process then
    took itself for the last connection at its exit, checkpointed and deleted the WAL while this
    one's workers were writing to it, and their committed jobs were lost (a farm run racing
    farm db upgrade on a fresh home, tests/test_first_commands.py)."""
    make_private_folder(database.parent)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(database, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def _configure_sqlite_connection(
    dbapi_connection: Any, _record: Any, *, checkpoint_pages: int, journals_in_memory: bool = False
) -> None:
    # pysqlite would BEGIN (deferred) by itself before the first write; SQLAlchemy begins instead.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        # SQLite's default page cache is 2 MiB: a run of 100,000 targets inserts into seven
        # indexes of render_targets, and with the default cache most of those inserts read their
        # B-tree pages back from the file. Memory is taken only as pages are cached.
        cursor.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
        cursor.execute(f"PRAGMA wal_autocheckpoint={checkpoint_pages}")
        if journals_in_memory:
            cursor.execute("PRAGMA temp_store=MEMORY")
    finally:
        cursor.close()


SQLITE_CHECKPOINT_PAGES = 1_000  # SQLite's own default
# SQLite checkpoints its write-ahead log from the connection whose commit took it past 1,000 pages
# (4 MiB): a pool worker then stopped for the copy and its flushes, about 10 ms every seventh job
# of a run, and the other worker often waited for its write lock meanwhile. A worker's commits
# leave that to its pool's owner (``WalCheckpointer``) unless the log grows past this.
DEFERRED_CHECKPOINT_PAGES = 16_384


class WalCheckpointer:
    """Checkpoints an SQLite database's write-ahead log (``PASSIVE``: never waits for a writer or
    a reader) at most every ``interval`` seconds, from a connection of its own: the local pool's
    owner calls it while it waits for its workers, whose commits leave checkpoints to it. Does
    nothing for PostgreSQL."""

    def __init__(self, url: str, interval: float = 0.1) -> None:
        self._database = sqlite_file(url)
        self._interval, self._last = interval, 0.0
        self._connection: Any = None

    def __call__(self) -> None:
        if self._database is None or time.monotonic() - self._last < self._interval:
            return
        self._last = time.monotonic()
        try:  # a checkpoint skipped now (the file gone, another checkpoint running) is taken by the next
            if self._connection is None:  # read-write, never created: the run's database exists
                uri = f"{self._database.resolve().as_uri()}?mode=rw"
                self._connection = sqlite3.connect(
                    uri, uri=True, isolation_level=None, check_same_thread=False
                )
            self._connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _begin_immediate(connection: Any) -> None:
    if connection.get_execution_options().get(READ_ONLY_OPTION):
        connection.exec_driver_sql("BEGIN")  # deferred: a read snapshot, no write lock
    else:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


_turns: dict[tuple[int, str], list[int]] = {}  # (process, lock file) → [its descriptor, depth]


@functools.lru_cache(maxsize=16)
def _turn_file(url: str) -> str | None:
    path = sqlite_file(url)
    return None if path is None else f"{path}.write-turn"


@contextmanager
def write_turn(engine: Engine) -> Iterator[None]:
    """Wait for this process's turn to write to the engine's SQLite file on a lock file beside it
    (``fcntl.flock``), then hold it for the block: a transaction of the block begins only once the
    writer before it committed. Nothing on PostgreSQL or in memory.

    Without it, a worker whose ``BEGIN IMMEDIATE`` finds the write lock taken waits in SQLite's
    busy handler, which sleeps 1, 2, 5, 10 ms between its tries: the local pool's workers, taking
    turns to record their jobs a few hundred microseconds each, lost milliseconds each time. A
    blocking ``flock`` wakes the next writer when the lock is released. Writers that do not take
    the turn (planning, the API) still meet the busy handler, and nobody waits for the turn while
    holding the write lock, so the two cannot wait on each other. A turn is a process's: threads
    of one process do not wait for each other's."""
    lock_file = _turn_file(engine.url.render_as_string(hide_password=False))
    if lock_file is None:
        yield
        return
    key = (os.getpid(), lock_file)
    turn = _turns.get(key)
    if turn is None:  # its descriptor is kept open: closing it would release a turn held on another
        turn = _turns[key] = [os.open(lock_file, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600), 0]
    if turn[1] == 0:
        fcntl.flock(turn[0], fcntl.LOCK_EX)
    turn[1] += 1  # taken again inside the block: held until the outermost block ends
    try:
        yield
    finally:
        turn[1] -= 1
        if turn[1] == 0:
            fcntl.flock(turn[0], fcntl.LOCK_UN)


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded attributes after commit (handy for returning records)."""
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def session_scope(factory: sessionmaker[Session], *, bind: Connection | None = None) -> Iterator[Session]:
    """One transaction: commit on success, roll back on any exception. On ``bind`` (a connection
    outside any transaction, which the session begins and ends) when given."""
    session = factory() if bind is None else factory(bind=bind)
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


@contextmanager
def read_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One read-only transaction: on SQLite a deferred BEGIN, so it never waits for or blocks a writer.

    Reads see one consistent snapshot of the latest commit. Writing in it is a mistake: on SQLite
    it could fail with "database is locked" instead of waiting its turn.
    """
    session = factory()
    try:
        session.connection(execution_options={READ_ONLY_OPTION: True})
        yield session
        session.commit()  # ends the read transaction; keeps loaded attributes (expire_on_commit=False)
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


@contextmanager
def connection_scope(factory: sessionmaker[Session]) -> Iterator[Connection]:
    """``session_scope`` for Core statements only: one transaction on a pooled connection, without
    an ORM session around it (a job's claim runs two statements, and a session's bookkeeping cost
    more than they do)."""
    with _engine(factory).begin() as connection:
        yield connection


@contextmanager
def read_connection(factory: sessionmaker[Session]) -> Iterator[Connection]:
    """``read_scope`` for Core statements only. It must not write."""
    with _engine(factory).connect() as connection:
        connection = connection.execution_options(**{READ_ONLY_OPTION: True})
        with connection.begin():
            yield connection


def writers_serialized(session: Session) -> bool:
    """Whether the database lets one write transaction run at a time (SQLite, whose transactions
    begin IMMEDIATE): a write transaction then reads every commit made before it, and no other
    write can commit until it does."""
    return session.get_bind().dialect.name == "sqlite"


def _engine(factory: sessionmaker[Session]) -> Engine:
    return factory.kw["bind"]


# Driver and connection failures of the database, as one tuple: a caller that retries on an
# infrastructure error (the Celery task) names the store's errors, never SQLAlchemy's.
STORE_ERRORS: tuple[type[Exception], ...] = (OperationalError, DBAPIError)
# The database failed as a service (unreachable, gone, locked past its wait, not migrated), not a
# statement as written: what the API answers 503 for.
DATABASE_UNAVAILABLE: type[Exception] = OperationalError
