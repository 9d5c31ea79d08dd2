"""Helpers shared by the storage commands (db, keys, verify, gc): error reporting and storage opening."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer

from farm.commands._errors import describe
from farm.store.context import Storage, open_storage


def fail(message: str) -> typer.Exit:
    typer.echo(f"Error: {message}", err=True)
    return typer.Exit(1)


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn the farm's known errors (``farm.commands._errors.describe``), and the ValueErrors these
    commands raise for a bad argument (a digest that is not one), into ``Error: …`` on stderr and
    exit status 1; anything else is a bug and keeps its traceback."""
    try:
        yield
    except Exception as error:
        message = describe(error)
        if message is None and isinstance(error, ValueError):
            message = str(error)
        if message is None:
            raise
        raise fail(message) from None


@contextmanager
def storage() -> Iterator[Storage]:
    opened = open_storage()
    try:
        yield opened
    finally:
        opened.close()
