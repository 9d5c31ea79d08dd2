"""The farm daemon's wire format, and what both ends compute alike. Standard library only: the
client imports this before anything else of the farm, so ``farm run`` through a daemon starts in
about the time of a bare interpreter. Its connection is a ``_socket.socket``, the fingerprint's
hash the interpreter's own sha256, and the client writes its request's JSON with ``_json``'s
string encoder and reads its exit code without a JSON parser: the ``socket`` module (its enums and
selectors), ``hashlib`` (OpenSSL) and ``json`` (with ``re``) took more than 20 ms of the client's
start on a 2-core machine, a seventh of a 2,000-target no-change run through the daemon
(docs/performance.md).

A connection carries frames: one type byte, a 4-byte big-endian length, the payload. The client
sends one ``REQUEST`` (JSON); the daemon answers ``ACCEPTED`` then ``STDOUT``/``STDERR`` bytes and
one ``EXIT`` (JSON ``{"code": N}``), or one ``REFUSED`` (JSON ``{"reason": …}``) and the client
runs the command itself, or one ``STATUS`` (JSON) for a status or stop request.
"""

from __future__ import annotations

import _socket
import contextlib
import os
import site
import struct
import sys
from collections.abc import Mapping

TYPE_CHECKING = False  # typing's import would be a cost of every client
if TYPE_CHECKING:
    from hashlib import _Hash

try:
    from _json import encode_basestring_ascii as _json_string
except ImportError:  # pragma: no cover - an interpreter without the accelerator: json's own
    from json.encoder import encode_basestring_ascii as _json_string
try:
    from _sha256 import sha256  # CPython 3.11
except ImportError:  # pragma: no cover - another interpreter: hashlib's, at its import cost
    from hashlib import sha256

SOCKET_NAME = "daemon.sock"
LOG_NAME = "daemon.log"

REQUEST = b"Q"
ACCEPTED = b"A"
REFUSED = b"R"
STDOUT = b"O"
STDERR = b"E"
EXIT = b"X"
STATUS = b"S"

_HEADER = struct.Struct("!cI")
MAX_FRAME = 64 << 20

# Variables a shell changes from one command to the next; the rest of the environment must be the
# daemon's own for it to run a command (its workers were started with that environment).
VOLATILE_VARIABLES = frozenset({"_", "OLDPWD", "PWD", "SHLVL", "COLUMNS", "LINES"})


class ProtocolError(Exception):
    """The other end sent something that is not a frame of this protocol."""


def farm_home(environment: Mapping[str, str], cwd: str) -> str:
    """``FARM_HOME`` (default ``.farm``) as the settings resolve it, without loading them (nor
    pathlib: the client imports only what it needs)."""
    return os.path.join(cwd, os.path.expanduser(environment.get("FARM_HOME") or ".farm"))


def comparable_environment(environment: Mapping[str, str]) -> dict[str, str]:
    """The environment without the variables a shell changes between commands."""
    return {name: value for name, value in environment.items() if name not in VOLATILE_VARIABLES}


def first_difference(mine: Mapping[str, str], theirs: Mapping[str, str]) -> str | None:
    """The name of the first variable set differently in the two environments (None when equal)."""
    for name in sorted(set(mine) | set(theirs)):
        if mine.get(name) != theirs.get(name):
            return name
    return None


def code_fingerprint() -> str:
    """What identifies the code a process runs: the interpreter, every file of the ``farm``
    package (path, size, modification time) and the site-packages folders (installing or removing
    a package changes them). A daemon whose fingerprint differs from its
    client's runs older code and must not serve it.

    The interpreter is its file and its environment's prefix, not the name it was started by: a
    venv's ``python`` and ``python3`` are one interpreter (``python -m farm daemon start``, then
    the ``farm`` script, whose first line names ``python3``, made the daemon stop)."""
    digest = sha256()
    interpreter = os.path.realpath(sys.executable)
    digest.update(f"{interpreter}\0{sys.prefix}\0{sys.version}\0".encode())
    _add_files(digest, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    for folder in site.getsitepackages():
        with contextlib.suppress(OSError):
            digest.update(f"{folder}\0{os.stat(folder).st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _add_files(digest: _Hash, folder: str) -> None:
    """Each file under ``folder`` (its path, size and modification time), bytecode caches left
    out, in name order. ``os.scandir`` rather than ``os.walk``: half the client's CPU for it."""
    for entry in sorted(os.scandir(folder), key=_entry_name):
        if entry.is_dir(follow_symlinks=False):
            if entry.name != "__pycache__":
                _add_files(digest, entry.path)
        else:
            stat = entry.stat()
            digest.update(f"{entry.path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def send_frame(connection: _socket.socket, kind: bytes, payload: bytes = b"") -> None:
    connection.sendall(_HEADER.pack(kind, len(payload)) + payload)


def send_json(connection: _socket.socket, kind: bytes, value: object) -> None:
    import json  # the daemon's side (the client sends ``send_request``)

    send_frame(connection, kind, json.dumps(value).encode())


def send_request(connection: _socket.socket, request: Mapping[str, object]) -> None:
    """The client's ``REQUEST``: ``request`` as JSON (strings, numbers, booleans, None, lists and
    string-keyed mappings of them), as ``json.dumps`` writes it, without importing ``json``."""
    send_frame(connection, REQUEST, encode_json(request).encode("ascii"))


def encode_json(value: object) -> str:
    """``json.dumps(value)`` for the values a request holds; ``TypeError`` for any other."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, Mapping):
        items = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"a request's keys are strings, not {type(key).__name__}")
            items.append(f"{_json_string(key)}: {encode_json(item)}")
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(encode_json(item) for item in value) + "]"
    raise TypeError(f"a request holds no {type(value).__name__}")


_EXIT_PREFIX, _EXIT_SUFFIX = b'{"code": ', b"}"


def exit_payload(code: int) -> bytes:
    """The ``EXIT`` frame's payload: ``{"code": N}``."""
    return _EXIT_PREFIX + str(int(code)).encode("ascii") + _EXIT_SUFFIX


def exit_code(payload: bytes) -> int:
    """The code an ``EXIT`` payload (``exit_payload``) carries; ``ProtocolError`` for anything else."""
    if payload.startswith(_EXIT_PREFIX) and payload.endswith(_EXIT_SUFFIX):
        digits = payload[len(_EXIT_PREFIX) : -len(_EXIT_SUFFIX)]
        if digits.removeprefix(b"-").isdigit():
            return int(digits)
    raise ProtocolError(f"an exit frame holds {payload[:40]!r}, not an exit code")


def receive_frame(connection: _socket.socket) -> tuple[bytes, bytes] | None:
    """The next frame, or None when the other end closed the connection between frames."""
    header = _read_exactly(connection, _HEADER.size, at_frame_start=True)
    if header is None:
        return None
    kind, length = _HEADER.unpack(header)
    if length > MAX_FRAME:
        raise ProtocolError(f"a frame of {length} bytes is larger than {MAX_FRAME}")
    payload = _read_exactly(connection, length, at_frame_start=False)
    return kind, payload or b""


def _read_exactly(connection: _socket.socket, size: int, *, at_frame_start: bool) -> bytes | None:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = connection.recv(min(remaining, 1 << 20))
        if not chunk:
            if at_frame_start and remaining == size:
                return None
            raise ProtocolError("the connection closed in the middle of a frame")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def connect(socket_path: str | os.PathLike[str], timeout: float | None = None) -> _socket.socket:
    """A connection to the daemon listening at ``socket_path``; raises OSError when none does. The
    caller closes it (a ``_socket.socket`` is no context manager).

    A socket address holds at most about 107 bytes, so a longer path is reached from its folder."""
    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    connection.settimeout(timeout)
    try:
        path = os.fspath(socket_path)
        if len(os.fsencode(path)) < 100:
            connection.connect(path)
        else:
            with contextlib.chdir(os.path.dirname(path)):
                connection.connect(os.path.basename(path))
    except BaseException:
        connection.close()
        raise
    return connection
