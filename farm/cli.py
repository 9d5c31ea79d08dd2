"""The ``farm`` command. Each command group lives in ``farm/commands/`` and registers itself there.

A command's module is imported only when that command runs (or when ``farm --help`` lists them
all): ``farm build`` then imports the core and this CLI, not the database, Celery and S3 stacks
the storage commands need, and starts several times faster.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Iterator, MutableMapping
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

# Every command, in the order `farm --help` lists them, and the module under farm/commands whose
# register(app) adds it. A module that registers a command must list it here
# (tests/test_cli_startup.py checks both ways).
COMMANDS: dict[str, str] = {
    "build": "build",
    "db": "db",
    "keys": "keys",
    "verify": "verify",
    "export-evidence": "evidence",
    "gc": "gc",
    "kinds": "kinds",
    "plan": "plan",
    "audit": "audit",
    "run": "run",
    "runs": "run",
    "status": "run",
    "diff": "run",
    "output": "run",
    "worker": "workers",
    "beat": "workers",
    "reconcile": "workers",
    "qualify": "qualify",
    "qualification": "qualify",
    "publish": "publish",
    "serve": "serve",
    "daemon": "daemon",
    "doctor": "doctor",
}

Command = TyperCommand | TyperGroup


def load_module_commands(module_name: str) -> dict[str, Command]:
    """The click commands that ``farm.commands.<module_name>.register`` adds, by name."""
    module = importlib.import_module(f"farm.commands.{module_name}")
    holder = typer.Typer()
    module.register(holder)
    commands = dict(typer.main.get_group(holder).commands)
    for command in commands.values():
        _show_flags_as_flags(command)
    return commands


def _show_flags_as_flags(command: Command, help_option: Any = None) -> None:
    """Typer's help shows a type after every option, ``<bool>`` after a flag too (``--json
    <bool>`` reads as if it took a value): no flag of ``command`` or its subcommands shows one."""
    if help_option is None:
        help_option = command.get_help_option(command.context_class(command))  # made once, then cached
    for param in [*command.params, help_option]:
        if getattr(param, "is_flag", False):
            param.metavar = ""
    if isinstance(command, TyperGroup) and not isinstance(command.commands, _LazyCommands):
        for subcommand in command.commands.values():
            _show_flags_as_flags(subcommand)


class _LazyCommands(MutableMapping[str, Command]):
    """The root group's command table: every name in ``COMMANDS`` is known, its module is
    imported at the first look-up of one of its commands."""

    def __init__(self, loaded: MutableMapping[str, Command]) -> None:
        self._loaded = dict(loaded)

    def _load(self, name: str) -> None:
        if name not in self._loaded and name in COMMANDS:
            for command_name, command in load_module_commands(COMMANDS[name]).items():
                self._loaded.setdefault(command_name, command)

    def __getitem__(self, name: str) -> Command:
        self._load(name)
        return self._loaded[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*COMMANDS, *self._loaded]))

    def __len__(self) -> int:
        return len(set(COMMANDS) | set(self._loaded))

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or name in self._loaded


class LazyGroup(TyperGroup):
    """The root ``farm`` group, whose commands are imported on demand (see ``_LazyCommands``)."""

    def __init__(self, **attrs: object) -> None:
        super().__init__(**attrs)  # type: ignore[arg-type]
        self.commands = _LazyCommands(self.commands)

    def get_help_option(self, ctx: Any) -> Any:
        help_option = super().get_help_option(ctx)
        _show_flags_as_flags(self, help_option)  # the root's options are complete by now (completion's too)
        return help_option


app = typer.Typer(
    name="farm",
    cls=LazyGroup,
    help="A build farm for Kubernetes manifests: render, sign and qualify launcher Applications.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def farm_version() -> str:
    """``farm X (core Y)``: the farm's release and the core version that goes into every action
    key (its release and source digest: farm/identity/fingerprint.py)."""
    from farm import __version__
    from farm.identity.fingerprint import core_version

    return f"farm {__version__} (core {core_version()})"


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(farm_version())
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="print the farm's version and its core version (the action keys' fingerprint), then exit",
    ),
) -> None:
    """A build farm for Kubernetes manifests: render, sign and qualify launcher Applications."""


def main() -> None:
    """Run ``farm``; a known failure left unhandled by its command (a service unreachable, a
    missing file or key) becomes one ``Error:`` line and exit status 1 (farm/commands/_errors.py)."""
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "run":
        from farm.execution.warmup import warm_local_workers

        warm_local_workers(sys.argv[2:])  # the pool's workers load while this process plans
    try:
        _run_app()
    except SystemExit as done:
        if command in LEAVE_WITHOUT_TEARDOWN:
            _leave_now(done.code)
        raise


@functools.cache
def _click_command() -> Command:
    """``app`` as a click command, built once per process. ``app()`` builds the command tree (and
    each command module's, as it is looked up) anew at every call: about 20 ms of every command
    the farm daemon serves, a tenth of a no-change ``farm run`` of 2,000 targets (docs/performance.md).
    The commands keep no state between invocations (click makes a context for each). Typer's own
    ``app()`` also installs its exception hook, which with pretty exceptions off prints what
    Python's does."""
    return typer.main.get_command(app)


def _run_app() -> None:
    try:
        _click_command()(prog_name="farm")  # also names completion's variable: _FARM_COMPLETE
    except Exception as error:
        from farm.commands._errors import describe

        message = describe(error)
        if message is None:
            raise
        sys.stderr.write(f"Error: {message}\n")
        raise SystemExit(1) from None


# Commands that hold a whole catalog and plan when they end (see _leave_now).
LEAVE_WITHOUT_TEARDOWN = frozenset({"run", "plan"})


def _leave_now(code: object) -> None:
    """End ``farm run`` or ``farm plan`` without the interpreter's teardown: freeing the catalog,
    the plan and the imported stacks object by object took about 0.1 s, a sixth of a no-change
    re-run. Every exit handler still runs (the forkserver stopped, SQLite's connections closed so
    its write-ahead log is checkpointed away, logs flushed) and everything the command wrote is
    with the kernel already (SQLite's and the object store's writes are system calls, made durable
    where the farm needs it before this point). With another thread still running, the
    interpreter exits as usual."""
    import atexit
    import contextlib
    import os
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        sys.stderr.write(f"{code}\n")
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError):  # a reader that went away (farm run | head)
            stream.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
