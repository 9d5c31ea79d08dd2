"""The README's configuration and CLI references are checked against the code, so they cannot
drift: every ``FARM_*`` setting and every command is documented, and nothing documented is gone."""

from __future__ import annotations

import re
from pathlib import Path

from farm.cli import COMMANDS
from farm.settings import ENV_PREFIX, FarmSettings

README = Path(__file__).resolve().parents[2] / "README.md"


def _section(marker: str) -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"<!-- {marker} -->\n(.*?)<!-- /{marker} -->", text, re.S)
    assert match, f"README.md has no <!-- {marker} --> section"
    return match.group(1)


def _first_column(table: str) -> list[str]:
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return [row.split("|")[1] for row in rows]


def test_the_configuration_reference_lists_every_setting_and_nothing_else() -> None:
    documented = set(
        re.findall(r"`(FARM_[A-Z0-9_]+)`", "".join(_first_column(_section("settings-reference"))))
    )
    settings = {ENV_PREFIX + name.upper() for name in FarmSettings.model_fields}
    assert documented == settings, (
        f"missing from README: {sorted(settings - documented)}; gone from settings: {sorted(documented - settings)}"
    )


def test_the_cli_reference_lists_every_command_and_nothing_else() -> None:
    documented = {cell.strip().strip("`").split()[1] for cell in _first_column(_section("cli-reference"))}
    assert documented == set(COMMANDS), (
        f"missing from README: {sorted(set(COMMANDS) - documented)}; "
        f"not commands: {sorted(documented - set(COMMANDS))}"
    )
