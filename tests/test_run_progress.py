"""``farm run`` on the local executor shows its progress while the jobs run: plain lines when
stderr is not a terminal, a rich bar on one; none with ``--json`` or when nothing is left to do."""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "fleet"
LINE = re.compile(
    r"^run (?P<run>\w+): (?P<done>\d+)/(?P<total>\d+) targets done: rendered (?P<rendered>\d+), "
    r"cached (?P<cached>\d+), failed (?P<failed>\d+); (?P<pace>rate -, ETA -|[\d.]+ targets/s, ETA .+)$"
)


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env.update(FARM_HOME=str(home), FARM_DAEMON="off", **extra)
    return env


def _farm_run(home: Path, *extra: str, catalog: Path = EXAMPLES) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "farm", "run", str(catalog), "--processes", "1", *extra],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _longer_fleet(root: Path, copies: int) -> tuple[Path, int]:
    """The example fleet with ``copies`` more copies of one application (each renders for the two
    production clusters), so a run lasts several progress intervals; the folder and its targets."""
    shutil.copytree(EXAMPLES, root)
    app = (EXAMPLES / "applications" / "docs-site" / "app.yaml").read_text()
    for index in range(copies):
        folder = root / "applications" / f"docs-site-{index}"
        folder.mkdir()
        (folder / "app.yaml").write_text(app.replace("name: docs-site", f"name: docs-site-{index}", 1))
    return root, 31 + 2 * copies


@pytest.mark.timeout(300)
def test_farm_run_off_a_terminal_prints_a_progress_line_as_jobs_finish(tmp_path: Path) -> None:
    catalog, total = _longer_fleet(tmp_path / "fleet", copies=80)
    result = _farm_run(tmp_path / ".farm", "--progress-every", "0.1", catalog=catalog)
    assert result.returncode == 0, result.stderr
    lines = [LINE.match(line) for line in result.stderr.splitlines()]
    assert lines and all(lines), result.stderr
    done = [int(line["done"]) for line in lines if line]
    assert done == sorted(done)
    assert done[0] == 0 and done[-1] == total
    assert any(0 < count < total for count in done), result.stderr  # seen while the run was going on
    last = lines[-1]
    assert last is not None
    assert (last["total"], last["rendered"], last["cached"], last["failed"]) == (
        str(total),
        str(total),
        "0",
        "0",
    )
    assert "targets/s, ETA" in last["pace"]
    assert result.stdout.startswith(f"run {last['run']}: completed\n")


@pytest.mark.timeout(300)
def test_farm_run_prints_no_progress_with_json_or_when_nothing_is_left_to_render(tmp_path: Path) -> None:
    first = _farm_run(tmp_path / ".farm", "--json", "--progress-every", "0.1")
    assert first.returncode == 0, first.stderr
    assert "targets done" not in first.stderr
    again = _farm_run(tmp_path / ".farm", "--progress-every", "0.1")
    assert again.returncode == 0, again.stderr
    assert "targets done" not in again.stderr
    assert "cached 31" in again.stdout


def _run_on_a_terminal(home: Path) -> tuple[int, str]:
    """``farm run`` with its stderr on a pseudo-terminal: its status and what the terminal got."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "farm", "run", str(EXAMPLES), "--processes", "1"],
        env=_env(home, TERM="xterm-256color", COLUMNS="200"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=terminal,
    )
    os.close(terminal)
    shown = bytearray()
    while True:
        ready, _, _ = select.select([controller], [], [], 1.0)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal's other end closed (Linux: EIO)
            break
        if not chunk:
            break
        shown += chunk
    assert process.stdout is not None
    process.stdout.read()
    status = process.wait(timeout=60)
    os.close(controller)
    return status, shown.decode(errors="replace")


@pytest.mark.timeout(300)
def test_farm_run_on_a_terminal_draws_a_progress_bar_with_counts_rate_and_eta(tmp_path: Path) -> None:
    status, shown = _run_on_a_terminal(tmp_path / ".farm")
    assert status == 0, shown
    assert "\x1b[" in shown  # drawn in place with the terminal's control sequences
    assert "rendering" in shown and "31/31" in shown, shown
    assert re.search(r"rendered 31, cached 0, failed 0, [\d.]+/s, ETA \d+ s", shown), shown
    assert "targets done" not in shown  # the plain lines are for logs only
