"""A command that only reads the farm, run where no farm is, says so in one ``Error:`` line and
what to do, and leaves the folder as it was (no empty ``./.farm/`` created)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli_errors import farm, free_port, single_error

READ_ONLY = [
    ("runs",),
    ("status", "0190a0a0-0000-7000-8000-000000000000"),
    ("diff", "a", "b"),
    ("output", "app/cluster"),
    ("verify", "--all"),
    ("qualification",),
    ("gc", "--dry-run"),
    ("serve", "--port", "PORT"),
]


def _argv(command: tuple[str, ...]) -> list[str]:
    return [str(free_port()) if part == "PORT" else part for part in command]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", READ_ONLY, ids=lambda command: command[0])
def test_a_read_only_command_where_no_farm_is_says_so_and_creates_no_farm_home(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    result = farm(*_argv(command), cwd=tmp_path)
    error = single_error(result)
    assert error == (
        f"Error: no farm home at {tmp_path / '.farm'} (no farm.db there): run `farm run CATALOG` in this "
        "folder first, or set FARM_HOME (or FARM_DATABASE_URL) to the farm you mean"
    )
    assert list(tmp_path.iterdir()) == []


def test_farm_audit_where_no_farm_is_says_so_and_creates_no_farm_home(tmp_path: Path) -> None:
    assert "Error: no farm home at" in single_error(farm("audit", cwd=tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_a_farm_home_setting_naming_no_farm_is_refused_without_creating_it(tmp_path: Path) -> None:
    home = tmp_path / "elsewhere" / "farm"
    result = farm("runs", env={"FARM_HOME": str(home)}, cwd=tmp_path)
    assert f"no farm home at {home}" in single_error(result)
    assert not (tmp_path / "elsewhere").exists()


def test_a_sqlite_database_setting_naming_no_file_is_refused_naming_the_setting(tmp_path: Path) -> None:
    database = tmp_path / "db" / "farm.db"
    result = farm("runs", env={"FARM_DATABASE_URL": f"sqlite:///{database}"}, cwd=tmp_path)
    assert single_error(result) == (
        f"Error: no farm database at {database} (FARM_DATABASE_URL): run `farm run CATALOG` or `farm db "
        "upgrade` first, or point FARM_DATABASE_URL at the farm you mean"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_command_reads_the_farm_once_one_exists(tmp_path: Path) -> None:
    assert farm("db", "upgrade", cwd=tmp_path).returncode == 0
    result = farm("runs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "fleet"


@pytest.mark.timeout(120)
def test_farm_plan_where_no_farm_is_plans_against_nothing_and_creates_no_farm_home(tmp_path: Path) -> None:
    result = farm("plan", str(EXAMPLE), "--json", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    plan = json.loads(result.stdout)
    assert (plan["against"], plan["render"], plan["causes"]) == ("nothing", 31, {"target added": 31})
    assert "planned against nothing, so every target would render" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.timeout(120)
def test_farm_plan_against_a_run_where_no_farm_is_says_so_and_creates_no_farm_home(tmp_path: Path) -> None:
    error = single_error(farm("plan", str(EXAMPLE), "--against", "latest", cwd=tmp_path))
    assert error.startswith(f"Error: --against: no farm home at {tmp_path / '.farm'}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.timeout(120)
@pytest.mark.parametrize("catalog", ["missing", "empty"])
def test_farm_run_of_a_catalog_it_cannot_load_creates_no_farm_home(tmp_path: Path, catalog: str) -> None:
    if catalog == "empty":
        (tmp_path / "empty").mkdir()
    result = farm("run", catalog, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("Error: ")
    assert not (tmp_path / ".farm").exists()
