"""``farm doctor`` on the distributed set-up: PostgreSQL, Redis, the moto S3 server and one real
Celery worker. Every check passes; then each service is made unreachable in turn (its setting
pointed at a closed port, the worker stopped) and exactly its check fails, saying what to do."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest
from conftest_store import S3Bucket

from farm.identity.fingerprint import core_version
from farm.store.migrate import HEAD_REVISION

from .test_celery import CeleryFarm, celery_farm, farm_source, redis_broker, wait_until  # noqa: F401

CHECKS = ["settings", "database", "broker", "object store", "signing key", "helm", "daemon"]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the probe goes: nothing listens there


def _doctor(farm: CeleryFarm, **overrides: str) -> tuple[int, dict[str, dict]]:
    result = subprocess.run(
        [sys.executable, "-m", "farm", "doctor", "--json"],
        env={**farm.env, **overrides},
        cwd=farm.root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in result.stderr, result.stderr
    report = json.loads(result.stdout)
    return result.returncode, {check["name"]: check for check in report["checks"]}


def _only_failing(farm: CeleryFarm, name: str, **overrides: str) -> str:
    status, checks = _doctor(farm, **overrides)
    assert status == 1
    assert [check for check, found in checks.items() if not found["ok"]] == [name], checks
    return checks[name]["detail"]


@pytest.mark.timeout(600)
def test_doctor_on_the_distributed_set_up_passes_then_fails_exactly_the_check_of_each_service_made_unreachable(
    celery_farm: CeleryFarm,  # noqa: F811
    s3_bucket: S3Bucket,
) -> None:
    celery_farm.env.update(
        FARM_OBJECT_STORE=f"s3://{s3_bucket.name}/farm",
        FARM_S3_ENDPOINT_URL=s3_bucket.endpoint,
        FARM_S3_REGION="us-east-1",
        FARM_S3_ACCESS_KEY_ID="farm-test",
        FARM_S3_SECRET_ACCESS_KEY="farm-test-secret",
        AWS_MAX_ATTEMPTS="1",
    )
    worker = celery_farm.start_worker()
    queue = f"{celery_farm.queue}.{core_version()}"
    wait_until(
        lambda: _doctor(celery_farm)[0] == 0,
        "farm doctor to pass",
        poll=1.0,
        check=celery_farm.check_workers_alive,
    )

    status, checks = _doctor(celery_farm)
    assert status == 0 and list(checks) == CHECKS
    assert (
        checks["database"]["detail"].startswith("postgresql")
        and f"at revision {HEAD_REVISION}" in checks["database"]["detail"]
    )
    assert (
        f"1 worker(s) consume queue {queue} (core {core_version()}): {celery_farm.queue}-0@"
        in checks["broker"]["detail"]
    )
    assert checks["object store"]["detail"] == (
        f"s3://{s3_bucket.name}/farm at {s3_bucket.endpoint}: reachable, bucket present"
    )
    assert checks["signing key"]["detail"].endswith(", trusted")

    closed = _closed_port()
    database = _only_failing(
        celery_farm, "database", FARM_DATABASE_URL=f"postgresql://postgres@127.0.0.1:{closed}/farm"
    )
    assert database.startswith(f"database unreachable at postgresql://postgres@127.0.0.1:{closed}/farm")
    assert "check FARM_DATABASE_URL and that the server runs" in database

    broker = _only_failing(celery_farm, "broker", FARM_BROKER_URL=f"redis://127.0.0.1:{closed}/0")
    assert broker.startswith(f"broker unreachable at redis://127.0.0.1:{closed}/0")
    assert "check FARM_BROKER_URL and that the broker runs" in broker

    store = _only_failing(celery_farm, "object store", FARM_S3_ENDPOINT_URL=f"http://127.0.0.1:{closed}")
    assert store.startswith(f"object store s3://{s3_bucket.name}/farm: ") and "FARM_S3_ENDPOINT_URL" in store

    bucket = _only_failing(celery_farm, "object store", FARM_OBJECT_STORE="s3://no-such-farm-bucket")
    assert bucket.startswith(f"bucket no-such-farm-bucket does not exist at {s3_bucket.endpoint}: create it")

    key = _only_failing(celery_farm, "signing key", FARM_SIGNING_KEY=str(celery_farm.root / "gone.key"))
    assert "does not exist: restore it, or make one with farm keys generate" in key

    CeleryFarm.kill(worker)
    workers = _only_failing(celery_farm, "broker")
    assert (
        f"reachable, but no worker consumes queue {queue}" in workers
        and "start one there with farm worker" in workers
    )
