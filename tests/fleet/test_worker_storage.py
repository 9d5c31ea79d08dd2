"""The storage a Celery worker's tasks use: on PostgreSQL its commits return before their
write-ahead log is flushed (FARM_WORKER_SYNCHRONOUS_COMMIT, off by default), as the embedded
SQLite database commits; the engine still plans each statement for its parameters. A worker loads
its database driver before its pool forks, and each pool process makes its storage and loads its
key as it starts, not in its first job."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest_store import DatabaseFactory
from sqlalchemy import text

from farm.store.migrate import upgrade

REDIS_URL = os.environ.get("FARM_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture(scope="module")
def worker_database(databases: DatabaseFactory) -> str:
    """A PostgreSQL database of its own: the tests' shared one commits asynchronously throughout."""
    url = databases.empty("postgresql")
    upgrade(url)
    return url


@pytest.fixture
def worker_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, worker_database: str
) -> Iterator[pytest.MonkeyPatch]:
    for name in list(os.environ):
        if name.startswith("FARM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FARM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FARM_DATABASE_URL", worker_database)
    monkeypatch.setenv("FARM_BROKER_URL", REDIS_URL)
    from workers import tasks

    tasks._storage.cache_clear()
    yield monkeypatch
    if tasks._storage.cache_info().currsize:
        tasks._storage().close()
    tasks._storage.cache_clear()


def _worker_session_settings() -> dict[str, str]:
    from workers import tasks

    tasks._storage.cache_clear()
    storage = tasks._storage()
    with storage.engine.connect() as connection:
        return {
            name: connection.execute(text(f"SHOW {name}")).scalar_one()
            for name in ("synchronous_commit", "plan_cache_mode")
        }


def test_a_worker_s_postgresql_commits_do_not_wait_for_the_flush_by_default(
    worker_env: pytest.MonkeyPatch,
) -> None:
    assert _worker_session_settings() == {
        "synchronous_commit": "off",
        "plan_cache_mode": "force_custom_plan",
    }


def test_farm_worker_synchronous_commit_on_makes_a_worker_s_commits_wait_for_the_flush(
    worker_env: pytest.MonkeyPatch,
) -> None:
    worker_env.setenv("FARM_WORKER_SYNCHRONOUS_COMMIT", "on")
    assert _worker_session_settings() == {
        "synchronous_commit": "on",
        "plan_cache_mode": "force_custom_plan",
    }


def test_a_worker_loads_its_driver_before_forking_and_a_pool_process_starts_with_storage_and_key(
    worker_database: str, tmp_path: Path
) -> None:
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")} | {
        "FARM_HOME": str(tmp_path / "home"),
        "FARM_DATABASE_URL": worker_database,
        "FARM_BROKER_URL": REDIS_URL,
    }
    for command in (["keys", "generate"], ["keys", "trust", str(tmp_path / "home" / "keys" / "signing.pub")]):
        done = subprocess.run(
            [sys.executable, "-m", "farm", *command], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    # A fresh interpreter: what the worker's main process has once it imported its tasks, then what
    # a pool process has once Celery signalled its start (as it does after the fork).
    probe = (
        "import sys\n"
        "from celery.signals import worker_process_init\n"
        "from workers import tasks\n"
        "print('psycopg' in sys.modules, tasks._storage.cache_info().currsize, tasks._signer.cache_info().currsize)\n"
        "worker_process_init.send(sender=None)\n"
        "print('psycopg' in sys.modules, tasks._storage.cache_info().currsize, tasks._signer.cache_info().currsize)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["True 0 0", "True 1 1"]
