"""Helpers shared by the storage commands (db, keys, verify, gc): error reporting and storage opening."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from farm.catalog import CatalogError, CatalogSnapshot
from farm.catalog.reuse import load_catalog_reusing
from farm.commands._errors import describe
from farm.settings import FarmSettings, home_defaults, load_settings
from farm.store.context import Storage, missing_database_file, open_storage


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
    except BrokenPipeError:
        raise  # the output's reader went away: farm.cli ends quietly
    except Exception as error:
        message = describe(error)
        if message is None and isinstance(error, ValueError):
            message = str(error)
        if message is None:
            raise
        raise fail(message) from None


@contextmanager
def storage(existing: bool = False) -> Iterator[Storage]:
    """The configured storage; ``existing``: refuse (see ``open_existing_storage``) rather than
    create an empty farm."""
    opened = open_existing_storage() if existing else open_storage()
    try:
        yield opened
    finally:
        opened.close()


def open_existing_storage(settings: FarmSettings | None = None) -> Storage:
    """The storage of a farm that exists, for a command that only reads it: where no database
    is, one ``Error:`` line says what to do (exit 1) instead of creating an empty ``./.farm/``."""
    with reported_errors():
        settings = settings or load_settings()
        missing = missing_database_file(settings)
    if missing is not None:
        raise fail(_no_farm_here(settings, missing))
    return open_storage(settings)


def no_farm_here(settings: FarmSettings) -> str:
    """What to say when ``settings`` name a SQLite farm whose database file does not exist."""
    missing = missing_database_file(settings)
    assert missing is not None, "only asked where no farm is"
    return _no_farm_here(settings, missing)


def resolve_run(opened: Storage, typed: str, option: str = "") -> str:
    """The id of the run ``typed`` names (an id, a unique prefix of one, or ``latest``), or one
    ``Error:`` line (after ``option``, the option it was given to) saying none or which several it
    could be (exit 1)."""
    from farm.store.db import read_scope
    from farm.store.run_ids import RunIdError, resolve_run_id

    try:
        with read_scope(opened.sessions) as session:
            return resolve_run_id(session, typed)
    except RunIdError as error:
        raise fail(f"{option}: {error}" if option else str(error)) from None


def _no_farm_here(settings: FarmSettings, missing: Path) -> str:
    if settings.database_url == home_defaults(settings.home)["database_url"]:
        return (
            f"no farm home at {settings.home} (no {missing.name} there): run `farm run CATALOG` in "
            "this folder first, or set FARM_HOME (or FARM_DATABASE_URL) to the farm you mean"
        )
    return (
        f"no farm database at {missing} (FARM_DATABASE_URL): run `farm run CATALOG` or `farm db "
        "upgrade` first, or point FARM_DATABASE_URL at the farm you mean"
    )


def chosen_executor(settings: FarmSettings, executor: str | None) -> str:
    """``--executor``, else Celery once a broker is set, else ``FARM_EXECUTOR``; anything but
    local or celery is one ``Error:`` line (exit 2)."""
    from farm.execution.executors import chosen_executor_name

    try:
        return chosen_executor_name(settings, executor)
    except ValueError as error:
        typer.echo(f"Error: {error}", err=True)
        raise typer.Exit(2) from None


def load_catalog_or_exit(catalog: Path, settings: FarmSettings) -> CatalogSnapshot:
    """The catalog at ``catalog``, or one ``Error:`` line per problem (exit 1)."""
    try:
        return load_catalog_reusing(catalog, max_file_bytes=settings.catalog_max_file_bytes)
    except CatalogError as exc:
        for problem in exc.problems:
            typer.echo(f"Error: {problem}", err=True)
        raise typer.Exit(1) from None
