"""The CLI's face: ``farm --version``, shell completion, and help that shows flags as flags and
defaults as they are."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from farm import __version__
from farm.cli import COMMANDS, app
from farm.identity.fingerprint import core_version


def _farm(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith(("FARM_", "_FARM"))}
    clean.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "farm", *args], env=clean, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def _help(*command: str) -> str:
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def _every_command() -> list[tuple[str, ...]]:
    commands: list[tuple[str, ...]] = [()]
    for name in COMMANDS:
        commands.append((name,))
    commands += [("db", "upgrade"), ("db", "downgrade")]
    commands += [("keys", sub) for sub in ("generate", "trust")]
    return commands


def test_farm_version_prints_the_farm_release_and_the_core_version_the_action_keys_use(
    tmp_path: Path,
) -> None:
    result = _farm("--version", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"farm {__version__} (core {core_version()})\n"
    assert not (tmp_path / ".farm").exists()


def test_bash_completion_completes_command_names_and_a_command_s_options(tmp_path: Path) -> None:
    commands = _farm(
        cwd=tmp_path, env={"_FARM_COMPLETE": "complete_bash", "COMP_WORDS": "farm ru", "COMP_CWORD": "1"}
    )
    assert commands.returncode == 0, commands.stderr
    assert commands.stdout.split() == ["run", "runs"]
    options = _farm(
        cwd=tmp_path, env={"_FARM_COMPLETE": "complete_bash", "COMP_WORDS": "farm run --j", "COMP_CWORD": "2"}
    )
    assert options.stdout.split() == ["--json"]


def test_farm_help_offers_to_install_shell_completion() -> None:
    shown = _help()
    assert "--install-completion" in shown and "--show-completion" in shown


@pytest.mark.parametrize("command", _every_command(), ids=lambda command: " ".join(command) or "farm")
def test_no_flag_of_any_command_is_shown_as_taking_a_bool(command: tuple[str, ...]) -> None:
    shown = _help(*command)
    assert "<bool>" not in shown
    assert re.search(r"--help\s+Show this message", shown), shown


def test_a_flag_and_a_valued_option_are_told_apart_in_farm_run_help() -> None:
    shown = _help("run")
    assert re.search(r"--json\s+print the summary", shown), shown
    assert re.search(r"--executor\s+<str>", shown), shown


@pytest.mark.parametrize(
    ("command", "option", "default"),
    [
        (("run",), "--processes", "default: every core"),
        (("worker",), "--concurrency", "default: every core"),
        (("worker",), "--metrics-port", "default: none"),
    ],
)
def test_a_default_is_shown_as_what_it_means_not_as_zero(
    command: tuple[str, ...], option: str, default: str
) -> None:
    shown = _help(*command)
    assert option in shown and default in shown
    assert "[default: 0]" not in shown
