"""Helpers shared by the storage commands (db, keys, verify, gc): error reporting and storage opening."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from alembic.util import CommandError
from sqlalchemy.exc import SQLAlchemyError

from farm.evidence.errors import EvidenceError
from farm.evidence.keys import KeyFileError
from farm.settings import SettingsError
from farm.store.context import Storage, open_storage
from farm.store.objects import ObjectStoreError

EXPECTED_ERRORS = (
    CommandError,
    SettingsError,
    KeyFileError,
    EvidenceError,
    ObjectStoreError,
    SQLAlchemyError,
    ValueError,
    OSError,
)


def fail(message: str) -> typer.Exit:
    typer.echo(f"Error: {message}", err=True)
    return typer.Exit(1)


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn the farm's expected errors into ``Error: …`` on stderr and exit status 1."""
    try:
        yield
    except EXPECTED_ERRORS as error:
        raise fail(_describe(error)) from None


def _describe(error: BaseException) -> str:
    if isinstance(error, SQLAlchemyError):
        return f"database: {getattr(error, 'orig', None) or error}"
    return str(error)


@contextmanager
def storage() -> Iterator[Storage]:
    opened = open_storage()
    try:
        yield opened
    finally:
        opened.close()
