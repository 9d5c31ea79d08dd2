"""Opening the farm's storage from settings: the entry point for commands, the scheduler and workers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from farm.settings import FarmSettings, load_settings
from farm.store.db import create_farm_engine, make_session_factory, sqlite_file
from farm.store.objects import ObjectStore, open_object_store


@dataclass
class Storage:
    settings: FarmSettings
    engine: Engine
    sessions: sessionmaker[Session]
    objects: ObjectStore

    def close(self) -> None:
        self.engine.dispose()


def open_storage(
    settings: FarmSettings | None = None,
    *,
    synchronous_commit: bool = True,
    checkpoints_elsewhere: bool = False,
    journals_in_memory: bool = False,
) -> Storage:
    """Engine, session factory and object store for ``settings`` (default: from the environment);
    ``synchronous_commit`` False: PostgreSQL commits without waiting for their flush (a worker's,
    ``FARM_WORKER_SYNCHRONOUS_COMMIT``); ``checkpoints_elsewhere`` and ``journals_in_memory``: see ``create_farm_engine``."""
    settings = settings or load_settings()
    engine = create_farm_engine(
        settings.database_url,
        synchronous_commit=synchronous_commit,
        checkpoints_elsewhere=checkpoints_elsewhere,
        journals_in_memory=journals_in_memory,
    )
    return Storage(settings, engine, make_session_factory(engine), open_object_store(settings))


def missing_database_file(settings: FarmSettings) -> Path | None:
    """The SQLite file ``settings`` name when it does not exist yet (opening the storage would
    create it, and the home around it), else None (it exists, or the database is PostgreSQL)."""
    path = sqlite_file(settings.database_url)
    return path if path is not None and not path.exists() else None
