"""The ``farm`` executable: hand ``farm run`` and ``farm plan`` to this home's daemon when one
serves them, else run the CLI here. Any other command (``farm build`` first of all) goes straight
to the CLI without importing the daemon's client."""

from __future__ import annotations

import os
import sys

# Commands a farm daemon runs; every other command runs in its own process.
SERVED_COMMANDS = frozenset({"run", "plan"})

GONE_FOLDER = (
    "Error: the current folder no longer exists (it was removed while this shell was in it);"
    " cd to a folder that exists and run the command again\n"
)


def main() -> None:
    if not _working_folder_exists():  # every relative path (./.farm/ first) would name nothing
        sys.stderr.write(GONE_FOLDER)
        raise SystemExit(1)
    arguments = sys.argv[1:]
    if arguments and arguments[0] in SERVED_COMMANDS:
        from farm.daemon.client import run_in_daemon, serves

        if serves(arguments):
            status = run_in_daemon(arguments)
            if status is not None:
                raise SystemExit(status)
    from farm.cli import main as run_cli

    run_cli()


def _working_folder_exists() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return False
    return True
