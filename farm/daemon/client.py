"""The client side of the farm daemon: hand ``farm run`` or ``farm plan`` to the daemon of this ``FARM_HOME`` when
one is running the same code with the same environment, and relay its output and exit status.

Standard library only (see ``farm/daemon/protocol.py``). Whenever the daemon cannot serve the
command (none runs, it is busy with another command, its code or environment differ, it went away
before accepting), ``run_in_daemon`` returns None and the caller runs the command itself, so the
daemon only ever makes a command faster, never different.
"""

from __future__ import annotations

import _socket
import contextlib
import io
import os
import sys
from collections.abc import Sequence

from farm.daemon import protocol

# The daemon accepts or refuses within about a second (it waits that long for a busy command to
# end); a daemon that says nothing for this long is wedged, and the command runs here.
FIRST_ANSWER_SECONDS = 60.0


def serves(arguments: Sequence[str]) -> bool:
    """Whether ``farm ARGUMENTS`` (a command the launcher hands to daemons,
    ``farm.launcher.SERVED_COMMANDS``) may be handed to one: not asking for help, and
    ``FARM_DAEMON`` not ``off``."""
    return os.environ.get("FARM_DAEMON") != "off" and bool(arguments) and "--help" not in arguments


def run_in_daemon(arguments: Sequence[str]) -> int | None:
    """Run ``farm ARGUMENTS`` in this home's daemon: its exit status, or None when no daemon
    accepted it (nothing ran). Output arrives on this process's stdout and stderr as it is made."""
    cwd = os.getcwd()
    socket_path = os.path.join(protocol.farm_home(os.environ, cwd), protocol.SOCKET_NAME)
    if not os.path.exists(socket_path):
        return None
    try:
        connection = protocol.connect(socket_path, timeout=FIRST_ANSWER_SECONDS)
    except OSError:
        return None  # a socket left by a daemon that died: the command runs here
    try:
        try:
            protocol.send_request(connection, _request(arguments, cwd))
            first = protocol.receive_frame(connection)
        except (OSError, protocol.ProtocolError):
            return None
        if first is None or first[0] != protocol.ACCEPTED:
            return None
        connection.settimeout(None)  # a command takes as long as it takes
        return _relay(connection, socket_path)
    finally:
        connection.close()


def _request(arguments: Sequence[str], cwd: str) -> dict[str, object]:
    return {
        "op": "command",
        "argv": list(arguments),
        "cwd": cwd,
        "env": dict(os.environ),
        "fingerprint": protocol.code_fingerprint(),
        "tty": {"stdout": _isatty(sys.stdout), "stderr": _isatty(sys.stderr)},
        "columns": _columns(),
    }


def _columns() -> int | None:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return None


def _isatty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _relay(connection: _socket.socket, socket_path: str) -> int:
    """Copy the daemon's output frames to this process's streams until its exit frame."""
    outputs = {protocol.STDOUT: sys.stdout, protocol.STDERR: sys.stderr}
    try:
        while True:
            frame = protocol.receive_frame(connection)
            if frame is None:
                break
            kind, payload = frame
            if kind == protocol.EXIT:
                _flush()
                return protocol.exit_code(payload)
            stream = outputs.get(kind)
            if stream is not None and not _write(stream, payload):
                del outputs[kind]  # its reader went away (farm run | head): the rest is dropped
    except KeyboardInterrupt:
        return 130  # closing the connection tells the daemon to stop the command
    except (OSError, protocol.ProtocolError):
        pass
    _flush()
    log = os.path.join(os.path.dirname(socket_path), protocol.LOG_NAME)
    sys.stderr.write(
        f"Error: the farm daemon went away before the command ended; see {log}, "
        "then check with farm runs (or run the command with FARM_DAEMON=off)\n"
    )
    return 1


def _write(stream: io.TextIOWrapper, payload: bytes) -> bool:
    """Write to one of this process's streams; False once its reader has gone away, with the
    stream pointed at /dev/null so the interpreter's last flush does not complain."""
    try:
        stream.flush()
        stream.buffer.write(payload)
        stream.buffer.flush()
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        return False
    return True


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError):
            stream.flush()
