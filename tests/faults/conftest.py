"""Servers of a fault test's own: Redis, PostgreSQL and moto's S3 on loopback ports of their own,
so a test can stop and restart them without disturbing anything else on the machine. moto keeps
its buckets in memory, so the object store's fault is a proxy in front of it that refuses writes
(``tests/s3_proxy.py``), not a restart.

PostgreSQL is the machine's ``initdb``/``pg_ctl`` (found by glob under /usr/lib/postgresql at run
time) on a cluster in a temporary folder, run as the ``postgres`` user when the tests run as root
(initdb refuses root).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fleet.test_celery import farm_source  # noqa: F401 - the fixture, shared with the fleet tests
from s3_proxy import WriteRefusingProxy

START_SECONDS = 30.0
S3_BUCKET = "farm-fault"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, *, up: bool = True, seconds: float = START_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            probe.settimeout(0.2)
            listening = probe.connect_ex(("127.0.0.1", port)) == 0
        if listening == up:
            return
        time.sleep(0.05)
    raise AssertionError(f"port {port} did not {'open' if up else 'close'} within {seconds:.0f}s")


@dataclass
class RedisServer:
    """A redis-server without persistence: a restart loses every message it held."""

    folder: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed; the fault tests start their own")
        self.process = subprocess.Popen(
            [
                binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port)

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None
            wait_for_port(self.port, up=False)

    def restart(self) -> None:
        self.stop()
        self.start()


def _postgres_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        pytest.fail(f"no {name} under /usr/lib/postgresql/*/bin; the fault tests start their own PostgreSQL")
    return found[-1]


@dataclass
class PostgresServer:
    """A throw-away PostgreSQL cluster (trust auth) on its own port."""

    folder: Path
    port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *command], check=True, capture_output=True, timeout=60)

    def init(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run(_postgres_bin("initdb"), "-D", str(self.folder / "data"), "-A", "trust", "-U", "postgres")

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off"
        self._run(
            _postgres_bin("pg_ctl"),
            "-D",
            str(self.folder / "data"),
            "-o",
            options,
            "-l",
            str(self.folder / "log"),
            "-w",
            "start",
        )

    def stop(self, mode: str = "immediate") -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run(_postgres_bin("pg_ctl"), "-D", str(self.folder / "data"), "-m", mode, "-w", "stop")


@dataclass
class MotoServer:
    """moto's standalone S3 server. Its buckets live in memory, so a restart would lose every blob
    (the snapshot's requests too): the object store's outage is ``WriteRefusingProxy`` in front."""

    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port)

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis")
    server.folder.mkdir()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    # Not under pytest's tmp folders: their 0700 parents keep the postgres user out.
    root = Path(tempfile.mkdtemp(prefix="farm-fault-pg-"))
    os.chmod(root, 0o755)
    server = PostgresServer(root / "cluster")
    try:
        server.init()
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def own_s3() -> Iterator[MotoServer]:
    server = MotoServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class FaultFarm:
    """A farm on the fault test's own servers: FARM_* settings, workers and the database."""

    farm: object  # fleet.test_celery.CeleryFarm
    redis: RedisServer
    postgres: PostgresServer


@contextlib.contextmanager
def _farm_on(
    tmp_path: Path,
    key_dir: Path,
    redis_server: RedisServer,
    postgres: PostgresServer,
    farm_source: Path,  # noqa: F811
    objects: dict[str, str],
    own_objects: dict[str, str] | None = None,
) -> Iterator[FaultFarm]:
    """A farm on the test's own servers; ``objects`` are the FARM_* settings of its object store
    for the farm's processes, ``own_objects`` the test's own view of it (default the same)."""
    from fleet.test_celery import CeleryFarm

    from farm.settings import load_settings
    from farm.store.context import open_storage

    trusted = tmp_path / "trusted_signers"
    trusted.write_text((key_dir / "signing.pub").read_text())
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env |= {
        "FARM_HOME": str(tmp_path / ".farm"),
        "FARM_DATABASE_URL": postgres.url,
        "FARM_SIGNING_KEY": str(key_dir / "signing.key"),
        "FARM_TRUSTED_SIGNERS": str(trusted),
        "FARM_BROKER_URL": redis_server.url,
        "FARM_CELERY_QUEUE": "farm-fault",
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": str(farm_source),
        **objects,
    }
    subprocess.run(
        [sys.executable, "-m", "farm", "db", "upgrade"],
        env=env,
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=120,
    )
    view = {name.removeprefix("FARM_").lower(): value for name, value in (own_objects or objects).items()}
    settings = load_settings(home=env["FARM_HOME"], database_url=env["FARM_DATABASE_URL"], **view)
    farm = CeleryFarm(tmp_path, env, "farm-fault", open_storage(settings))
    try:
        yield FaultFarm(farm, redis_server, postgres)
    finally:
        for process in farm.workers:
            farm.kill(process)
        farm.storage.close()


@pytest.fixture
def fault_farm(
    tmp_path: Path,
    key_dir: Path,
    own_redis: RedisServer,
    own_postgres: PostgresServer,
    farm_source: Path,  # noqa: F811
) -> Iterator[FaultFarm]:
    objects = {"FARM_OBJECT_STORE": str(tmp_path / "objects")}
    with _farm_on(tmp_path, key_dir, own_redis, own_postgres, farm_source, objects) as farm:
        yield farm


@dataclass
class S3FaultFarm(FaultFarm):
    """A fault farm whose blobs go to its own moto server through a write-refusing proxy."""

    s3: MotoServer | None = None
    proxy: WriteRefusingProxy | None = None
    bucket: str = S3_BUCKET


@pytest.fixture
def s3_fault_farm(
    tmp_path: Path,
    key_dir: Path,
    own_redis: RedisServer,
    own_postgres: PostgresServer,
    own_s3: MotoServer,
    farm_source: Path,  # noqa: F811
) -> Iterator[S3FaultFarm]:
    import boto3

    credentials = {"FARM_S3_ACCESS_KEY_ID": "farm-fault", "FARM_S3_SECRET_ACCESS_KEY": "farm-fault-secret"}
    boto3.client(
        "s3",
        endpoint_url=own_s3.url,
        region_name="us-east-1",
        aws_access_key_id="farm-fault",
        aws_secret_access_key="farm-fault-secret",
    ).create_bucket(Bucket=S3_BUCKET)
    proxy = WriteRefusingProxy(own_s3.port)
    proxy.start()
    store = {"FARM_OBJECT_STORE": f"s3://{S3_BUCKET}/objects", "FARM_S3_REGION": "us-east-1", **credentials}
    objects = store | {"FARM_S3_ENDPOINT_URL": proxy.url}
    direct = store | {"FARM_S3_ENDPOINT_URL": own_s3.url}  # the test's checks never pass the proxy
    try:
        with _farm_on(tmp_path, key_dir, own_redis, own_postgres, farm_source, objects, direct) as farm:
            yield S3FaultFarm(farm.farm, farm.redis, farm.postgres, own_s3, proxy)
    finally:
        proxy.stop()
