"""The type inventory: every registered component and trait type with its status, the objects it
emits and how its properties are decoded, produced from the registry (``farm kinds``)."""

from __future__ import annotations

from dataclasses import dataclass

from farm.core.registry import (
    COMPONENT_TYPES,
    HELD_COMPONENT_TYPES,
    TRAIT_TYPES,
    component_type,
    trait_type,
)


@dataclass(frozen=True)
class InventoryRow:
    type: str
    role: str  # "component" or "trait"
    status: str
    emits: tuple[str, ...]
    decode: str


def inventory() -> list[InventoryRow]:
    rows = []
    for name in sorted(COMPONENT_TYPES):
        handler = component_type(name)
        assert handler is not None
        rows.append(InventoryRow(name, "component", handler.status, handler.emits, handler.decode))
    for name, kind in sorted(HELD_COMPONENT_TYPES.items()):
        rows.append(
            InventoryRow(name, "component", "held", (f"admissionregistration.k8s.io/v1 {kind}",), "–")
        )
    for name in sorted(TRAIT_TYPES):
        trait = trait_type(name)
        assert trait is not None
        status = "lowering rule" if trait.lower is not None else "trait"
        decode = f"capability {trait.capability}"
        rows.append(InventoryRow(name, "trait", status, trait.emits, decode))
    return rows


def inventory_markdown() -> str:
    lines = [
        "# Component and trait types",
        "",
        "Generated from the registry by `farm kinds --markdown`; `tests/core/test_inventory.py` fails",
        "when this file and the registry disagree.",
        "",
        "| type | role | status | emits | decode |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in inventory():
        emits = "<br>".join(row.emits) if row.emits else "–"
        lines.append(f"| `{row.type}` | {row.role} | {row.status} | {emits} | {row.decode} |")
    return "\n".join(lines) + "\n"
