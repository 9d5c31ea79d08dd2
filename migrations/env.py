"""Alembic environment of the farm.

Migrations are hand-written and never import the ORM models, so ``target_metadata`` is None
here; ``tests/test_migrations.py`` compares the migrated schema with the models instead.

The database comes from, in order: a connection passed in ``config.attributes["connection"]``,
a URL in ``config.attributes["database_url"]``, the ``sqlalchemy.url`` option, or the farm's
settings (``FARM_DATABASE_URL``, else the embedded SQLite file).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.pool import NullPool

from farm.settings import load_settings
from farm.store.db import create_farm_engine

config = context.config


def _database_url() -> str:
    return (
        config.attributes.get("database_url")
        or config.get_main_option("sqlalchemy.url")
        or load_settings().database_url
    )


def run_migrations_offline() -> None:
    context.configure(url=_database_url(), target_metadata=None, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run_with(connection)
        return
    engine = create_farm_engine(_database_url(), poolclass=NullPool)
    try:
        with engine.connect() as new_connection:
            _run_with(new_connection)
    finally:
        engine.dispose()


def _run_with(connection: object) -> None:
    # a transaction per revision, on both databases: a revision that refuses (a downgrade its rows
    # forbid) leaves the database at the revision before it, as its error says
    context.configure(connection=connection, target_metadata=None, transaction_per_migration=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
