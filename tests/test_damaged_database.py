"""A damaged ``farm.db`` (cut short, overwritten with garbage, a run of torn pages): every command
says so in one ``Error:`` line naming the file and the recovery section of docs/reliability.md,
and ``farm verify --all`` says what of it still reads back."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "fleet"
COMMANDS = (
    ("runs",),
    ("run", "CATALOG", "--processes", "1"),
    ("plan", "CATALOG"),
    ("status", "0123456789abcdef0123456789abcdef"),
    ("output", "greeter/prod-nginx"),
    ("qualification",),
    ("gc", "--dry-run"),
    ("verify", "--all"),
)


def _truncate(database: Path) -> None:
    with database.open("r+b") as file:
        file.truncate(database.stat().st_size // 2)


def _garbage(database: Path) -> None:
    database.write_bytes(os.urandom(database.stat().st_size))


def _torn_pages(database: Path) -> None:
    """Pages 3 to 6 overwritten: the schema page reads, some table or index does not."""
    data = bytearray(database.read_bytes())
    data[4096 * 2 : 4096 * 6] = b"\x5a" * (4096 * 4)
    database.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def rendered_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A home holding one run of the example catalog, and the catalog."""
    root = tmp_path_factory.mktemp("damaged")
    catalog = root / "fleet"
    shutil.copytree(EXAMPLE, catalog)
    home = root / "home"
    result = _farm(home, "run", str(catalog), "--processes", "1")
    assert result.returncode == 0, result.stderr
    return home, catalog


def _farm(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env |= {"FARM_HOME": str(home), "FARM_DAEMON": "off"}
    return subprocess.run(
        [sys.executable, "-m", "farm", *args], env=env, capture_output=True, text=True, timeout=120
    )


def _damaged_copy(rendered_home: tuple[Path, Path], tmp_path: Path, damage: Callable[[Path], None]) -> Path:
    home = tmp_path / "home"
    shutil.copytree(rendered_home[0], home)
    damage(home / "farm.db")
    return home


@pytest.mark.timeout(600)
@pytest.mark.parametrize("damage", [_truncate, _garbage], ids=["truncated", "garbage"])
def test_every_command_on_a_damaged_database_says_so_in_one_error_line(
    rendered_home: tuple[Path, Path], tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    home = _damaged_copy(rendered_home, tmp_path, damage)
    database = home / "farm.db"
    for command in COMMANDS:
        args = [str(rendered_home[1]) if arg == "CATALOG" else arg for arg in command]
        result = _farm(home, *args)
        assert result.returncode == 1, (command, result.stderr)
        lines = result.stderr.splitlines()
        assert len(lines) == 1, (command, result.stderr)
        assert lines[0].startswith(f"Error: {database}: the database file is damaged ("), command
        assert "restore it from a backup" in lines[0] and "docs/reliability.md" in lines[0], command
    verify = _farm(home, "verify", "--all")
    assert verify.stdout.startswith(f"DAMAGE {database}: nothing reads back (")


@pytest.mark.timeout(300)
def test_verify_names_torn_pages_and_what_still_reads_back(
    rendered_home: tuple[Path, Path], tmp_path: Path
) -> None:
    home = _damaged_copy(rendered_home, tmp_path, _torn_pages)
    verify = _farm(home, "verify", "--all")
    assert verify.returncode == 1 and "Traceback" not in verify.stderr, verify.stderr
    lines = verify.stdout.splitlines()
    assert any(line.startswith("DAMAGE table ") for line in lines), verify.stdout
    assert any(line.startswith("DAMAGE runs: ") or " affected: " in line for line in lines), verify.stdout
    assert any(line.startswith(f"FAIL database.damaged: database {home / 'farm.db'}: ") for line in lines)


# commands that read blobs: each says the object store's file is damaged, and nothing of farm.db
BLOB_COMMANDS = (
    ("run", "CATALOG", "--processes", "1"),
    ("output", "greeter/prod-nginx"),
    ("gc", "--dry-run"),
    ("verify", "--all"),
)


@pytest.mark.timeout(600)
def test_every_command_reading_a_damaged_small_blob_file_says_so_in_one_error_line(
    rendered_home: tuple[Path, Path], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(rendered_home[0], home)
    objects = home / "objects"
    for log in objects.glob("small-blobs.db-*"):
        log.unlink()
    _garbage(objects / "small-blobs.db")
    for command in BLOB_COMMANDS:
        args = [str(rendered_home[1]) if arg == "CATALOG" else arg for arg in command]
        result = _farm(home, *args)
        assert result.returncode == 1, (command, result.stderr)
        assert result.stderr.splitlines() == [result.stderr.strip()], (command, result.stderr)
        assert result.stderr.startswith(f"Error: local object store {objects} refused a read: "), command
        assert "the file is damaged: restore the object store folder from a backup" in result.stderr, command
        assert "'A damaged small-blobs.db'" in result.stderr and "[store.unavailable]" in result.stderr
        assert "DAMAGE" not in result.stdout, command  # farm.db is whole: no report of it
