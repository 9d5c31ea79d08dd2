"""A run, a cached failure and ``farm verify --all`` on PostgreSQL with S3 (moto on loopback) and
on the embedded default (SQLite and a folder): clean after good runs, and a tamper named on both."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest_store import S3Bucket
from fleet.conftest import fresh_render_children, make_catalog  # noqa: F401 - the fixture
from sqlalchemy import text
from typer.testing import CliRunner, Result

from farm.cli import app as cli
from farm.store.db import create_farm_engine

pytestmark = pytest.mark.timeout(600)


def farm(*arguments: str) -> Result:
    return CliRunner().invoke(cli, list(arguments))


@pytest.fixture(params=["embedded", "postgresql+s3"])
def backend(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """The FARM_* environment of one backend; the database URL when it is not the embedded one."""
    for name in list(os.environ):
        if name.startswith("FARM_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("FARM_HOME", str(tmp_path / "home"))
    if request.param == "embedded":
        return None
    url = request.getfixturevalue("databases").migrated("postgresql")
    bucket: S3Bucket = request.getfixturevalue("s3_bucket")
    monkeypatch.setenv("FARM_DATABASE_URL", url)
    monkeypatch.setenv("FARM_OBJECT_STORE", f"s3://{bucket.name}/farm")
    monkeypatch.setenv("FARM_S3_ENDPOINT_URL", bucket.endpoint)
    monkeypatch.setenv("FARM_S3_REGION", "us-east-1")
    monkeypatch.setenv("FARM_S3_ACCESS_KEY_ID", "farm-test")
    monkeypatch.setenv("FARM_S3_SECRET_ACCESS_KEY", "farm-test-secret")
    return url


def test_runs_then_verify_all_is_clean_and_a_forged_failure_row_is_named_on_each_backend(
    backend: str | None, tmp_path: Path
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=2, clusters=("cluster-a", "cluster-b"))
    first = farm("run", str(catalog.root), "--processes", "1")
    assert first.exit_code == 0, first.output
    catalog.break_app("app-1")
    assert farm("run", str(catalog.root), "--processes", "1").exit_code in (0, 1)
    assert farm("run", str(catalog.root), "--processes", "1").exit_code in (0, 1)  # a cached failure

    clean = farm("verify", "--all", "--json")
    assert clean.exit_code == 0, clean.output
    report = json.loads(clean.output)
    assert report["ok"] and report["checked"]["failure cache row"] == 2
    assert report["checked"]["blob: request pack"] >= 2 and report["checked"]["output"] >= 2

    url = backend or f"sqlite:///{tmp_path / 'home' / 'farm.db'}"
    engine = create_farm_engine(url)
    with engine.begin() as connection:
        key = connection.execute(text("SELECT action_key FROM failed_actions ORDER BY action_key")).first()[0]
        connection.execute(
            text("UPDATE failed_actions SET envelope = NULL WHERE action_key = :key"), {"key": key}
        )
    engine.dispose()
    tampered = farm("verify", "--all")
    assert tampered.exit_code == 1, tampered.output
    assert f"FAIL failure.unsigned: failure cache row {key}" in tampered.output
