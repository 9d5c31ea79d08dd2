"""The README's main job: ``farm run examples/fleet`` on a fresh, unconfigured FARM_HOME."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from farm.cli import app as cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "fleet"


@pytest.fixture
def fresh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("FARM_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # the embedded default lives in ./.farm
    return tmp_path / ".farm"


def test_the_example_fleet_renders_every_target_on_the_embedded_default(fresh_home: Path) -> None:
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES), "--json", "--processes", "2"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["state"] == "completed" and summary["failures"] == {}
    # 13 applications on both production clusters, 5 of them on staging as well.
    assert summary["counts"]["succeeded"] == 31
    assert (fresh_home / "farm.db").is_file() and (fresh_home / "keys" / "signing.key").is_file()
    again = CliRunner().invoke(cli, ["run", str(EXAMPLES), "--json", "--processes", "2"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["counts"]["cached"] == 31
