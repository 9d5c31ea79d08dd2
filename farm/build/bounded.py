"""Bounded renders: every render runs in a render child process, bounded in time and memory.

Each worker process (a pool process of the local executor, a Celery pool process) forks one
render child the first time it renders and keeps it: the child is sent a batch's requests at once,
over a pipe, renders them one at a time and writes each outcome to a second pipe as it is done,
so the core's imports and caches stay warm across jobs. One message per batch, not per request:
the documents the batch's requests share (its application, its values) are pickled and sent once.

The worker is woken once per batch, not once per outcome: it sleeps on a third pipe, which the
child writes a byte to when the batch is done (or when the outcome pipe is full and must be read),
and whose end of file says the child died. Woken for every outcome, the worker took the child's
core between two renders (on a machine whose every core is busy, the scheduler runs a woken
process at once) and the child's next render started on caches the worker had cooled: the render
children of the farm daemon spent 20-40 % more CPU on the same renders than the core in one
process (docs/performance.md).

The child stamps, in a word of memory it shares with the worker, the index of the request it is
rendering and when it began. The worker gives each render at most ``seconds`` from that stamp: a
render past it is killed with its child and its target fails with ``render.timeout``, and the
requests after it go to a new child. The child's address space is bounded to what it held when it
started plus ``memory_bytes``: a render that exhausts it fails with ``render.memory``. A child that
dies any other way fails its target with ``render.crashed``. In each case the next render starts a
new child, so the siblings of a hostile target still render; the outcomes the child wrote before
it died or was stopped are kept.

Where ``os.fork`` does not exist the renders run in the worker itself, unbounded.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import mmap
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
_PIPE_BYTES = 1 << 20
_WAKE_BYTES = 4096

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
    return start_bounded(items, work, bounds).outcomes()


def start_bounded(items: Sequence[Item], work: Callable[[Item], Outcome], bounds: RenderBounds) -> InFlight:
    """``run_bounded``, begun: the items are sent to this process's render child, which renders
    them while the caller does other work; ``outcomes()`` collects them (a render that overran
    meanwhile is stopped then). One batch at a time per child: collect or ``abandon`` it before
    starting the next."""
    if not hasattr(os, "fork"):
        return InFlight(None, list(items), [work(item) for item in items])
    child = _child_for(work, bounds)
    return child.begin(items)


class InFlight:
    """A batch sent to a render child (or, where ``os.fork`` does not exist, already rendered)."""

    def __init__(self, child: _RenderChild | None, items: list[Any], outcomes: list[Any]) -> None:
        self.child, self.items, self.collected = child, items, outcomes
        self.sent = False  # the items without an outcome are with the child

    def outcomes(self) -> list[Any]:
        """The outcome of each item, in order (waits for the child)."""
        if self.child is not None:
            self.child.finish(self)
            self.child = None
        return self.collected

    def abandon(self) -> None:
        """Stop the child mid-batch (its outcomes must never be read as the next batch's)."""
        if self.child is not None:
            self.child.stop()
            self.child = None


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
        self.to_child = self.from_child = self.wake = -1
        self.stamp = _Stamp()
        self.sent_at = 0  # when the batch being rendered was sent (the monotonic clock's ns)
        self.outcomes = _Frames(-1)

    def begin(self, items: Sequence[Any]) -> InFlight:
        """Send ``items`` to the child (a new one if needed); ``finish`` collects their outcomes."""
        batch = InFlight(self, list(items), [])
        try:
            self._send_rest(batch)
        except BaseException:
            self.stop()
            raise
        return batch

    def finish(self, batch: InFlight) -> None:
        """Every outcome of ``batch``, in order. The child renders in order, so the item whose
        outcome is missing when it dies or overruns is the one that killed it; the items after
        it are sent to a new child."""
        try:
            while True:
                if batch.sent:
                    self._await_rest(batch)
                if len(batch.collected) == len(batch.items):
                    return
                self._send_rest(batch)
        except BaseException:
            # stopped from outside (an interrupt, an error of this process): the child may be
            # mid-batch, and its outcomes must never be read as the next batch's
            self.stop()
            raise

    def _send_rest(self, batch: InFlight) -> None:
        """Send the items without an outcome yet to the child (a new one if needed)."""
        if self.pid is None:
            self._start()
        batch.sent = False
        try:
            self.sent_at = time.monotonic_ns()
            self.stamp.write(0, self.sent_at)  # the first render's time runs from now
            _send(self.to_child, batch.items[len(batch.collected) :])
        except BrokenPipeError:
            batch.collected.append(self._died())
            return
        batch.sent = True

    def _await_rest(self, batch: InFlight) -> None:
        """Collect outcomes until all are in, the child dies or a render overruns."""
        sent = len(batch.collected)
        outcomes = batch.collected
        try:
            self._await(outcomes, len(batch.items))
        except (BrokenPipeError, EOFError):
            outcomes.append(self._died())
        except TimeoutError as overrun:
            (index,) = overrun.args
            self._kill()
            self.outcomes.drain(outcomes)  # what the child wrote before it was stopped
            self._close()
            if len(outcomes) == sent + index:  # else it finished that one in time
                message = f"the render took longer than {self.bounds.seconds:g} s and was stopped"
                outcomes.append(BoundExceeded(RENDER_TIMEOUT, message))
        batch.sent = False

    def _await(self, outcomes: list[Any], expected: int) -> None:
        """Wait for the child's outcomes until ``expected`` are in ``outcomes``. EOFError when it
        died; TimeoutError(index in the batch) when a render has been running past the bound."""
        limit = int(self.bounds.seconds * 1e9)
        self.outcomes.drain(outcomes)  # the batch may have ended while the caller did other work
        while len(outcomes) < expected:
            index, began = self.stamp.read()
            began = max(began, self.sent_at)  # no render of this batch began before it was sent
            remaining = began + limit - time.monotonic_ns()
            if remaining <= 0:
                raise TimeoutError(index)
            if select.select([self.wake], [], [], remaining / 1e9)[0]:
                woken = os.read(self.wake, _WAKE_BYTES)
                self.outcomes.drain(outcomes)
                if len(outcomes) >= expected:
                    return
                if not woken:
                    raise EOFError

    def _start(self) -> None:
        requests_read, requests_write = os.pipe()
        outcomes_read, outcomes_write = os.pipe()
        wake_read, wake_write = os.pipe()
        for descriptor in (requests_write, outcomes_write):
            _widen(descriptor)
        self.stamp = _Stamp()
        pid = os.fork()
        if pid == 0:
            os.close(requests_write)
            os.close(outcomes_read)
            os.close(wake_read)
            _serve(self.work, requests_read, outcomes_write, wake_write, self.stamp, self.bounds.memory_bytes)
        os.close(requests_read)
        os.close(outcomes_write)
        os.close(wake_write)
        os.set_blocking(outcomes_read, False)
        self.pid, self.to_child, self.from_child, self.wake = pid, requests_write, outcomes_read, wake_read
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
        self._kill()
        self._close()

    def _kill(self) -> None:
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)

    def _close(self) -> None:
        for fd in (self.to_child, self.from_child, self.wake):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pid, self.to_child, self.from_child, self.wake = None, -1, -1, -1


def _widen(descriptor: int) -> None:
    """A pipe that holds a batch's requests or outcomes (1 MiB where Linux allows it, 64 KiB
    otherwise): fewer wake-ups of either side for a large batch."""
    resize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if resize is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(descriptor, resize, _PIPE_BYTES)


class _Stamp:
    """What the render child is doing, in memory it shares with its worker: the index (in the
    batch) of the request it renders and the monotonic clock's nanoseconds when it began."""

    _LAYOUT = struct.Struct("=qq")

    def __init__(self) -> None:
        self.memory = mmap.mmap(-1, self._LAYOUT.size)  # shared with the child forked after

    def write(self, index: int, began: int) -> None:
        self._LAYOUT.pack_into(self.memory, 0, index, began)

    def read(self) -> tuple[int, int]:
        """The stamp, read until two reads agree (the child may be writing it)."""
        value = self._LAYOUT.unpack_from(self.memory)
        while (again := self._LAYOUT.unpack_from(self.memory)) != value:
            value = again
        return value


def _serve(
    work: Callable[[Any], Any], requests: int, outcomes: int, wake: int, stamp: _Stamp, memory_bytes: int
) -> None:
    """The render child's loop: never returns, never touches what the worker holds (database
    connections, sockets); it ends when the worker closes the pipe or a render exhausts memory."""
    status = 0
    try:
        gc.freeze()  # the worker's objects are never collected (or finalized) here
        for name in ("SIGTERM", "SIGHUP", "SIGUSR1", "SIGQUIT"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        # Ctrl-C reaches the whole process group: the worker decides (it stops a child mid-batch
        # when interrupted, and an idle child ends with the worker's pipe). Killed by it, an idle
        # child failed the next batch its worker began with render.crashed.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        current = _address_space()
        if current is not None:
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            soft = current + memory_bytes
            resource.setrlimit(
                resource.RLIMIT_AS, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard)
            )
        os.set_blocking(outcomes, False)
        while True:
            try:
                items = _receive(requests)
            except EOFError:
                break
            items.reverse()
            index = 0
            while items:  # each request is dropped once rendered
                stamp.write(index, time.monotonic_ns())
                _put(outcomes, wake, work(items.pop()))
                index += 1
            os.write(wake, b"\0")  # the batch is done: the only wake-up of the worker
    except MemoryError:
        status = _MEMORY_EXIT
    except BaseException:  # noqa: BLE001 - the worker names the target that died
        status = 70
    finally:
        os._exit(status)


def _put(outcomes: int, wake: int, value: Any) -> None:
    """One outcome written to the (non-blocking) outcome pipe; when it is full, the worker is
    woken to read it, and the rest is written as it makes room."""
    view = _frame(value)
    while view:
        with contextlib.suppress(BlockingIOError):
            view = view[os.write(outcomes, view) :]
        if view:
            os.write(wake, b"\1")
            select.select([], [outcomes], [])


def _frame(value: Any) -> memoryview:
    frame = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return memoryview(_HEADER.pack(len(frame)) + frame)


def _send(fd: int, value: Any) -> None:
    view = _frame(value)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int) -> Any:
    """One value from ``fd`` (the render child's side: it waits as long as it takes); EOFError
    when the other end closed."""
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size))
    return pickle.loads(_read_exactly(fd, size))


class _Frames:
    """The outcomes a render child wrote, read from its (non-blocking) pipe as they are there."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.chunk: bytearray | None = None  # read into, not allocated for every read

    def drain(self, into: list[Any]) -> None:
        """Every whole outcome in the pipe now, appended to ``into`` in order (a partial one stays
        in the buffer until the rest comes)."""
        if self.chunk is None:
            self.chunk = bytearray(_PIPE_BYTES)
        buffer, chunk = self.buffer, self.chunk
        with contextlib.suppress(BlockingIOError), memoryview(chunk) as view:
            while count := os.readv(self.fd, [chunk]):
                buffer += view[:count]
        start, size = 0, len(buffer)
        with memoryview(buffer) as view:
            while size - start >= _HEADER.size:
                end = start + _HEADER.size + _HEADER.unpack_from(view, start)[0]
                if end > size:
                    break
                into.append(pickle.loads(view[start + _HEADER.size : end]))
                start = end
        del buffer[:start]


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, missing = [], size
    while missing:
        chunk = os.read(fd, min(missing, _READ))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)
