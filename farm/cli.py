"""The ``farm`` command. Each command group lives in ``farm/commands/`` and registers itself here."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="farm",
    help="A build farm for Kubernetes manifests: render, sign and qualify launcher Applications.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """A build farm for Kubernetes manifests: render, sign and qualify launcher Applications."""


# Modules under farm/commands that expose register(app). Adding a command group adds one name.
COMMAND_MODULES = ["build", "db", "keys", "verify", "gc", "kinds", "run", "workers"]


def _register_commands() -> None:
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"farm.commands.{name}")
        module.register(app)


_register_commands()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
