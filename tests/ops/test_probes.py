"""The compose health checks of the worker and the beat (``python -m farm.probes``), against a real
Redis, a real Celery worker and a real ``farm beat``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from fleet.test_celery import (
    CeleryFarm,
    wait_until,
)


def _probe(
    farm: CeleryFarm, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "farm.probes", *args],
        env={**farm.env, **(env or {})},
        cwd=farm.root,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


@pytest.mark.timeout(120)
def test_the_worker_probe_passes_when_its_worker_answers_through_the_broker_and_fails_otherwise(
    celery_farm: CeleryFarm,
) -> None:
    celery_farm.start_worker()
    node = f"{celery_farm.queue}-0@{socket.gethostname()}"
    wait_until(
        lambda: _probe(celery_farm, "worker", "--node", node).returncode == 0,
        "the worker to answer",
        poll=0.5,
    )
    silent = _probe(celery_farm, "worker", "--node", f"nobody@{socket.gethostname()}")
    assert silent.returncode == 1
    assert silent.stderr.startswith("Error: worker nobody@") and "Traceback" not in silent.stderr
    no_broker = _probe(
        celery_farm, "worker", "--node", node, env={"FARM_BROKER_URL": "redis://127.0.0.1:1/0"}
    )
    assert no_broker.returncode == 1 and no_broker.stderr.startswith("Error: the broker does not answer")


@pytest.mark.timeout(120)
def test_the_beat_probe_passes_while_farm_beat_runs_and_fails_when_its_schedule_is_stale_or_the_broker_is_gone(
    celery_farm: CeleryFarm,
) -> None:
    folder = celery_farm.root / "beat"
    folder.mkdir()
    assert _probe(celery_farm, "beat", "--folder", str(folder)).stderr.startswith(
        "Error: no beat schedule file"
    )
    beat = subprocess.Popen(
        [sys.executable, "-m", "farm", "beat"],
        env=celery_farm.env,
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    celery_farm.workers.append(beat)  # killed with the farm's processes
    wait_until(
        lambda: _probe(celery_farm, "beat", "--folder", str(folder)).returncode == 0, "the beat", poll=0.5
    )
    no_broker = _probe(
        celery_farm, "beat", "--folder", str(folder), env={"FARM_BROKER_URL": "redis://127.0.0.1:1/0"}
    )
    assert no_broker.returncode == 1 and no_broker.stderr.startswith("Error: the broker does not answer")
    CeleryFarm.kill(beat)
    for path in Path(folder).glob("celerybeat-schedule*"):
        os.utime(path, (0, 0))  # what a beat stuck for a long time leaves
    stuck = _probe(celery_farm, "beat", "--folder", str(folder))
    assert stuck.returncode == 1 and "has not changed for" in stuck.stderr
