"""docs/configuration.md is generated from the settings model; they must agree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from farm.settings import ENV_PREFIX, FarmSettings
from farm.settings_doc import REGENERATE, configuration_markdown

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "configuration.md"


def test_the_configuration_doc_matches_the_settings_model() -> None:
    assert DOC.read_text(encoding="utf-8") == configuration_markdown(), (
        f"docs/configuration.md differs from the settings model; regenerate it with: {REGENERATE}"
    )


def test_every_setting_has_one_row_with_its_description() -> None:
    page = configuration_markdown()
    rows = [line for line in page.splitlines() if line.startswith("| `FARM_")]
    assert [row.split("`")[1] for row in rows] == [
        ENV_PREFIX + name.upper() for name in FarmSettings.model_fields
    ]
    for name, field in FarmSettings.model_fields.items():
        assert field.description, f"{ENV_PREFIX}{name.upper()} has no description in FarmSettings"


def test_defaults_under_the_home_are_shown_under_home_not_as_this_machines_paths(tmp_path: Path) -> None:
    page = configuration_markdown()
    assert "| `sqlite:///<home>/farm.db` |" in page
    assert "| `<home>/objects` |" in page
    assert "| `<home>/keys/signing.key` |" in page
    assert "| `<home>/keys/trusted_signers` |" in page
    assert str(Path.cwd()) not in page and str(Path.home()) not in page


def test_the_page_does_not_depend_on_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARM_HOME", "/elsewhere")
    monkeypatch.setenv("FARM_BATCH_SIZE", "7")
    assert configuration_markdown() == DOC.read_text(encoding="utf-8")


def test_the_module_prints_the_page() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "farm.settings_doc"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == configuration_markdown()
