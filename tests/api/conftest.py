"""A finished fleet run (one broken application) on SQLite and PostgreSQL, and the API over it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from fleet.conftest import FleetEnv, catalog, fleet_env, make_catalog  # noqa: F401

from farm.api import create_app
from farm.execution.local import run_local
from farm.fleet.service import plan_catalog

TOKEN = "s3cret-token"


@dataclass
class FinishedRun:
    env: FleetEnv
    run_id: str
    catalog_root: Path


@pytest.fixture
def finished_run(fleet_env: FleetEnv, tmp_path: Path) -> FinishedRun:  # noqa: F811
    built = make_catalog(tmp_path / "catalog", apps=3, clusters=("cluster-a", "cluster-b"))
    built.break_app("app-2")
    _, planned = plan_catalog(fleet_env.storage, built.root)
    run_local(fleet_env.settings, planned.queued, processes=1)
    return FinishedRun(fleet_env, planned.run_id, built.root)


@pytest.fixture
def client(finished_run: FinishedRun) -> Iterator[TestClient]:
    app = create_app(finished_run.env.storage, {"test-fleet": finished_run.catalog_root}, TOKEN)
    with TestClient(app) as test_client:
        yield test_client


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"
QUALIFIED_SUBJECT = ("prod-nginx", "ingress-class=public")


@dataclass
class ExampleFleet:
    """A finished run of a copy of the shipped examples/fleet, one subject qualified."""

    env: FleetEnv
    run_id: str
    root: Path


@pytest.fixture
def example_fleet(fleet_env: FleetEnv, tmp_path: Path) -> ExampleFleet:  # noqa: F811
    from farm.catalog import load_catalog
    from farm.execution.executors import executor_for
    from farm.fleet.service import Trigger, qualify

    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root)
    _, planned = plan_catalog(fleet_env.storage, root)
    run_local(fleet_env.settings, planned.queued, processes=1)
    qualify(
        fleet_env.storage,
        load_catalog(root),
        [QUALIFIED_SUBJECT],
        executor=executor_for(fleet_env.settings, "local", processes=1),
        trigger=Trigger.CLI,
        source=str(root),
    )
    return ExampleFleet(fleet_env, planned.run_id, root)


@pytest.fixture
def example_client(example_fleet: ExampleFleet) -> Iterator[TestClient]:
    app = create_app(example_fleet.env.storage, {"example": example_fleet.root}, TOKEN)
    with TestClient(app) as test_client:
        yield test_client
