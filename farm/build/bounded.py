"""Bounded renders: every render runs in a render child process, bounded in time and memory.

Each worker process (a pool process of the local executor, a Celery pool process) forks one
render child the first time it renders and keeps it: the child is sent a batch's requests at once,
over a pipe, renders them one at a time and sends each outcome back as it is done, so the core's
imports and caches stay warm across jobs. One message per batch, not per request: the documents
the batch's requests share (its application, its values) are pickled and sent once. The worker
waits at most ``seconds`` for each outcome: a render past it is killed with its child and its
target fails with ``render.timeout``, and the requests after it go to a new child. The child's address space is bounded to what
it held when it started plus ``memory_bytes``: a render that exhausts it fails with
``render.memory``. A child that dies any other way fails its target with ``render.crashed``. In
each case the next render starts a new child, so the siblings of a hostile target still render.

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
from typing import Any, TypeVar

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
    (it turns its errors into outcomes); items and outcomes must pickle."""
    if not hasattr(os, "fork"):
        return [work(item) for item in items]
    return _child_for(work, bounds).run(items)


_children: dict[tuple[Any, RenderBounds], _RenderChild] = {}


def _child_for(work: Callable[[Any], Any], bounds: RenderBounds) -> _RenderChild:
    key = (work, bounds)
    child = _children.get(key)
    if child is None or child.owner != os.getpid():  # a forked worker starts its own
        child = _children[key] = _RenderChild(work, bounds)
    return child


def stop_render_children() -> None:
    """Stop this process's render children (the next render starts a fresh one, forked from
    this process as it is then)."""
    for child in _children.values():
        if child.owner == os.getpid():
            child.stop()
    _children.clear()


def _address_space() -> int | None:
    """Bytes of address space this process holds now (Linux), None where unknown."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return None


class _RenderChild:
    """One render child of this worker process, started on first use and after each death."""

    def __init__(self, work: Callable[[Any], Any], bounds: RenderBounds) -> None:
        self.work, self.bounds, self.owner = work, bounds, os.getpid()
        self.pid: int | None = None
        self.to_child = self.from_child = -1
        self.outcomes = _Frames(-1)

    def run(self, items: Sequence[Any]) -> list[Any]:
        """The outcome of each item, in order. The child renders in order, so the item whose
        outcome is awaited when it dies or overruns is the one that killed it; the items after
        it are sent to a new child."""
        outcomes: list[Any] = []
        while len(outcomes) < len(items):
            if self.pid is None:
                self._start()
            deadline = time.monotonic() + self.bounds.seconds
            try:
                _send(self.to_child, list(items[len(outcomes) :]))
                while len(outcomes) < len(items):
                    outcomes.append(self.outcomes.receive(deadline))
                    deadline = time.monotonic() + self.bounds.seconds
            except (BrokenPipeError, EOFError):
                outcomes.append(self._died())
            except TimeoutError:
                self.stop()
                message = f"the render took longer than {self.bounds.seconds:g} s and was stopped"
                outcomes.append(BoundExceeded(RENDER_TIMEOUT, message))
        return outcomes

    def _start(self) -> None:
        requests_read, requests_write = os.pipe()
        outcomes_read, outcomes_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(requests_write)
            os.close(outcomes_read)
            _serve(self.work, requests_read, outcomes_write, self.bounds.memory_bytes)
        os.close(requests_read)
        os.close(outcomes_write)
        self.pid, self.to_child, self.from_child = pid, requests_write, outcomes_read
        self.outcomes = _Frames(outcomes_read)

    def _died(self) -> BoundExceeded:
        pid = self.pid
        self._close()
        assert pid is not None
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == _MEMORY_EXIT:
            mib = self.bounds.memory_bytes // (1024 * 1024)
            return BoundExceeded(RENDER_MEMORY, f"the render needed more than {mib} MiB and was stopped")
        if os.WIFSIGNALED(status):
            how = f"was killed by signal {signal.Signals(os.WTERMSIG(status)).name}"
        else:
            how = f"exited with status {os.WEXITSTATUS(status)}"
        return BoundExceeded(RENDER_CRASHED, bound_message(f"the render process {how}"))

    def stop(self) -> None:
        pid = self.pid
        self._close()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)

    def _close(self) -> None:
        for fd in (self.to_child, self.from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pid, self.to_child, self.from_child = None, -1, -1


def _serve(work: Callable[[Any], Any], requests: int, outcomes: int, memory_bytes: int) -> None:
    """The render child's loop: never returns, never touches what the worker holds (database
    connections, sockets); it ends when the worker closes the pipe or a render exhausts memory."""
    status = 0
    try:
        gc.freeze()  # the worker's objects are never collected (or finalized) here
        for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGUSR1", "SIGQUIT"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        current = _address_space()
        if current is not None:
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            soft = current + memory_bytes
            resource.setrlimit(
                resource.RLIMIT_AS, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard)
            )
        while True:
            try:
                items = _receive(requests)
            except EOFError:
                break
            items.reverse()
            while items:  # each request is dropped once rendered
                _send(outcomes, work(items.pop()))
    except MemoryError:
        status = _MEMORY_EXIT
    except BaseException:  # noqa: BLE001 - the worker names the target that died
        status = 70
    finally:
        os._exit(status)


def _send(fd: int, value: Any) -> None:
    frame = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(frame)) + frame)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int) -> Any:
    """One value from ``fd`` (the render child's side: it waits as long as it takes); EOFError
    when the other end closed."""
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size))
    return pickle.loads(_read_exactly(fd, size))


class _Frames:
    """The values a render child sends, read as many at a time as the pipe holds (one read
    and no wait for the outcomes that arrived while the worker took the previous one)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()

    def receive(self, deadline: float) -> Any:
        """The next value; EOFError when the child closed its end, TimeoutError past ``deadline``."""
        buffer = self.buffer
        while True:
            if len(buffer) >= _HEADER.size:
                end = _HEADER.size + _HEADER.unpack_from(buffer)[0]
                if len(buffer) >= end:
                    value = pickle.loads(buffer[_HEADER.size : end])
                    del buffer[:end]
                    return value
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.fd], [], [], remaining)[0]:
                raise TimeoutError
            chunk = os.read(self.fd, _READ)
            if not chunk:
                raise EOFError
            buffer += chunk


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, missing = [], size
    while missing:
        chunk = os.read(fd, min(missing, _READ))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)
