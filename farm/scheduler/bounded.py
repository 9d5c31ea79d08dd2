"""Bounded renders: a job's renders run in a child process with a time and a memory bound.

The worker forks one child per job (a fork costs about a millisecond, a batch holds up to 50
targets), the child renders the batch's requests one after the other and sends each outcome back
over a pipe. The worker waits at most ``seconds`` for each outcome: a render past it is killed and
its target fails with ``render.timeout``. The child's address space is bounded to what it holds
at the fork plus ``memory_bytes``: a render that exhausts it fails with ``render.memory``. A child
that dies any other way fails its target with ``render.crashed``. In each case a new child renders
the rest of the batch, so the siblings of a hostile target still render.

Where ``os.fork`` does not exist the renders run in the worker itself, unbounded.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import resource
import select
import signal
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from farm.core.errors import bound_message

RENDER_TIMEOUT = "render.timeout"
RENDER_MEMORY = "render.memory"
RENDER_CRASHED = "render.crashed"
_MEMORY_EXIT = 75  # the child's status after a MemoryError
_HEADER = struct.Struct("!Q")
_READ = 1 << 20

Item = TypeVar("Item")
Outcome = TypeVar("Outcome")


@dataclass(frozen=True)
class RenderBounds:
    """What one render may take: wall-clock seconds and bytes of address space."""

    seconds: float
    memory_bytes: int


@dataclass(frozen=True)
class BoundExceeded:
    """The outcome of a render that the bounds stopped (or whose process died)."""

    code: str
    message: str


def run_bounded(
    items: Sequence[Item],
    work: Callable[[Item], Outcome],
    bounds: RenderBounds,
) -> list[Outcome | BoundExceeded]:
    """``work(item)`` for every item, each within ``bounds``, in order. ``work`` must not raise
    (it turns its errors into outcomes) and its outcomes must pickle."""
    if not hasattr(os, "fork"):
        return [work(item) for item in items]
    outcomes: list[Outcome | BoundExceeded | None] = [None] * len(items)
    start = 0
    while start < len(items):
        start = _one_child(items, work, bounds, outcomes, start)
    return outcomes  # type: ignore[return-value]  # every slot is filled


def _address_space() -> int | None:
    """Bytes of address space this process holds now (Linux), None where unknown."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return None


def _child(
    items: Sequence[Item], work: Callable[[Item], Outcome], start: int, pipe: int, limit: int | None
) -> None:
    """The render child: never returns, never touches what the worker holds (database, sockets)."""
    status = 0
    try:
        gc.freeze()  # the worker's objects are never collected (or finalized) here
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if limit is not None:
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            soft = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        for index in range(start, len(items)):
            frame = pickle.dumps((index, work(items[index])), protocol=pickle.HIGHEST_PROTOCOL)
            _write_all(pipe, _HEADER.pack(len(frame)) + frame)
            del frame
    except MemoryError:
        status = _MEMORY_EXIT
    except BaseException:  # noqa: BLE001 - the worker names the target that died
        status = 70
    finally:
        os._exit(status)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _one_child(
    items: Sequence[Item],
    work: Callable[[Item], Outcome],
    bounds: RenderBounds,
    outcomes: list,
    start: int,
) -> int:
    """Fork a child rendering ``items[start:]``; fill ``outcomes`` with what it sends and return
    where the next child starts (``len(items)`` when this one finished the batch)."""
    current = _address_space()
    limit = current + bounds.memory_bytes if current is not None else None
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _child(items, work, start, write_end, limit)
    os.close(write_end)
    try:
        return _collect(read_end, pid, len(items), bounds, outcomes, start)
    finally:
        os.close(read_end)


def _collect(fd: int, pid: int, count: int, bounds: RenderBounds, outcomes: list, index: int) -> int:
    buffer = bytearray()
    deadline = time.monotonic() + bounds.seconds
    while True:
        remaining = deadline - time.monotonic()
        ready = select.select([fd], [], [], max(remaining, 0))[0] if remaining > 0 else []
        if not ready:
            _kill(pid)
            if index < count:
                outcomes[index] = BoundExceeded(
                    RENDER_TIMEOUT, f"the render took longer than {bounds.seconds:g} s and was stopped"
                )
            return min(index + 1, count)
        chunk = os.read(fd, _READ)
        if not chunk:
            status = _reap(pid)
            if index < count:
                outcomes[index] = _death(status, bounds)
            return min(index + 1, count)
        buffer += chunk
        while len(buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(buffer)
            if len(buffer) < _HEADER.size + size:
                break
            sent, outcome = pickle.loads(bytes(buffer[_HEADER.size : _HEADER.size + size]))
            del buffer[: _HEADER.size + size]
            outcomes[sent] = outcome
            index = sent + 1
            deadline = time.monotonic() + bounds.seconds


def _death(status: int, bounds: RenderBounds) -> BoundExceeded:
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == _MEMORY_EXIT:
        mib = bounds.memory_bytes // (1024 * 1024)
        return BoundExceeded(RENDER_MEMORY, f"the render needed more than {mib} MiB and was stopped")
    if os.WIFSIGNALED(status):
        how = f"was killed by signal {signal.Signals(os.WTERMSIG(status)).name}"
    else:
        how = f"exited with status {os.WEXITSTATUS(status)}"
    return BoundExceeded(RENDER_CRASHED, bound_message(f"the render process {how}"))


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _reap(pid)


def _reap(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return status
