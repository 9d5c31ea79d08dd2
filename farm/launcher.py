"""The ``farm`` executable: hand ``farm run`` and ``farm plan`` to this home's daemon when one
serves them, else run the CLI here. Any other command (``farm build`` first of all) goes straight
to the CLI without importing the daemon's client."""

from __future__ import annotations

import sys

# Commands a farm daemon runs; every other command runs in its own process.
SERVED_COMMANDS = frozenset({"run", "plan"})


def main() -> None:
    arguments = sys.argv[1:]
    if arguments and arguments[0] in SERVED_COMMANDS:
        from farm.daemon.client import run_in_daemon, serves

        if serves(arguments):
            status = run_in_daemon(arguments)
            if status is not None:
                raise SystemExit(status)
    from farm.cli import main as run_cli

    run_cli()
