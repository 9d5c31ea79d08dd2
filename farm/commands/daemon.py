"""``farm daemon start|stop|status``: the resident process that runs ``farm run`` and ``farm plan`` warm."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import typer

from farm.commands._support import fail, reported_errors
from farm.daemon import protocol
from farm.daemon.server import Daemon, DaemonRunning, ask
from farm.settings import load_settings, make_private_folder

daemon_app = typer.Typer(
    help="A resident process per FARM_HOME that runs farm run and farm plan with its imports and local workers "
    "already warm (FARM_DAEMON=off: never use it).",
    no_args_is_help=True,
)

START_TIMEOUT_SECONDS = 120.0
STOP_TIMEOUT_SECONDS = 120.0
NOT_RUNNING = 3  # the exit status of `farm daemon status` with no daemon (as LSB's status)


def _home() -> Path:
    with reported_errors():
        return load_settings().home


@daemon_app.command("start")
def start_command(
    idle: float = typer.Option(
        10800, "--idle", min=0, help="stop after SECONDS without a command (0: never); default 3 hours"
    ),
    foreground: bool = typer.Option(
        False, "--foreground", help="serve in this process (for a service manager)"
    ),
) -> None:
    """Start this home's daemon, warm it up, and return once it serves (a no-op if one runs)."""
    if not sys.platform.startswith("linux"):
        raise fail("farm daemon needs Linux (its socket checks its client's user with SO_PEERCRED)")
    home = _home()
    socket_path = home / protocol.SOCKET_NAME
    running = ask(socket_path, {"op": "status"})
    if running is not None and running["same_code"]:
        typer.echo(f"farm daemon already running for {home} (pid {running['pid']})")
        return
    if running is not None:  # it runs older farm code: replaced by one of this code
        _stop(home)
        typer.echo(f"farm daemon pid {running['pid']} ran other farm code: stopped")
    with reported_errors():
        make_private_folder(home)
    if foreground:
        try:
            with reported_errors():  # a missing key, a bad setting: one Error: line (in the log)
                Daemon(home, idle).serve()
        except DaemonRunning as running_one:
            raise fail(str(running_one)) from None
        return
    pid = _start_detached(home, idle)
    typer.echo(f"farm daemon started for {home} (pid {pid}); log: {home / protocol.LOG_NAME}")


def _start_detached(home: Path, idle: float) -> int:
    log_path = home / protocol.LOG_NAME
    with open(log_path, "ab") as log:
        process = subprocess.Popen(  # noqa: S603 - this interpreter running this farm
            [sys.executable, "-m", "farm", "daemon", "start", "--foreground", "--idle", f"{idle:g}"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # not stopped by the terminal's Ctrl-C or hang-up
        )
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        status = ask(home / protocol.SOCKET_NAME, {"op": "status"}, timeout=2.0)
        if status is not None:
            return int(status["pid"])
        if process.poll() is not None:
            raise fail(f"the farm daemon did not start: {_last_line(log_path)} (log: {log_path})")
        time.sleep(0.05)
    process.kill()
    raise fail(f"the farm daemon did not answer within {START_TIMEOUT_SECONDS:g} s (log: {log_path})")


def _last_line(path: Path) -> str:
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1].strip().removeprefix("Error: ") if lines else "it wrote nothing"


@daemon_app.command("stop")
def stop_command() -> None:
    """Stop this home's daemon once its current command (if any) has ended."""
    home = _home()
    pid = _stop(home)
    typer.echo(f"farm daemon stopped (pid {pid})" if pid is not None else f"no farm daemon runs for {home}")


def _stop(home: Path) -> int | None:
    """Ask this home's daemon to stop and wait until it has; its pid, None when none ran."""
    status = ask(home / protocol.SOCKET_NAME, {"op": "stop"})
    if status is None:
        return None
    pid = int(status["pid"])
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    while _alive(pid):
        if time.monotonic() >= deadline:
            raise fail(f"the farm daemon (pid {pid}) did not stop within {STOP_TIMEOUT_SECONDS:g} s")
        time.sleep(0.05)
    return pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # our own child (a daemon started by this process) lingers as a zombie until reaped
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:
        return _not_a_zombie(pid)


def _not_a_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


@daemon_app.command("status")
def status_command(
    as_json: bool = typer.Option(False, "--json", help="print the status as one JSON object"),
) -> None:
    """Say whether a daemon serves this home (exit status 3 when none does)."""
    home = _home()
    status = ask(home / protocol.SOCKET_NAME, {"op": "status"})
    if status is None:
        typer.echo(
            json.dumps({"running": False, "home": str(home)})
            if as_json
            else f"no farm daemon runs for {home}"
        )
        raise typer.Exit(NOT_RUNNING)
    if as_json:
        typer.echo(
            json.dumps({"running": True, **status, "log": str(home / protocol.LOG_NAME)}, sort_keys=True)
        )
        return
    up = time.time() - float(status["started"])
    idle = f"{status['idle_seconds']:g} s" if status["idle_seconds"] else "never"
    memory = f", {status['rss_mib']:g} MiB resident" if status.get("rss_mib") is not None else ""
    typer.echo(
        f"farm daemon pid {status['pid']} serves {status['home']}: up {up:.0f} s, "
        f"{status['served']} commands served{', busy' if status['busy'] else ''}{memory}; idle timeout {idle}; "
        f"log: {home / protocol.LOG_NAME}"
    )
    if not status["same_code"]:
        typer.echo(
            "its farm code is older than this one's: it stops at the next farm run (or farm daemon stop)"
        )


def register(app: typer.Typer) -> None:
    app.add_typer(daemon_app, name="daemon")
