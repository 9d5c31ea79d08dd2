"""``farm db upgrade`` and ``farm db downgrade REV``: run the Alembic migrations on the configured database."""

from __future__ import annotations

import typer

from farm.commands._support import fail, reported_errors
from farm.settings import load_settings
from farm.store import migrate

db_app = typer.Typer(help="Create or migrate the farm's database schema.", no_args_is_help=True)


@db_app.command("upgrade")
def upgrade_command(
    revision: str = typer.Argument("head", help="target revision (default: the newest)"),
) -> None:
    """Migrate the database (FARM_DATABASE_URL, or the embedded SQLite file) up to REVISION."""
    _named(revision)
    with reported_errors():
        url = load_settings().database_url
        migrate.upgrade(url, revision)
    typer.echo(f"database at revision {revision}")


@db_app.command("downgrade")
def downgrade_command(
    revision: str = typer.Argument(..., help="target revision; 'base' removes every farm table"),
) -> None:
    """Migrate the database down to REVISION."""
    _named(revision)
    with reported_errors():
        migrate.downgrade(load_settings().database_url, revision)
    typer.echo(f"database at revision {revision}")


def _named(revision: str) -> None:
    """An empty REVISION (``farm db downgrade ""``, an unset shell variable) is one ``Error:``
    line: Alembic failed an assertion on it, a traceback."""
    if not revision:
        raise fail("REVISION is empty: give a revision id, head or base (farm db downgrade --help)")


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")
