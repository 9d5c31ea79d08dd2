"""The scheduled audit: off by default, a FARM_* setting turns it on and sets the sample size."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fleet.conftest import Catalog, FleetEnv

from farm.audit.service import scheduled_audit
from farm.catalog import load_catalog
from farm.evidence.dsse import parse_envelope
from farm.evidence.statement import parse_statement
from farm.fleet.jobs import run_job
from farm.fleet.planner import plan_run
from farm.settings import load_settings
from workers.schedule import AUDIT_TASK, beat_schedule


def test_the_beat_has_no_audit_entry_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FARM_AUDIT_SAMPLE", raising=False)
    schedule = beat_schedule(load_settings(home=tmp_path))
    assert AUDIT_TASK not in [entry["task"] for entry in schedule.values()]
    assert "farm.reconcile" in [entry["task"] for entry in schedule.values()]


def test_farm_audit_sample_turns_the_beat_entry_on_at_its_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FARM_AUDIT_SAMPLE", "5")
    monkeypatch.setenv("FARM_AUDIT_INTERVAL", "3600")
    schedule = beat_schedule(load_settings(home=tmp_path))
    assert schedule["audit-sample"] == {"task": AUDIT_TASK, "schedule": 3600.0}


def test_the_scheduled_audit_samples_the_latest_run_and_records_its_seed(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    assert scheduled_audit(fleet_env.storage, fleet_env.signer, 3) is None  # nothing recorded yet
    planned = plan_run(fleet_env.storage, load_catalog(catalog.root), source="tests")
    for job_id, key in planned.queued:
        run_job(fleet_env.storage, fleet_env.signer, job_id, worker="w1", expected_batch_key=key)
    now = datetime(2026, 12, 3, 11, 30, tzinfo=UTC)
    report = scheduled_audit(fleet_env.storage, fleet_env.signer, 3, now=now)
    assert report is not None and len(report.targets) == 3
    predicate = parse_statement(
        parse_envelope(fleet_env.storage.objects.get(report.envelope_digest)).payload
    ).predicate
    assert predicate["run"] == planned.run_id
    assert predicate["seed"] == int(now.timestamp()) // 3600
    again = scheduled_audit(fleet_env.storage, fleet_env.signer, 3, now=now)
    assert again is not None and [t.target_id for t in again.targets] == [t.target_id for t in report.targets]
