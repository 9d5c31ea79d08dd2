"""The farm daemon: one resident process per ``FARM_HOME`` that runs ``farm run`` and ``farm plan``
for clients.

A ``farm run`` in a fresh process spends about a second before its first job on this kind of
machine (imports, the pool's forkserver and workers) and most of a no-change re-run on imports.
The daemon pays that once: it keeps the CLI's modules imported, a local pool whose workers keep
their storage connections, signing key, render children and parsed documents across runs
(``farm.execution.local.ResidentPool``), and the last catalog it loaded, reused while none of
its files changed (``farm.catalog.reuse``). The same pattern as Bazel's server or Gradle's daemon.

It serves a command only when the outcome is the one the client would get by itself:

- the client runs the same code (``protocol.code_fingerprint``); a daemon that finds its code
  older than a client's refuses and stops itself;
- the client's environment is the daemon's, apart from what a shell changes between commands:
  its workers were started with that environment;
- it runs one command at a time; a client that finds it busy runs the command itself.

The command runs in the daemon's main thread with the client's working directory, environment and
arguments, its stdout and stderr sent to the client as they are written. A client that goes away
(Ctrl-C) interrupts its command as Ctrl-C interrupts ``farm run`` (jobs not started stay queued).
The socket lives in ``FARM_HOME`` (a folder only its owner may open) and the daemon also checks
that each client runs as its own user. It stops after ``idle_seconds`` without a command, when
its socket is removed (the home deleted), on ``farm daemon stop``, SIGTERM or SIGINT.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import queue
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from farm.daemon import protocol
from farm.fleet.interrupts import clear_stop_request, request_stop
from farm.launcher import SERVED_COMMANDS

_PEER_CREDENTIALS = struct.Struct("3i")  # pid, uid, gid (struct ucred)
_WAIT_WHILE_BUSY = 1.0  # a client waits this long for the command before it to end
_POLL = 0.5


class DaemonRunning(Exception):
    """Another daemon already serves this home."""


@dataclass
class _Command:
    connection: socket.socket
    request: dict[str, Any]


class Daemon:
    def __init__(self, home: Path, idle_seconds: float) -> None:
        self.home = home
        self.socket_path = home / protocol.SOCKET_NAME
        self.idle_seconds = idle_seconds
        self.fingerprint = protocol.code_fingerprint()
        self.environment = protocol.comparable_environment(os.environ)
        self.started = time.time()
        self.served = 0
        self._last_command = time.monotonic()
        self._commands: queue.Queue[_Command] = queue.Queue()
        self._busy = threading.Lock()
        self._stop = threading.Event()
        self._stop_reason = ""
        self._running = False  # a command is in _run_command
        self._socket_inode = 0
        self._heap = _Heap()

    # -- lifecycle -----------------------------------------------------------------------------

    def serve(self) -> None:
        """Warm up, listen, and run commands until stopped; the socket is removed on the way out."""
        if ask(self.socket_path, {"op": "status"}) is not None:
            raise DaemonRunning(f"a farm daemon already serves {self.home}")
        signal.signal(signal.SIGINT, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)
        _warm_up()
        self._heap.settle()
        listener = self._listen()
        threading.Thread(target=self._accept, args=(listener,), name="daemon-accept", daemon=True).start()
        _log(
            f"serving farm run and farm plan for {self.home} (pid {os.getpid()}, idle timeout {self.idle_seconds:g} s)"
        )
        try:
            self._main_loop()
        finally:
            listener.close()
            self._remove_socket()
            self._refuse_waiting_commands()
            _stop_workers()
            _log(f"stopped: {self._stop_reason or 'interrupted'}")

    def stop(self, reason: str) -> None:
        if not self._stop.is_set():
            self._stop_reason = reason
            self._stop.set()

    def _listen(self) -> socket.socket:
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()  # left by a daemon that died: nobody answered on it
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with contextlib.chdir(self.home):  # a short address, whatever the home's path length
            listener.bind(protocol.SOCKET_NAME)
            os.chmod(protocol.SOCKET_NAME, 0o600)
        listener.listen(16)
        self._socket_inode = os.stat(self.socket_path).st_ino
        return listener

    def _socket_is_ours(self) -> bool:
        try:
            return os.stat(self.socket_path).st_ino == self._socket_inode
        except OSError:
            return False

    def _remove_socket(self) -> None:
        if self._socket_is_ours():
            with contextlib.suppress(OSError):
                self.socket_path.unlink()

    def _main_loop(self) -> None:
        while not self._stop.is_set():
            try:
                command = self._commands.get(timeout=_POLL)
            except queue.Empty:
                self._stop_if_unwanted()
                continue
            try:
                self._run_command(command)
            finally:
                self._last_command = time.monotonic()
                self._busy.release()

    def _refuse_waiting_commands(self) -> None:
        """A command handed over as the daemon stopped: its client runs it itself."""
        while True:
            try:
                command = self._commands.get_nowait()
            except queue.Empty:
                return
            with contextlib.suppress(OSError):
                protocol.send_json(command.connection, protocol.REFUSED, {"reason": "stopping"})
            command.connection.close()

    def _stop_if_unwanted(self) -> None:
        if not self._socket_is_ours():
            self.stop(f"its socket {self.socket_path} is gone")
        elif self.idle_seconds and time.monotonic() - self._last_command >= self.idle_seconds:
            self.stop(f"no command in {self.idle_seconds:g} s")

    def _on_signal(self, signum: int, _frame: object) -> None:
        """SIGINT or SIGTERM: stop once the command running (if any) has stopped."""
        self.stop(f"signal {signal.Signals(signum).name}")
        if self._running:
            request_stop()

    # -- connections (the accepting thread) -----------------------------------------------------

    def _accept(self, listener: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return  # the listener was closed: the daemon is stopping
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        """Read one request and answer it; a command goes to the main thread with its connection."""
        handed_over = False
        try:
            connection.settimeout(10)
            if not _same_user(connection):
                return
            frame = protocol.receive_frame(connection)
            if frame is None or frame[0] != protocol.REQUEST:
                return
            request = json.loads(frame[1])
            operation = request.get("op")
            if operation == "status":
                protocol.send_json(connection, protocol.STATUS, self._status(request))
            elif operation == "stop":
                protocol.send_json(connection, protocol.STATUS, self._status(request))
                self.stop("farm daemon stop")
            elif operation == "command":
                handed_over = self._take_command(connection, request)
        except (OSError, ValueError, protocol.ProtocolError) as error:
            _log(f"a request failed: {type(error).__name__}: {error}")
        finally:
            if not handed_over:
                connection.close()

    def _take_command(self, connection: socket.socket, request: dict[str, Any]) -> bool:
        refusal = self._refusal(request)
        if refusal is None and not self._busy.acquire(timeout=_WAIT_WHILE_BUSY):
            refusal = "busy with another command"
        if refusal is not None:
            _log(f"refused {request.get('argv')}: {refusal}")
            protocol.send_json(connection, protocol.REFUSED, {"reason": refusal})
            return False
        if self._stop.is_set():
            self._busy.release()
            protocol.send_json(connection, protocol.REFUSED, {"reason": "stopping"})
            return False
        connection.settimeout(None)
        self._commands.put(_Command(connection, request))
        return True

    def _refusal(self, request: dict[str, Any]) -> str | None:
        if request.get("fingerprint") != self.fingerprint:
            self.stop("a client runs other farm code (installed or edited since the daemon started)")
            return "the daemon runs other farm code; it stops"
        argv = request.get("argv") or []
        if not argv or argv[0] not in SERVED_COMMANDS:
            return f"the daemon serves only {', '.join(sorted(SERVED_COMMANDS))}"
        different = protocol.first_difference(
            self.environment, protocol.comparable_environment(request.get("env") or {})
        )
        if different is not None:
            return f"the client's environment differs from the daemon's ({different})"
        return None

    def _status(self, request: dict[str, Any]) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "home": str(self.home),
            "started": self.started,
            "served": self.served,
            "idle_seconds": self.idle_seconds,
            "busy": self._busy.locked(),
            "same_code": request.get("fingerprint") == self.fingerprint,
            "rss_mib": _resident_mib(),
        }

    # -- running a command (the main thread) ----------------------------------------------------

    def _run_command(self, command: _Command) -> None:
        connection, request = command.connection, command.request
        started = time.monotonic()
        watcher = threading.Thread(target=self._watch_client, args=(connection,), daemon=True)
        self._running = True  # before the watcher starts: a client gone at once still interrupts
        clear_stop_request()
        try:
            protocol.send_frame(connection, protocol.ACCEPTED)
            watcher.start()
            try:
                code = self._in_client_context(connection, request)
            except Exception as error:  # noqa: BLE001 - the daemon's own failure, not the command's
                _log(f"could not run farm {' '.join(request['argv'])}:\n{traceback.format_exc()}")
                with contextlib.suppress(OSError):
                    protocol.send_frame(
                        connection,
                        protocol.STDERR,
                        f"Error: the farm daemon could not run the command ({type(error).__name__}: {error}); "
                        f"see {self.home / protocol.LOG_NAME}, or run it with FARM_DAEMON=off\n".encode(),
                    )
                code = 1
            self.served += 1
            _log(
                f"farm {' '.join(request['argv'])} in {request['cwd']}: exit {code}, {time.monotonic() - started:.2f} s"
            )
            with contextlib.suppress(OSError):
                protocol.send_frame(connection, protocol.EXIT, protocol.exit_payload(code))
        finally:
            self._running = False
            clear_stop_request()
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            connection.close()
            if watcher.is_alive():
                watcher.join()
            _close_database_connections()
            self._heap.settle()

    def _in_client_context(self, connection: socket.socket, request: dict[str, Any]) -> int:
        """Run the command as the client would: its directory, environment, arguments, streams."""
        tty = request.get("tty") or {}
        stdout = _client_stream(connection, protocol.STDOUT, bool(tty.get("stdout")))
        stderr = _client_stream(connection, protocol.STDERR, bool(tty.get("stderr")))
        environment = dict(request["env"])
        if request.get("columns"):
            environment["COLUMNS"] = str(request["columns"])
        with (
            _environment(environment),
            contextlib.chdir(request["cwd"]),
            _argv(["farm", *request["argv"]]),
            _root_logging_kept(),
            contextlib.redirect_stdout(stdout),
            contextlib.redirect_stderr(stderr),
        ):
            try:
                code = self._interruptible()
                if code != 0 and request["argv"][:1] == ["run"]:
                    _release_unfinished_runs()
                return code
            finally:
                for stream in (stdout, stderr):
                    with contextlib.suppress(OSError, ValueError):
                        stream.flush()

    def _interruptible(self) -> int:
        from farm.cli import _run_app

        try:
            _run_app()
        except SystemExit as done:
            return _exit_status(done.code)
        except KeyboardInterrupt:
            return 130
        except Exception:  # a bug: the client sees the traceback its own process would print
            traceback.print_exc()
            return 1
        finally:
            self._running = False
        return 0

    def _watch_client(self, connection: socket.socket) -> None:
        """Interrupt the command when its client goes away (the client sends nothing after its
        request, so the connection turns readable only when it closes)."""
        import select

        while True:
            try:
                readable, _, _ = select.select([connection], [], [], _POLL)
                if readable and not connection.recv(1, socket.MSG_PEEK):
                    break
            except (OSError, ValueError):
                return  # closed by _run_command: the command ended
        if self._running:
            _log("the client went away: its command is interrupted")
            request_stop()


def _release_unfinished_runs() -> None:
    """After a ``farm run`` that did not end well (Ctrl-C on its client, an error): the run it
    began is still ``running``, owned by the daemon, which lives on. Its own process would have
    ended and the run would read ``interrupted``; released, it does, and the next ``farm run``
    finishes it (``farm.fleet.recovery``)."""
    from farm.fleet.recovery import release_runs_of_this_process
    from farm.settings import load_settings
    from farm.store.context import missing_database_file, open_storage

    try:
        settings = load_settings()
        if missing_database_file(settings) is not None:
            return  # the command stopped before it made a farm: no run to release
        storage = open_storage(settings)
        try:
            for run_id in release_runs_of_this_process(storage):
                _log(f"run {run_id} did not finish: released, the next farm run finishes it")
        finally:
            storage.close()
    except Exception as error:  # noqa: BLE001 - the command has ended: the log says what failed
        _log(f"could not release the command's unfinished runs: {type(error).__name__}: {error}")


def _close_database_connections() -> None:
    """Checkpoint and close the command's SQLite connections, as its own process would at its exit
    (the last one to close checkpoints the write-ahead log and removes it: ``farm.store.db``).
    Done once the client has its exit status: the checkpoint is the daemon's housekeeping, which
    its commands' commits leave to it (``checkpoint_when_closed``)."""
    from farm.store.db import close_sqlite_engines

    try:
        close_sqlite_engines()
    except Exception as error:  # noqa: BLE001 - the command has ended: the log says what failed
        _log(f"could not close the command's database connections: {type(error).__name__}: {error}")


class _Heap:
    """What the daemon keeps between commands (its modules, the last catalog loaded: at 100,000
    targets several million objects) taken out of the cyclic collector's walks.

    Each full collection walks every tracked object, so a command that ran with a catalog kept
    walked all of it again whenever the collector's counts said so (at 2,000 targets 0.08-0.18 s
    a walk, in re-runs of 0.25-0.35 s; 0.03-0.04 s a re-run on average). After each command, the garbage that command
    left is collected and what survives it is frozen (``gc.freeze``): the collections of later
    commands walk only the objects those commands make. Frozen objects are still freed by
    reference counting (a replaced catalog holds no reference cycle: it is freed at once); a
    cycle among them that became garbage is freed at the next full collection, made once every
    ``FULL_EVERY`` changes of the kept catalog (everything unfrozen, collected, frozen again)."""

    FULL_EVERY = 16

    def __init__(self) -> None:
        self._changes_collected = 0

    def settle(self) -> None:
        from farm.catalog.reuse import kept_catalog_changes

        changes = kept_catalog_changes()
        if changes - self._changes_collected >= self.FULL_EVERY:
            gc.unfreeze()
            self._changes_collected = changes
        gc.collect()
        gc.freeze()


class _ClientOutput(io.RawIOBase):
    """One of the client's output streams: each write is a frame on the connection."""

    def __init__(self, connection: socket.socket, kind: bytes, tty: bool) -> None:
        self.connection, self.kind, self.tty, self.gone = connection, kind, tty, False

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.tty

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        if not self.gone:
            try:
                protocol.send_frame(self.connection, self.kind, chunk)
            except OSError:
                self.gone = True  # the client went away: the command is being interrupted
        return len(chunk)


def _client_stream(connection: socket.socket, kind: bytes, tty: bool) -> io.TextIOWrapper:
    raw = _ClientOutput(connection, kind, tty)
    return io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8", line_buffering=True, write_through=True)


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


@contextlib.contextmanager
def _environment(environment: dict[str, str]) -> Any:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(environment)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _argv(argv: list[str]) -> Any:
    saved, sys.argv = sys.argv, argv
    try:
        yield
    finally:
        sys.argv = saved


@contextlib.contextmanager
def _root_logging_kept() -> Any:
    """A command may point the root logger at its stderr (FARM_LOG_FORMAT=json); not past its end."""
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def _resident_mib() -> float | None:
    """This process's resident memory in MiB (Linux), None where unknown: the daemon keeps the
    last catalog it loaded, so its size is worth showing."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return round(int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20), 1)
    except (OSError, ValueError, IndexError):
        return None


def _same_user(connection: socket.socket) -> bool:
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEER_CREDENTIALS.size)
    _, uid, _ = _PEER_CREDENTIALS.unpack(credentials)
    return uid == os.getuid()


def _warm_up() -> None:
    """Import what ``farm run`` imports; for the local executor, start the pool's forkserver and
    workers, for Celery, import its client (the executor the settings choose by default)."""
    import importlib

    from farm.catalog.reuse import keep_loaded_catalogs
    from farm.commands.run import keep_run_storage
    from farm.evidence.keys import load_configured_signer
    from farm.execution.celery import CeleryQueue
    from farm.execution.executors import uses_celery
    from farm.execution.local import keep_local_pool
    from farm.settings import load_settings
    from farm.store.db import checkpoint_when_closed

    checkpoint_when_closed()  # after each command, once its client has the exit status

    for module in (
        "farm.cli",
        "farm.commands.run",
        "farm.commands.plan",
        "farm.fleet.planner",
        "farm.fleet.service",
        "rich.progress",
    ):
        importlib.import_module(module)
    settings = load_settings()
    keep_loaded_catalogs()
    keep_run_storage()
    if uses_celery(settings):
        CeleryQueue(settings)  # imports Celery and checks the broker setting; connects on first send
        return
    from multiprocessing import forkserver

    from farm.execution.warmup import forkserver_context

    forkserver_context()
    forkserver.ensure_running()
    load_configured_signer(settings)  # as farm run would before its first job
    keep_local_pool().warm(settings)


def _stop_workers() -> None:
    from farm.execution.local import keep_local_pool
    from farm.execution.warmup import stop_forkserver

    keep_local_pool().close()
    stop_forkserver()


def _log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    sys.__stderr__.write(f"{stamp} farm daemon: {message}\n")
    sys.__stderr__.flush()


def ask(socket_path: Path, request: dict[str, Any], timeout: float = 10.0) -> dict[str, Any] | None:
    """What the daemon at ``socket_path`` answers to a status or stop request; None when no
    daemon answers there."""
    try:
        connection = protocol.connect(socket_path, timeout=timeout)
    except OSError:
        return None
    try:
        protocol.send_json(
            connection, protocol.REQUEST, {**request, "fingerprint": protocol.code_fingerprint()}
        )
        frame = protocol.receive_frame(connection)
    except (OSError, protocol.ProtocolError):
        return None
    finally:
        connection.close()
    if frame is None or frame[0] != protocol.STATUS:
        return None
    return json.loads(frame[1])
