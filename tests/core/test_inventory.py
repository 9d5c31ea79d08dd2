"""docs/kinds.md is the registry's inventory; they must agree."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from farm.cli import app
from farm.core.inventory import inventory, inventory_markdown
from farm.core.registry import COMPONENT_TYPES, HELD_COMPONENT_TYPES, TRAIT_TYPES

DOC = Path(__file__).resolve().parents[2] / "docs" / "kinds.md"


def test_docs_kinds_matches_the_registry() -> None:
    assert DOC.read_text() == inventory_markdown(), "regenerate with: farm kinds --markdown > docs/kinds.md"


def test_inventory_has_one_row_per_registered_type() -> None:
    rows = inventory()
    assert len(rows) == len(COMPONENT_TYPES) + len(HELD_COMPONENT_TYPES) + len(TRAIT_TYPES)
    assert {r.type for r in rows if r.role == "component" and r.status != "held"} == set(COMPONENT_TYPES)
    assert {r.type for r in rows if r.status == "held"} == set(HELD_COMPONENT_TYPES)
    assert {r.type for r in rows if r.role == "trait"} == set(TRAIT_TYPES)


def test_every_registered_kind_component_names_what_it_emits() -> None:
    for row in inventory():
        if row.status == "kind":
            assert row.emits, f"{row.type} declares no emitted apiVersion/kind"


def test_farm_kinds_markdown_prints_the_document() -> None:
    result = CliRunner().invoke(app, ["kinds", "--markdown"])
    assert result.exit_code == 0
    assert result.stdout == inventory_markdown()
