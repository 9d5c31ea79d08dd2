"""Every moment the farm stores is read back in UTC with its offset, on SQLite and PostgreSQL, and
so shown with ``+00:00`` by the CLI (``farm runs``, ``--json``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from conftest_store import Fleet, make_inputs
from sqlalchemy import select, text

from farm.store.models import FleetRun, RenderJob

KOLKATA = timezone(timedelta(hours=5, minutes=30))
MOMENT = datetime(2026, 3, 1, 17, 30, 5, tzinfo=KOLKATA)  # 12:00:05 UTC


def _run_at(fleet: Fleet, moment: datetime, finished: datetime | None = None) -> str:
    with fleet.sessions.begin() as session:
        run = FleetRun(
            snapshot_digest=fleet.snapshot,
            core_version="test",
            state="completed",
            created_at=moment,
            finished_at=finished,
        )
        session.add(run)
        session.flush()
        return run.id


def test_a_stored_moment_is_read_back_in_utc_with_its_offset(fleet: Fleet) -> None:
    run_id = _run_at(fleet, MOMENT, finished=datetime(2026, 3, 1, 12, 0, 7))  # a naive moment is UTC
    with fleet.sessions() as session:
        if session.bind.dialect.name == "postgresql":  # the session's zone must not leak into what is read
            session.execute(text("SET TIME ZONE 'Asia/Kolkata'"))
        run = session.get(FleetRun, run_id)
        assert run is not None
        assert run.created_at.tzinfo is UTC
        assert run.created_at == MOMENT
        assert run.created_at.isoformat() == "2026-03-01T12:00:05+00:00"
        assert run.finished_at is not None and run.finished_at.isoformat() == "2026-03-01T12:00:07+00:00"


def test_a_moment_read_through_a_column_expression_carries_its_offset_too(fleet: Fleet) -> None:
    run_id = _run_at(fleet, MOMENT)
    fleet.new_job(run_id, (make_inputs(), "web", "prod"))
    with fleet.sessions() as session:
        created = session.scalar(select(FleetRun.created_at).where(FleetRun.id == run_id))
        job_created = session.scalar(select(RenderJob.created_at).where(RenderJob.run_id == run_id))
    assert created is not None and created.utcoffset() == timedelta(0)
    assert job_created is not None and job_created.utcoffset() == timedelta(0)


def test_moments_compare_across_offsets_on_both_databases(fleet: Fleet) -> None:
    run_id = _run_at(fleet, MOMENT)
    just_before = datetime(2026, 3, 1, 12, 0, 4, tzinfo=UTC)
    with fleet.sessions() as session:
        found = session.scalars(select(FleetRun.id).where(FleetRun.created_at > just_before)).all()
    assert found == [run_id]


def _farm(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    clean.update(env)
    return subprocess.run(
        [sys.executable, "-m", "farm", *args], env=clean, capture_output=True, text=True, timeout=120
    )


def test_farm_runs_shows_each_moment_in_utc_with_its_offset(
    fleet: Fleet, database_url: str, tmp_path: Path
) -> None:
    run_id = _run_at(fleet, MOMENT, finished=MOMENT + timedelta(seconds=2))
    env = {"FARM_DATABASE_URL": database_url, "FARM_HOME": str(tmp_path / "home")}
    as_json = _farm("runs", "--json", env=env)
    assert as_json.returncode == 0, as_json.stderr
    row = json.loads(as_json.stdout)
    assert (row["id"], row["created_at"], row["finished_at"]) == (
        run_id,
        "2026-03-01T12:00:05+00:00",
        "2026-03-01T12:00:07+00:00",
    )
    assert row["duration_seconds"] == 2.0
    listed = _farm("runs", env=env)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith(f"{run_id}  2026-03-01T12:00:05+00:00  fleet")
