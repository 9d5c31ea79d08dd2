"""The small blobs of a local object store: one SQLite file beside the blob files.

A fleet run stores about one new blob per two rendered targets, most of them a few KiB (rendered
manifests, request packs). As a file each costs the filesystem an inode, and what that costs
depends on the filesystem's state, not on the farm: on the machines this farm is benchmarked on,
creating one file took 20 to 700 microseconds of system CPU on the same ext4 filesystem within an
hour, more than the rest of a worker's work on a target. A row of one SQLite table costs about
35 microseconds whatever the filesystem's state, and a fleet re-rendered hourly does not spend
half a million inodes an hour. SQLite keeps small blobs faster than a filesystem does
(https://www.sqlite.org/fasterthanfs.html); large ones stay files.

``SmallBlobs`` holds the table ``blobs (digest, size, modified, data)`` in ``small-blobs.db``
(mode 0600, write-ahead log, every commit flushed to disk before it returns: a blob is durable
before any row names it). It stores bytes and answers what it holds; the object store verifies
every blob it reads against its digest, as it does a file's. Each thread of each process has its
own connection (the worker's blob writer is a thread), opened when first needed; nothing is
created until the first blob is written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from farm.identity.canonical import sha256_hex

FILE_NAME = "small-blobs.db"
SCHEMA_VERSION = 1
_BUSY_TIMEOUT_MS = 60_000  # the workers of a pool write their batches one after another
_PAGE = 1_000  # rows per query when listing, and digests per IN (...)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS blobs (
    digest TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    modified REAL NOT NULL,
    data BLOB NOT NULL
)
"""


class SmallBlobsError(RuntimeError):
    """The small-blob file could not be read or written; the message names it and why.
    ``full``: the disk (or a quota) is full; ``refused``: the medium refused (full, read-only,
    failing, unreadable), not a blob."""

    def __init__(self, message: str, *, primary_code: int | None, disk_full: bool = False) -> None:
        self.full = primary_code == sqlite3.SQLITE_FULL or (disk_full and primary_code in _IO_FAILURES)
        self.refused = primary_code in _REFUSALS
        if self.full:  # SQLite's words for a log it could not grow may not say why
            message += f" ({os.strerror(errno.ENOSPC)})"
        super().__init__(message)


_DAMAGE = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
RECOVERY = (
    "restore the object store folder from a backup, then farm verify --all says which blobs are"
    " missing; see docs/reliability.md, 'A damaged small-blobs.db'"
)
# what SQLite says when growing a file (its log, its shared index) fails, a full disk among the causes
_IO_FAILURES = frozenset({sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN})
_REFUSALS = frozenset(
    {
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_CORRUPT,
        sqlite3.SQLITE_NOTADB,
        sqlite3.SQLITE_PERM,
    }
)


class SmallBlobs:
    def __init__(self, root: Path) -> None:
        self.path = Path(root) / FILE_NAME
        self._local = threading.local()

    def get(self, digest: str) -> bytes | None:
        """The stored bytes of ``digest`` (not verified here), None when it holds none."""
        row = self._read("SELECT data FROM blobs WHERE digest = ?", (digest,))
        return None if row is None else bytes(row[0])

    def holds(self, digest: str) -> bool:
        return self._read("SELECT 1 FROM blobs WHERE digest = ?", (digest,)) is not None

    def held(self, digests: Iterable[str]) -> set[str]:
        """Which of ``digests`` it holds."""
        wanted = list(dict.fromkeys(digests))
        if not wanted or self._connection(create=False) is None:
            return set()
        found: set[str] = set()
        for start in range(0, len(wanted), _PAGE):
            chunk = wanted[start : start + _PAGE]
            query = f"SELECT digest FROM blobs WHERE digest IN ({', '.join('?' * len(chunk))})"
            found.update(digest for (digest,) in self._execute(query, chunk).fetchall())
        return found

    def put(self, blobs: Sequence[tuple[str, bytes]]) -> None:
        """Store each ``(digest, bytes)`` once, durably before this returns: a stored copy that
        hashes to its digest is kept (its age refreshed, so a sweep leaves it to the row about to
        name it), one that does not is replaced, the rest are added; in one transaction."""
        wanted = dict(blobs)  # a batch's outputs repeat (one application's identical clusters)
        if not wanted:
            return
        connection = self._connection(create=True)
        assert connection is not None
        now = time.time()
        with self._errors("write"):
            connection.execute("BEGIN IMMEDIATE")  # the look-up sees every commit before ours
            try:
                stored = self._stored(connection, list(wanted))
                connection.executemany(
                    "INSERT INTO blobs (digest, size, modified, data) VALUES (?, ?, ?, ?)",
                    [
                        (digest, len(data), now, data)
                        for digest, data in wanted.items()
                        if digest not in stored
                    ],
                )
                good = [digest for digest, data in stored.items() if sha256_hex(data) == digest]
                connection.executemany(
                    "UPDATE blobs SET modified = ? WHERE digest = ?", [(now, d) for d in good]
                )
                connection.executemany(
                    "UPDATE blobs SET data = ?, size = ?, modified = ? WHERE digest = ?",
                    [(wanted[d], len(wanted[d]), now, d) for d in stored.keys() - set(good)],
                )
                connection.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                raise

    def delete(self, digest: str) -> None:
        """Remove a blob (a sweep's) and give its pages back to the filesystem, as removing its file
        would; not flushed to disk at once: a delete lost to a power cut leaves a blob the next
        sweep removes, and a sweep of many blobs waits for no disk."""
        connection = self._connection(create=False)
        if connection is not None:
            with self._errors("write"):
                connection.execute("PRAGMA synchronous=NORMAL")
                try:
                    connection.execute("DELETE FROM blobs WHERE digest = ?", (digest,))
                    connection.execute("PRAGMA incremental_vacuum")
                finally:
                    connection.execute("PRAGMA synchronous=FULL")

    def listed(self) -> Iterator[tuple[str, int, datetime]]:
        """``(digest, size, modified)`` of every blob, in digest order, a page per query (the caller
        may delete what it is given meanwhile: no query stays open across pages)."""
        after = ""
        while True:
            if self._connection(create=False) is None:
                return
            rows = self._execute(
                "SELECT digest, size, modified FROM blobs WHERE digest > ? ORDER BY digest LIMIT ?",
                (after, _PAGE),
            ).fetchall()
            for digest, size, modified in rows:
                yield digest, size, datetime.fromtimestamp(modified, UTC)
            if len(rows) < _PAGE:
                return
            after = rows[-1][0]

    # -- connections -------------------------------------------------------------------------

    def _stored(self, connection: sqlite3.Connection, digests: list[str]) -> dict[str, bytes]:
        stored: dict[str, bytes] = {}
        for start in range(0, len(digests), _PAGE):
            chunk = digests[start : start + _PAGE]
            query = f"SELECT digest, data FROM blobs WHERE digest IN ({', '.join('?' * len(chunk))})"
            stored.update((digest, bytes(data)) for digest, data in connection.execute(query, chunk))
        return stored

    def _read(self, query: str, parameters: Sequence[object]) -> tuple | None:
        if self._connection(create=False) is None:
            return None
        return self._execute(query, parameters).fetchone()

    def _execute(self, query: str, parameters: Sequence[object]) -> sqlite3.Cursor:
        connection = self._connection(create=False)
        assert connection is not None
        with self._errors("read"):
            return connection.execute(query, parameters)

    def _connection(self, *, create: bool) -> sqlite3.Connection | None:
        """This thread's connection; None when the file does not exist and ``create`` is false
        (a store nothing was written to stays empty)."""
        local = self._local
        if getattr(local, "pid", None) == os.getpid():
            return local.connection
        if not create and not self.path.exists():
            return None
        with self._errors("open"):
            connection = _open(self.path)
        local.pid, local.connection = os.getpid(), connection
        return connection

    @contextlib.contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as error:
            code = getattr(error, "sqlite_errorcode", None)
            primary = None if code is None else code & 0xFF
            message = f"{self.path}: could not {doing} the small-blob database: {error}"
            if primary in _DAMAGE:
                message += f": the file is damaged: {RECOVERY}"
            raise SmallBlobsError(
                message, primary_code=primary, disk_full=_no_space_left(self.path.parent)
            ) from error


def _no_space_left(folder: Path) -> bool:
    """Whether the filesystem holding ``folder`` has no block left (SQLite reports a log it could
    not grow as an I/O error, not as a full disk)."""
    try:
        return os.statvfs(folder).f_bavail == 0
    except OSError:
        return False


def _open(path: Path) -> sqlite3.Connection:
    if not path.exists():  # created owner-only: its log files take its mode
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600))
    # autocommit: each statement is its own transaction unless ``put`` begins one
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=True)
    connection.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        connection.close()
        raise sqlite3.DatabaseError(
            f"its schema version {version} is newer than this farm's ({SCHEMA_VERSION}): upgrade the farm"
        )
    if version < SCHEMA_VERSION:
        # a new file: the pages a sweep frees go back to the filesystem (``delete``); set before
        # anything is written to it (the log mode included), a no-op on a file already written
        connection.execute("PRAGMA auto_vacuum=INCREMENTAL")
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")  # a commit is on disk before a row names its blobs
    if version < SCHEMA_VERSION:
        connection.execute(_SCHEMA)
        connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    return connection
