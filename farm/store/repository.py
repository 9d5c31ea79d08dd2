"""Small queries shared by the store's modules: conflict-free inserts, signers, cache look-ups.

The run / job / target state machine lives in ``farm.store.runs``. Everything here runs
unchanged on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, Connection, Insert, Row, Table, or_, update
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Session

from farm.store.models import (
    ActionCacheEntry,
    Base,
    JobState,
    Signer,
    UtcDateTime,
    utcnow,
)

if TYPE_CHECKING:
    from farm.evidence.keys import TrustedSigners

CLAIMABLE_STATES = (JobState.QUEUED,)
FINAL_STATES = (JobState.SUCCEEDED, JobState.FAILED, JobState.CACHED)


def insert_ignoring_conflict(session: Session, model: type[Base], values: dict[str, Any]) -> bool:
    """INSERT a row unless one with the same primary or unique key exists; True if inserted."""
    return insert_ignoring_conflict_returning(session, model, values) is not None


def insert_ignoring_conflict_returning(
    session: Session, model: type[Base], values: dict[str, Any], *returning: str
) -> Row[Any] | None:
    """INSERT a row unless one with the same primary or unique key exists.

    Returns the inserted row's ``returning`` columns (default: its primary key), or None when a
    row with that key was already there (then nothing is written).
    """
    statement = _insert_ignoring_statement(session.get_bind().dialect.name, model.__table__, returning)
    # RETURNING says whether a row went in; rowcount is not reliable for ON CONFLICT on every driver.
    return session.execute(statement, values).first()


@lru_cache(maxsize=64)
def insert_ignoring(dialect: str, table: Table) -> Insert:
    """``INSERT … ON CONFLICT DO NOTHING`` into ``table`` for ``dialect``, built once per table.

    The dialect's module is imported on first use: a SQLite farm never loads PostgreSQL's."""
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table).on_conflict_do_nothing()
    if dialect == "sqlite":
        from sqlalchemy.dialects import sqlite

        return sqlite.insert(table).on_conflict_do_nothing()
    raise RuntimeError(f"unsupported database dialect {dialect!r}")


@lru_cache(maxsize=64)
def _insert_ignoring_statement(dialect: str, table: Table, returning: tuple[str, ...]) -> Insert:
    """Built once per table: the values are bound at execution, so the compiled form is cached too."""
    columns = [table.c[name] for name in returning] if returning else list(table.primary_key.columns)
    return insert_ignoring(dialect, table).returning(*columns)


def one_of(column: ColumnElement[Any], values: Iterable[str]) -> ColumnElement[bool]:
    """``column = v1 OR column = v2 …`` with plain bound values (compiled once, no expanding IN)."""
    return or_(*(column == value for value in values))


def cached_output(session: Session, action_key: str) -> ActionCacheEntry | None:
    """The action-cache entry for ``action_key``: one primary-key look-up."""
    return session.get(ActionCacheEntry, action_key)


def ensure_signer(session: Session, keyid: str, public_key_pem: str) -> None:
    """Record a signer's public key the first time it is seen (trust is not decided here)."""
    insert_ignoring_conflict(
        session,
        Signer,
        {"keyid": keyid, "public_key_pem": public_key_pem, "trusted": False, "first_seen_at": utcnow()},
    )


def sync_signer_trust(session: Session, trusted: TrustedSigners) -> None:
    """Make ``signers.trusted`` mirror the trusted-signers list (the list is the source of truth)."""
    keyids = list(trusted)
    session.execute(
        update(Signer)
        .where(Signer.keyid.in_(keyids))
        .values(trusted=True)
        .execution_options(synchronize_session=False)
    )
    session.execute(
        update(Signer)
        .where(Signer.keyid.not_in(keyids), Signer.trusted.is_(True))
        .values(trusted=False)
        .execution_options(synchronize_session=False)
    )


# ---------------------------------------------------------------------------------------------
# The driver's cursor: a job's few statements, prepared once as text, bound as tuples
# ---------------------------------------------------------------------------------------------


@contextmanager
def driver_cursor(connection: Connection) -> Iterator[Any]:
    """The DBAPI cursor of ``connection``'s transaction, for statements written once per dialect
    as text and bound as tuples: SQLAlchemy's work per execution (compiling or looking up the
    statement, processing each parameter of each row, building a result) cost more than the
    database's own for a job's statements. A driver error leaves as SQLAlchemy's ``DBAPIError``
    (``farm.store.db.STORE_ERRORS``), the connection invalidated when it was lost, as
    SQLAlchemy's own executions do."""
    cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        yield cursor
    except connection.dialect.loaded_dbapi.Error as error:
        statement = getattr(cursor, "query", None)  # psycopg's last query (bytes); sqlite3 keeps none
        if isinstance(statement, bytes):
            statement = statement.decode(errors="replace")
        connection._handle_dbapi_exception(error, statement, None, cursor, None)
    finally:
        cursor.close()


_MOMENT_BINDS: dict[str, Callable[[datetime], Any]] = {}


def bind_moment(dialect: Dialect, moment: datetime) -> Any:
    """``moment`` as SQLAlchemy binds a ``UtcDateTime`` for ``dialect`` (on SQLite, the UTC text
    it writes; on PostgreSQL, the moment in UTC), so rows written through ``driver_cursor`` read
    back like every other."""
    process = _MOMENT_BINDS.get(dialect.name)
    if process is None:
        process = _MOMENT_BINDS[dialect.name] = UtcDateTime()._cached_bind_processor(dialect) or (lambda v: v)
    return process(moment)


def placeholders(dialect: Dialect, sql: str) -> str:
    """``sql`` written with ``?`` placeholders, in ``dialect``'s parameter style."""
    return sql if dialect.paramstyle == "qmark" else sql.replace("?", "%s")
