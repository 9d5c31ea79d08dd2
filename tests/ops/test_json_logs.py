"""FARM_LOG_FORMAT=json beyond the Celery workers: ``farm run`` on the local pool and ``farm serve``
write one JSON object a line on stderr, with the run and job ids where a line is about them, and
the API a line per request with its method, path, status and duration."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fleet.conftest import FleetEnv, fleet_env, make_catalog  # noqa: F401
from sqlalchemy import select

from farm.store import models
from farm.store.db import session_scope

TOKEN = "log-test-token"
FARM = [sys.executable, "-m", "farm"]


def _environ(env: FleetEnv, **extra: str) -> dict[str, str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    return clean | env.environ() | {"FARM_LOG_FORMAT": "json", **extra}


def _json_lines(text: str) -> list[dict]:
    """Every line, read as JSON: a line that is not one fails the test."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _job_ids(env: FleetEnv, run_id: str) -> set[str]:
    with session_scope(env.storage.sessions) as session:
        return set(session.scalars(select(models.RenderJob.id).where(models.RenderJob.run_id == run_id)))


def _assert_run_lines(lines: list[dict], env: FleetEnv, run_id: str) -> None:
    """The planner's, every job's (claimed and finished) and the run's end, with their ids."""
    messages = {line["message"] for line in lines if line["run_id"] == run_id}
    assert any(message.startswith("run planned: 8 targets") for message in messages), messages
    assert "run finished" in messages
    job_lines = [line for line in lines if line["logger"] == "farm.fleet.jobs"]
    assert len(job_lines) == 2 * len(_job_ids(env, run_id))
    assert {line["job_id"] for line in job_lines} == _job_ids(env, run_id)
    assert {line["run_id"] for line in job_lines} == {run_id}
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    assert not any("color_message" in line for line in lines)  # uvicorn's ANSI copy is left out


@pytest.mark.timeout(120)
def test_farm_run_on_the_local_pool_logs_json_lines_with_the_run_and_job_ids(
    fleet_env: FleetEnv,  # noqa: F811
    tmp_path: Path,
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=4, clusters=("cluster-a", "cluster-b"))
    result = subprocess.run(
        [*FARM, "run", str(catalog.root), "--processes", "2", "--json"],
        env=_environ(fleet_env),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    run_id = json.loads(result.stdout)["run_id"]  # stdout stays the summary alone
    _assert_run_lines(_json_lines(result.stderr), fleet_env, run_id)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(base: str, process: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        try:
            httpx.get(f"{base}/api/runs", timeout=1)
            return
        except httpx.TransportError:
            assert process.poll() is None, "farm serve exited"
            time.sleep(0.1)
    raise AssertionError("farm serve did not answer within 30 s")


@pytest.mark.timeout(120)
def test_farm_serve_logs_a_json_line_per_request_with_method_path_status_duration_and_run_id(
    fleet_env: FleetEnv,  # noqa: F811
    tmp_path: Path,
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=4, clusters=("cluster-a", "cluster-b"))
    port, log_path = _free_port(), tmp_path / "serve.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*FARM, "serve", "--port", str(port), "--catalog", str(catalog.root)],
            env=_environ(fleet_env, FARM_API_TOKEN=TOKEN),
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(base, process)
        posted = httpx.post(
            f"{base}/api/runs", json={"catalog": "test-fleet"}, headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert posted.status_code == 202, posted.text
        run_id = posted.json()["run_id"]
        deadline = time.monotonic() + 90
        while httpx.get(f"{base}/api/runs/{run_id}").json()["state"] == "running":
            assert time.monotonic() < deadline, "the run did not finish"
            time.sleep(0.2)
        assert httpx.get(f"{base}/runs/{run_id}").status_code == 200
        assert httpx.get(f"{base}/api/runs/no-such-run").status_code == 404
    finally:
        process.terminate()
        process.wait(timeout=20)
    lines = _json_lines(log_path.read_text())
    requests = [line for line in lines if line["logger"] == "farm.api.access"]
    assert {(line["method"], line["path"], line["status"]) for line in requests} >= {
        ("GET", "/api/runs", 200),
        ("POST", "/api/runs", 202),
        ("GET", f"/api/runs/{run_id}", 200),
        ("GET", f"/runs/{run_id}", 200),
        ("GET", "/api/runs/no-such-run", 404),
    }
    assert all(isinstance(line["duration_ms"], int | float) and line["duration_ms"] >= 0 for line in requests)
    about_the_run = [line for line in requests if run_id in line["path"] or line["method"] == "POST"]
    assert {line["run_id"] for line in about_the_run} == {run_id}
    _assert_run_lines(lines, fleet_env, run_id)  # the API's background pool logs its jobs too
