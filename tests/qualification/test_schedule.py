"""Re-qualification on a schedule: the beat's times are crontab settings and the claim lease a
setting; ``farm beat --help`` lists every entry; the embedded recipe of docs/qualification.md runs
as written."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from celery.schedules import crontab
from typer.testing import CliRunner

from farm.catalog import load_catalog
from farm.cli import app as cli
from farm.qualification import service
from farm.settings import load_settings
from farm.store import qualification as records
from farm.store.context import Storage, open_storage
from farm.store.db import session_scope
from farm.store.models import utcnow
from workers.schedule import beat_schedule

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "fleet"
DOC = ROOT / "docs" / "qualification.md"


def _env(**farm: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env.update(farm)
    return env


def test_the_beat_runs_the_finder_every_5_minutes_and_the_reconciler_every_minute_by_default(
    tmp_path: Path,
) -> None:
    schedule = beat_schedule(load_settings(home=tmp_path))
    assert schedule["qualification-find-due"]["schedule"] == crontab(minute="*/5")
    assert schedule["reconcile-stale-jobs"]["schedule"] == crontab()


def test_the_beat_runs_each_entry_at_the_crontab_its_setting_gives(tmp_path: Path) -> None:
    settings = load_settings(
        home=tmp_path, qualification_schedule="0 3 * * 1", reconcile_schedule="*/2 8-18 * * *"
    )
    schedule = beat_schedule(settings)
    assert schedule["qualification-find-due"] == {
        "task": "farm.qualification.find_due",
        "schedule": crontab(minute="0", hour="3", day_of_week="1"),
    }
    assert schedule["reconcile-stale-jobs"]["schedule"] == crontab(minute="*/2", hour="8-18")


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "FARM_QUALIFICATION_SCHEDULE",
            "every 5 minutes",
            "Error: FARM_QUALIFICATION_SCHEDULE: expected 5 crontab fields (minute hour day-of-month month "
            "day-of-week), got 'every 5 minutes'",
        ),
        (
            "FARM_RECONCILE_SCHEDULE",
            "61 * * * *",
            "Error: FARM_RECONCILE_SCHEDULE: '61 * * * *' is not a crontab schedule: Invalid end range: 61 > 59.",
        ),
    ],
)
def test_a_schedule_that_is_not_crontab_stops_farm_beat_with_one_error_naming_the_setting(
    tmp_path: Path, variable: str, value: str, message: str
) -> None:
    env = _env(
        FARM_HOME=str(tmp_path / ".farm"), FARM_BROKER_URL="redis://127.0.0.1:6379/0", **{variable: value}
    )
    result = subprocess.run(
        [sys.executable, "-m", "farm", "beat"], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [message]


def test_farm_beat_help_lists_every_entry_it_schedules_with_its_setting(tmp_path: Path) -> None:
    every_entry = beat_schedule(load_settings(home=tmp_path, audit_sample=1))
    shown = CliRunner().invoke(cli, ["beat", "--help"], env={"COLUMNS": "300"}).output
    shown = " ".join(shown.split())
    for name, entry in every_entry.items():
        assert f"{name} ({entry['task']})" in shown
    for setting in (
        "FARM_RECONCILE_SCHEDULE",
        "FARM_QUALIFICATION_SCHEDULE",
        "FARM_QUALIFICATION_CLAIM_LEASE_SECONDS",
        "FARM_AUDIT_SAMPLE",
        "FARM_AUDIT_INTERVAL",
    ):
        assert setting in shown


@pytest.fixture
def storage(tmp_path: Path, database_url: str) -> Iterator[Storage]:
    settings = load_settings(
        home=tmp_path / "farm",
        database_url=database_url,
        object_store=str(tmp_path / "objects"),
        qualification_claim_lease_seconds=120,
    )
    opened = open_storage(settings)
    yield opened
    opened.close()


def test_a_due_subject_is_claimed_for_the_lease_the_setting_gives(storage: Storage) -> None:
    service.refresh_all(storage, load_catalog(EXAMPLE), frozenset(), "tests")  # every subject unqualified
    before = utcnow()
    claimed = service.claim_due(storage)
    assert sorted(claimed) == sorted(service.subjects_of(load_catalog(EXAMPLE)))
    with session_scope(storage.sessions) as session:
        until = [subject.claimed_until for subject in records.subjects(session)]
    assert all(moment is not None for moment in until)
    assert all(timedelta(seconds=119) <= moment - before <= timedelta(seconds=125) for moment in until)  # type: ignore[operator]
    assert service.claim_due(storage) == []  # still claimed


def _documented_cron_line() -> str:
    block = re.search(r"<!-- qualify-cron -->\n```\n(.+)\n```\n<!-- /qualify-cron -->", DOC.read_text())
    assert block, "docs/qualification.md has no qualify-cron block"
    return block.group(1)


@pytest.mark.timeout(600)
def test_the_documented_cron_line_qualifies_every_subject_of_the_embedded_farm(tmp_path: Path) -> None:
    """The line's five fields are a crontab; its command, run by sh with only the folder /srv/farm
    replaced and ``farm`` on PATH, qualifies every subject; run again (the next hour), it passes."""
    line = _documented_cron_line()
    fields, command = line.split()[:5], " ".join(line.split()[5:])
    assert crontab(
        minute=fields[0],
        hour=fields[1],
        day_of_month=fields[2],
        month_of_year=fields[3],
        day_of_week=fields[4],
    )
    assert command == "cd /srv/farm && farm qualify catalog >> qualify.log 2>&1"
    folder = tmp_path / "srv farm"
    (folder / "catalog").parent.mkdir(parents=True)
    shutil.copytree(EXAMPLE, folder / "catalog")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "farm").write_text(f'#!/bin/sh\nexec {sys.executable} -m farm "$@"\n')
    (bin_dir / "farm").chmod(0o755)
    env = _env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", FARM_DAEMON="off")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    runnable = command.replace("/srv/farm", f"'{folder}'")
    for _ in range(2):
        done = subprocess.run(
            ["sh", "-c", runnable], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, (folder / "qualify.log").read_text()
    log = (folder / "qualify.log").read_text().splitlines()
    subjects = service.subjects_of(load_catalog(EXAMPLE))
    assert len(log) == 2 * len(subjects) and all(": qualified run " in entry for entry in log), log
    board = subprocess.run(
        [sys.executable, "-m", "farm", "qualification", "--json"],
        env=env,
        cwd=folder,
        capture_output=True,
        text=True,
    )
    assert {row["state"] for row in json.loads(board.stdout)} == {"qualified"}


def test_todays_selections_of_each_cluster_profile_are_its_subjects() -> None:
    from farm.catalog import load_catalog
    from farm.qualification.service import subjects_of, today_for

    snapshot = load_catalog(EXAMPLE)
    subjects = subjects_of(snapshot)
    assert any(selection for _, selection in subjects)  # the example declares profiles
    for cluster in {name for name, _ in subjects}:
        expected = [selection for name, selection in subjects if name == cluster]
        assert list(today_for(snapshot, cluster).digests) == expected
    assert today_for(snapshot, "no-such-cluster").declared is False
