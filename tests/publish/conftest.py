"""Fixtures for publishing: a bare git repository in tmp, farm settings on both databases, and
the CLI driven with them; the registry fixture starts Debian's docker-registry on loopback."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from fleet.conftest import Catalog, fresh_render_children, make_catalog  # noqa: F401
from typer.testing import CliRunner

from farm.cli import app as cli


@dataclass
class Farm:
    env: dict[str, str]
    catalog: Catalog

    def __call__(self, *args: str, status: int | None = 0, **extra: str) -> str:
        result = CliRunner().invoke(cli, list(args), env={**self.env, **extra})
        if status is not None:
            assert result.exit_code == status, result.output
        return result.output

    def run(self, **extra: str) -> str:
        """A fleet run of the catalog; its run id."""
        summary = json.loads(self("run", str(self.catalog.root), "--json", **extra).splitlines()[-1])
        return summary["run_id"]

    def publish(self, run_id: str, *args: str, status: int | None = 0, **extra: str) -> dict:
        output = self("publish", run_id, *args, "--json", status=status, **extra)
        return json.loads(output.splitlines()[0])


@pytest.fixture
def farm(tmp_path: Path, database_url: str) -> Farm:
    env = {
        "FARM_HOME": str(tmp_path / "farm"),
        "FARM_DATABASE_URL": database_url,
        "FARM_OBJECT_STORE": str(tmp_path / "objects"),
        "FARM_EXECUTOR": "local",
        "FARM_PUBLISH_BACKOFF_SECONDS": "0",
    }
    return Farm(env, make_catalog(tmp_path / "catalog", apps=3, clusters=("cluster-a", "cluster-b")))


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """An empty bare repository: the remote a publish pushes to."""
    folder = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(folder)], check=True)
    return folder


def commits(bare: Path, branch: str = "main") -> list[str]:
    listed = subprocess.run(
        ["git", "rev-list", branch], cwd=bare, capture_output=True, text=True, check=False
    ).stdout
    return listed.split()


def clone(bare: Path, into: Path, branch: str = "main") -> Path:
    subprocess.run(["git", "clone", "-q", "-b", branch, str(bare), str(into)], check=True)
    return into
