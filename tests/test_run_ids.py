"""A run is named by its id, a unique prefix of it, or ``latest``: resolved in one place in the
store (on SQLite and PostgreSQL) and accepted by every command that takes a run id."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from conftest_store import Fleet
from sqlalchemy.orm import Session, sessionmaker

from farm.store.models import FleetRun, utcnow
from farm.store.run_ids import RunIdError, resolve_run_id

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "fleet"


def _add_runs(fleet: Fleet, ids: list[str]) -> None:
    """Runs with the given ids, each created a minute after the one before."""
    start = utcnow() - timedelta(hours=1)
    with fleet.sessions.begin() as session:
        for minutes, run_id in enumerate(ids):
            session.add(
                FleetRun(
                    id=run_id,
                    snapshot_digest=fleet.snapshot,
                    core_version="test",
                    state="completed",
                    created_at=start + timedelta(minutes=minutes),
                )
            )


def _resolve(sessions: sessionmaker[Session], typed: str) -> str:
    with sessions() as session:
        return resolve_run_id(session, typed)


IDS = ["0190aaaa" + "1" * 24, "0190aaab" + "2" * 24, "0190bbbb" + "3" * 24]


def test_a_full_run_id_names_its_run(fleet: Fleet) -> None:
    _add_runs(fleet, IDS)
    assert _resolve(fleet.sessions, IDS[1]) == IDS[1]


def test_a_unique_prefix_names_the_one_run_that_begins_with_it(fleet: Fleet) -> None:
    _add_runs(fleet, IDS)
    assert _resolve(fleet.sessions, "0190aaab") == IDS[1]
    assert _resolve(fleet.sessions, "0190B") == IDS[2]  # an id is hexadecimal: case does not matter


def test_latest_names_the_newest_run(fleet: Fleet) -> None:
    _add_runs(fleet, [IDS[2], IDS[0], IDS[1]])
    assert _resolve(fleet.sessions, "latest") == IDS[1]


def test_an_ambiguous_prefix_is_refused_naming_every_run_it_could_be(fleet: Fleet) -> None:
    _add_runs(fleet, IDS)
    with pytest.raises(RunIdError) as refused:
        _resolve(fleet.sessions, "0190aa")
    assert str(refused.value) == (
        f"run id prefix '0190aa' is ambiguous: runs {IDS[0]}, {IDS[1]} begin with it; give more of the id"
    )


@pytest.mark.parametrize("typed", ["0190c", "0190%", "0190_", "not-a-run"])
def test_a_prefix_no_run_begins_with_is_refused(fleet: Fleet, typed: str) -> None:
    _add_runs(fleet, IDS)
    with pytest.raises(
        RunIdError, match=f"run {re.escape(typed)} does not exist \\(give a run id, a unique prefix"
    ):
        _resolve(fleet.sessions, typed)


def test_latest_with_no_run_recorded_says_to_run_first(fleet: Fleet) -> None:
    with pytest.raises(RunIdError, match="no run is recorded yet"):
        _resolve(fleet.sessions, "latest")


# --- through the CLI -------------------------------------------------------------------------------


def _farm(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env.update(FARM_HOME=str(home), FARM_DAEMON="off")
    return subprocess.run(
        [sys.executable, "-m", "farm", *args], env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A farm home with two runs of the example fleet: the first renders, the second is cached."""
    home = tmp_path_factory.mktemp("run-ids") / ".farm"
    ids = []
    for _ in range(2):
        result = _farm(home, "run", str(EXAMPLES), "--json", "--processes", "2")
        assert result.returncode == 0, result.stderr
        ids.append(json.loads(result.stdout)["run_id"])
    return home, ids[0], ids[1]


@pytest.mark.timeout(300)
def test_farm_status_accepts_latest_and_a_unique_prefix(two_runs: tuple[Path, str, str]) -> None:
    home, first, second = two_runs
    latest = _farm(home, "status", "latest", "--json")
    assert latest.returncode == 0, latest.stderr
    assert json.loads(latest.stdout)["run_id"] == second
    prefix = _unique_prefix(first, second)
    by_prefix = _farm(home, "status", prefix, "--json")
    assert by_prefix.returncode == 0, by_prefix.stderr
    assert json.loads(by_prefix.stdout)["run_id"] == first


@pytest.mark.timeout(300)
def test_farm_diff_accepts_a_prefix_and_latest(two_runs: tuple[Path, str, str]) -> None:
    home, first, _ = two_runs
    result = _farm(home, "diff", _unique_prefix(first, two_runs[2]), "latest", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["unchanged"] == 31


@pytest.mark.timeout(300)
def test_farm_verify_with_an_ambiguous_prefix_is_one_error_naming_both_runs(
    two_runs: tuple[Path, str, str],
) -> None:
    home, first, second = two_runs
    common = os.path.commonprefix([first, second])
    result = _farm(home, "verify", "--run", common)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"Error: --run: run id prefix '{common}' is ambiguous: runs {first}, {second} begin with it; give more of the id\n"
    )


def _unique_prefix(mine: str, other: str) -> str:
    return mine[: len(os.path.commonprefix([mine, other])) + 1]
