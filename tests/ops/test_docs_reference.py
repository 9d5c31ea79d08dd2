"""The README's CLI reference is checked against the code, so it cannot drift: every command is
documented, and nothing documented is gone. (The settings are documented in docs/configuration.md,
generated from the model; tests/test_configuration_doc.py keeps it equal.)"""

from __future__ import annotations

import re
from pathlib import Path

from farm.cli import COMMANDS

README = Path(__file__).resolve().parents[2] / "README.md"


def _section(marker: str) -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"<!-- {marker} -->\n(.*?)<!-- /{marker} -->", text, re.S)
    assert match, f"README.md has no <!-- {marker} --> section"
    return match.group(1)


def _first_column(table: str) -> list[str]:
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return [row.split("|")[1] for row in rows]


def test_the_cli_reference_lists_every_command_and_nothing_else() -> None:
    documented = {cell.strip().strip("`").split()[1] for cell in _first_column(_section("cli-reference"))}
    assert documented == set(COMMANDS), (
        f"missing from README: {sorted(set(COMMANDS) - documented)}; "
        f"not commands: {sorted(documented - set(COMMANDS))}"
    )


README_BUDGET = 300  # lines: detail goes to a docs/*.md page the README links


def test_the_readme_stays_within_its_line_budget() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_BUDGET, f"README.md has {lines} lines, over its {README_BUDGET}-line budget"


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_page_and_section_the_readme_links_exists() -> None:
    links = re.findall(r"\]\((docs/[^)#]+\.md)(?:#([^)]+))?\)", README.read_text(encoding="utf-8"))
    assert links
    for page, anchor in links:
        path = README.parent / page
        assert path.is_file(), f"README.md links {page}, which does not exist"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.M)
            assert anchor in {_anchor(h) for h in headings}, (
                f"README.md links {page}#{anchor}: no such heading"
            )
