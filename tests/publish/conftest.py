"""Fixtures for publishing: a bare git repository in tmp, farm settings on both databases, and
the CLI driven with them; the registry fixture starts Debian's docker-registry on loopback."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


REGISTRY_BINARY = Path("/usr/bin/docker-registry")  # Debian's docker-registry (CNCF distribution)

REGISTRY_CONFIG = """version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: {root}
  delete:
    enabled: true
http:
  addr: 127.0.0.1:{port}
"""


REGISTRY_AUTH = """auth:
  htpasswd:
    realm: farm-test
    path: {htpasswd}
"""


def start_registry(folder: Path, port: int, users: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Debian's docker-registry serving ``folder`` on 127.0.0.1:``port``, once it listens;
    with ``users`` (name → password), only to them (``auth: htpasswd``, bcrypt entries)."""
    if not REGISTRY_BINARY.exists():
        raise RuntimeError(f"{REGISTRY_BINARY} is missing: apt-get install -y docker-registry (.ci/run does)")
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.yml"
    text = REGISTRY_CONFIG.format(root=folder / "data", port=port)
    if users is not None:
        htpasswd = folder / "htpasswd"
        htpasswd.write_text("".join(f"{name}:{_bcrypt(password)}\n" for name, password in users.items()))
        text += REGISTRY_AUTH.format(htpasswd=htpasswd)
    config.write_text(text)
    process = subprocess.Popen(
        [str(REGISTRY_BINARY), "serve", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for _ in range(600):
        if process.poll() is not None:
            raise RuntimeError(f"docker-registry exited with status {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.05)
    process.terminate()
    raise RuntimeError(f"docker-registry did not listen on 127.0.0.1:{port}")


def _bcrypt(password: str) -> str:
    import bcrypt  # a dev dependency: the registry's htpasswd file takes bcrypt entries only

    return bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()


@pytest.fixture(scope="session")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real OCI registry on loopback (``HOST:PORT``), started as the S3 tests start moto."""
    port = free_port()
    process = start_registry(tmp_path_factory.mktemp("registry"), port)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait()
