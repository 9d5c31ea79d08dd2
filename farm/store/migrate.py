"""Run the Alembic migrations in ``migrations/`` from any working directory.

The scripts are found through the installed ``migrations`` package, not the current directory,
and the database URL is handed over in ``Config.attributes`` (not ``sqlalchemy.url``, whose
``%`` characters configparser would try to interpolate).

Alembic is imported only when a migration runs: a command on a database already at
``HEAD_REVISION`` (every ``farm run`` after the first on the embedded database) reads one row and
goes on, without Alembic's start-up.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from farm.settings import FarmSettings, make_private_folder
from farm.store.db import create_farm_engine, normalize_database_url

if TYPE_CHECKING:
    from alembic.config import Config

    from farm.store.context import Storage

# The newest revision under migrations/versions (tests/test_migrations.py checks it is Alembic's
# head): a new migration sets it.
HEAD_REVISION = "0027"


def migrations_dir() -> Path:
    spec = importlib.util.find_spec("migrations")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the farm's migrations package is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def alembic_config(database_url: str) -> Config:
    from alembic.config import Config

    folder = migrations_dir()
    config = Config(str(folder / "alembic.ini"))
    config.set_main_option("script_location", str(folder))
    config.attributes["database_url"] = normalize_database_url(database_url)
    return config


@contextmanager
def migration_lock(database_url: str) -> Iterator[None]:
    """Hold the lock that serialises the creation and migration of a SQLite database file:
    ``fcntl.flock`` on ``<database>.lock`` beside it (released by the kernel if the process dies).

    Two first commands on a fresh home would otherwise both create the file, switch it to WAL and
    run the migrations at once (a malformed or half-migrated ``farm.db``). The second waits, then
    finds the database at head. Nothing to lock for PostgreSQL (Alembic's own transaction) or an
    in-memory database. The standard library's ``fcntl`` rather than the ``filelock`` package: the
    farm runs on Linux only (the daemon needs ``SO_PEERCRED``) and needs nothing else of it."""
    path = _sqlite_file(database_url)
    if path is None:
        yield
        return
    make_private_folder(path.parent)
    descriptor = os.open(f"{path}.lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing the descriptor releases the lock


def _sqlite_file(database_url: str) -> Path | None:
    url = make_url(normalize_database_url(database_url))
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return Path(url.database)


def upgrade(database_url: str, revision: str = "head") -> None:
    """Migrate the database up to ``revision`` (default: the newest), holding the migration lock."""
    with migration_lock(database_url):
        _upgrade(database_url, revision)


def _upgrade(database_url: str, revision: str = "head") -> None:
    from alembic import command

    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str) -> None:
    """Migrate the database down to ``revision`` (``base`` removes every farm table)."""
    from alembic import command

    _refuse_losing_envelopes(database_url, revision)
    command.downgrade(alembic_config(database_url), revision)


def _refuse_losing_envelopes(database_url: str, revision: str) -> None:
    """Below 0010 the envelopes held in evidence rows would be dropped: refuse before any step
    runs (SQLite would otherwise keep the steps above 0010 that ran before the refusal)."""
    from alembic.util import CommandError

    if revision != "base" and not (revision[:4].isdigit() and revision[:4] < "0010"):
        return
    engine = create_farm_engine(database_url)
    try:
        current = current_revision(engine)
        if current is None or current[:4] < "0010":
            return
        with engine.connect() as connection:
            held = connection.execute(
                text("SELECT COUNT(*) FROM evidence_records WHERE envelope IS NOT NULL")
            ).scalar()
    finally:
        engine.dispose()
    if held:
        raise CommandError(
            f"{held} evidence records hold their envelope in the row (revision 0010): downgrading below "
            "0010 would lose that evidence; the database stays where it is"
        )


def upgrade_embedded(settings: FarmSettings) -> bool:
    """Bring the embedded SQLite database to head (what ``farm run`` does on the embedded default).

    Returns False, and touches nothing, when ``FARM_DATABASE_URL`` names another database: a
    shared database is migrated deliberately with ``farm db upgrade``, not as a side effect.
    """
    if settings.database_url != embedded_database_url(settings):
        return False
    upgrade(settings.database_url)
    return True


def embedded_database_url(settings: FarmSettings) -> str:
    return f"sqlite:///{settings.home / 'farm.db'}"


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    if head is None:
        raise RuntimeError("the migrations have no head revision")
    return head


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def is_at_head(engine: Engine) -> bool:
    """Whether the database is migrated to ``HEAD_REVISION``: one read, no Alembic."""
    try:
        with engine.connect() as connection:
            versions = list(connection.execute(text("SELECT version_num FROM alembic_version")).scalars())
    except DBAPIError:  # no alembic_version table: a database never migrated
        return False
    return versions == [HEAD_REVISION]


def prepare_database(storage: Storage) -> None:
    """The embedded SQLite database is migrated on first use; PostgreSQL needs `farm db upgrade`.
    Its first connection (which creates the file and switches it to WAL), the check and the
    migration hold the migration lock: of two first commands, one migrates, the other waits."""
    url = storage.settings.database_url
    if not url.startswith("sqlite"):
        return
    with migration_lock(url):
        if not is_at_head(storage.engine):
            _upgrade(url)
