"""scripts/e2e: examples/fleet on PostgreSQL, its own Redis and moto S3, two Celery workers, beat and
the API; the run is triggered and awaited through the API, every target renders, every output
verifies and the dashboard's run page shows the run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(300)
def test_the_distributed_run_triggered_through_the_api_verifies_and_shows_on_the_dashboard() -> None:
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env["FARM_E2E_PYTHON"] = sys.executable
    admin = os.environ.get("FARM_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    env["FARM_E2E_POSTGRES"] = admin.replace("postgresql+psycopg://", "postgresql://")
    result = subprocess.run(
        [str(ROOT / "scripts" / "e2e")], env=env, capture_output=True, text=True, timeout=280, check=False
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    summary = json.loads(next(line for line in result.stdout.splitlines() if line.startswith("{")))
    assert summary["state"] == "completed"
    assert {state: n for state, n in summary["counts"].items() if n} == {"succeeded": 31}
    assert (summary["total"], summary["done"], summary["failed"]) == (31, 31, 0)
    assert re.search(r"^e2e: 13 jobs, claimed by [12] Celery worker processes$", result.stdout, re.M)
    assert ", 0 failure(s)" in result.stdout  # farm verify --all
    assert f"e2e: dashboard shows run {summary['id']}: 31/31 done, 0 failed\n" in result.stdout
    assert result.stdout.rstrip().endswith("e2e: ok")
