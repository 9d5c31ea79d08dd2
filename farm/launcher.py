"""The ``farm`` executable: hand ``farm run`` and ``farm plan`` to this home's daemon when one serves it, else run
the CLI here. Importing this module costs only the standard library (``farm/daemon/protocol.py``)."""

from __future__ import annotations

import sys


def main() -> None:
    from farm.daemon.client import run_in_daemon, serves

    arguments = sys.argv[1:]
    if serves(arguments):
        status = run_in_daemon(arguments)
        if status is not None:
            raise SystemExit(status)
    from farm.cli import main as run_cli

    run_cli()
