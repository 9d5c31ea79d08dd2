"""Small queries shared by the store's modules: conflict-free inserts, signers, cache look-ups.

The run / job / target state machine lives in ``farm.store.runs``. Everything here runs
unchanged on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, Insert, Row, Table, or_, update
from sqlalchemy.orm import Session

from farm.store.models import (
    ActionCacheEntry,
    Base,
    JobState,
    Signer,
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
