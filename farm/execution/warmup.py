"""Start the local pool's forkserver before ``farm run`` imports and plans.

A local pool worker is forked from a forkserver (not from the planner: it must not carry the
catalog in its memory). Left to the pool, that server starts after planning and each worker then
imports the database, signing and core stacks itself: about as long as rendering 2,000 targets on
this kind of machine. Started here, first thing in ``farm run``, the server imports those modules
once, on another core, while the command itself imports and plans; the workers fork from it with
everything loaded. Importing this module costs nothing: only the standard library.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Sequence

# What a pool worker imports before its first job: the job runner with the core, evidence and
# store stacks it pulls in, every handler of the core (its render child forks with them), the
# storage and key loaders of the worker's initializer, and the SQLite driver SQLAlchemy loads
# when the worker opens its engine.
WORKER_MODULES = (
    "farm.fleet.jobs",
    "farm.build.handlers",
    "farm.execution.local",
    "farm.store.context",
    "farm.evidence.keys",
    "farm.logs",
    "sqlalchemy.dialects.sqlite.pysqlite",
)


def forkserver_context() -> multiprocessing.context.BaseContext:
    """The context the local pool starts its workers in, with the worker modules preloaded."""
    if not sys.platform.startswith("linux"):
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(WORKER_MODULES))  # no effect once the server runs
    return context


def _executor_in(arguments: Sequence[str]) -> str | None:
    for index, argument in enumerate(arguments):
        if argument == "--executor" and index + 1 < len(arguments):
            return arguments[index + 1]
        if argument.startswith("--executor="):
            return argument.partition("=")[2]
    return None


def will_run_locally(arguments: Sequence[str], environment: dict[str, str] | None = None) -> bool:
    """Whether ``farm run ARGUMENTS`` would pick the local executor, read the cheap way (the
    command line, then the environment); unsure means no, and the command decides for real."""
    chosen = _executor_in(arguments)
    if chosen is not None:
        return chosen == "local"
    environment = os.environ if environment is None else environment
    if environment.get("FARM_BROKER_URL"):
        return False
    return environment.get("FARM_EXECUTOR", "local") == "local"


def warm_local_workers(arguments: Sequence[str]) -> None:
    """Start the forkserver, with the worker modules preloaded, when ``farm run ARGUMENTS`` will
    render on the local pool. Only an optimisation: anything going wrong is left to the pool."""
    if "--help" in arguments or not sys.platform.startswith("linux") or not will_run_locally(arguments):
        return
    try:
        from multiprocessing import forkserver

        forkserver_context()
        # Ctrl-C reaches the whole process group: the server, importing the worker modules for
        # about a second, printed a KeyboardInterrupt traceback under the command. Started with
        # SIGINT ignored (an ignored signal stays ignored across exec) it ignores Ctrl-C as it
        # does once ready; its workers take Ctrl-C again (``farm.execution.local``).
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            forkserver.ensure_running()
        finally:
            signal.signal(signal.SIGINT, previous)
    except (OSError, ValueError):
        return
    atexit.register(stop_forkserver)


def stop_forkserver() -> None:
    """Stop the server when ``farm run`` exits. It holds the command's stdout and stderr, and
    would only notice the exit once done preloading: a no-change re-run's output piped to
    another program would not end before the server's imports had."""
    from multiprocessing import forkserver

    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    if pid:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
