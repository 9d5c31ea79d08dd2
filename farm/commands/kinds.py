"""``farm kinds``: every component and trait type the registry holds."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from farm.core.inventory import inventory, inventory_markdown


def kinds_command(
    markdown: bool = typer.Option(False, "--markdown", help="print docs/kinds.md instead of a table"),
) -> None:
    """List every component and trait type with its status, emitted kinds and decode style."""
    if markdown:
        typer.echo(inventory_markdown(), nl=False)
        return
    table = Table("type", "role", "status", "emits", "decode")
    for row in inventory():
        table.add_row(row.type, row.role, row.status, "\n".join(row.emits) or "-", row.decode)
    Console().print(table)


def register(app: typer.Typer) -> None:
    app.command("kinds")(kinds_command)
