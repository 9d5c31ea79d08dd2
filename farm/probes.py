"""Container health checks (``docker-compose.yml``), one line and exit 1 when unhealthy:

- ``python -m farm.probes worker [--node NAME]``: this host's Celery worker answers a ping sent
  through the broker (``celery inspect ping`` against itself): broker reachable, worker consuming;
- ``python -m farm.probes beat [--folder DIR]``: the broker answers, and the beat's schedule file
  (which the beat writes at start and at least every three minutes) changed recently.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from pathlib import Path

PING_TIMEOUT_SECONDS = 5.0
BEAT_FILE_MAX_AGE_SECONDS = 600.0  # the beat syncs its schedule file every 180 s


def worker_problem(node: str, timeout: float = PING_TIMEOUT_SECONDS) -> str | None:
    """Why worker ``node`` did not answer a ping through the broker, or None when it did."""
    from kombu.exceptions import OperationalError

    from workers.celery_app import app

    try:
        replies = app.control.ping(destination=[node], timeout=timeout)
    except OperationalError as error:
        return f"the broker does not answer: {error}"
    if not any(node in reply for reply in replies):
        return f"worker {node} did not answer a ping within {timeout:.0f} s"
    return None


def broker_problem(timeout: float = PING_TIMEOUT_SECONDS) -> str | None:
    """Why the broker of FARM_BROKER_URL does not accept a connection, or None when it does."""
    from kombu.exceptions import OperationalError

    from workers.celery_app import app

    try:
        with app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, timeout=timeout)
    except (OperationalError, OSError) as error:
        return f"the broker does not answer: {error}"
    return None


def beat_problem(folder: Path, max_age: float = BEAT_FILE_MAX_AGE_SECONDS) -> str | None:
    """Why the beat writing its schedule in ``folder`` looks dead, or None when it looks alive."""
    files = list(folder.glob("celerybeat-schedule*"))
    if not files:
        return f"no beat schedule file in {folder}: the beat has not started there"
    age = time.time() - max(path.stat().st_mtime for path in files)
    if age > max_age:
        return f"the beat schedule in {folder} has not changed for {age:.0f} s: the beat is stuck"
    return broker_problem()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m farm.probes", description=__doc__)
    checks = parser.add_subparsers(dest="check", required=True)
    worker = checks.add_parser("worker", help="this host's worker answers a ping through the broker")
    worker.add_argument("--node", default=f"celery@{socket.gethostname()}")
    beat = checks.add_parser("beat", help="the broker answers and the beat's schedule file is fresh")
    beat.add_argument("--folder", type=Path, default=Path.cwd())
    arguments = parser.parse_args(argv)
    if arguments.check == "worker":
        problem = worker_problem(arguments.node)
    else:
        problem = beat_problem(arguments.folder)
    if problem is not None:
        print(f"Error: {problem}", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
