"""The local executor: a process pool (the embedded default) whose workers call ``run_jobs`` on a
few jobs at a time (``farm.execution.chunks``).

In the farm daemon the pool is resident (``keep_local_pool``): started once, kept across runs.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from farm.execution.chunks import job_chunks
from farm.execution.naming import worker_name
from farm.execution.warmup import forkserver_context
from farm.fleet.interrupts import stop_if_requested
from farm.fleet.owners import owner_is_gone, process_owner
from farm.settings import FarmSettings

_CHECK_SECONDS = 0.2  # how often a run on the local pool looks for a stop request
_OWNER_CHECK_SECONDS = 1.0  # how often a pool worker looks for its pool's owner
POOL_ATTEMPTS = 2  # a pool broken this many times in one run fails the jobs it has not finished
MAX_CHUNK = 8  # jobs per call of a pool worker, at most
_worker_state: dict = {}


def _init_local_worker(settings: FarmSettings, owner: str) -> None:
    from farm.evidence.keys import load_configured_signer
    from farm.logs import configure_json_logging_if_asked
    from farm.store.context import open_storage

    _leave_with(owner)
    # Ctrl-C stops a worker as it stops farm run, even where the forkserver it was forked from
    # was started with SIGINT ignored (farm.execution.warmup)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    configure_json_logging_if_asked(settings.log_format)  # a pool worker is a fresh process

    try:
        # _run_on_a_pool's owner checkpoints; a job's statements are small enough for memory
        _worker_state["storage"] = open_storage(settings, checkpoints_elsewhere=True, journals_in_memory=True)
        _worker_state["signer"] = load_configured_signer(settings)
    except Exception as exc:  # noqa: BLE001 - raised by each job: one message, not a child's traceback
        _worker_state["error"] = f"the local render worker could not start: {exc}"


def _leave_with(owner: str) -> None:
    """End this pool worker once the pool's owner (``farm run``, the daemon) is gone.

    A worker holds both ends of its pool's call queue, so it never reads the end of it: a ``kill
    -9`` of the owner left its workers waiting for a job forever, and with them their render
    children and the forkserver (which lives while a process it started holds its pipe). A
    thread looks for the owner in the process table every second; the job a worker held then is
    the next run's to recover, as for any crash. Where the process table cannot tell (no
    ``/proc``), an owner is never gone and the worker stays."""

    def watch() -> None:
        while not owner_is_gone(owner):
            time.sleep(_OWNER_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="farm-owner-watch", daemon=True).start()


def _run_local(jobs: Sequence[tuple[str, str]]) -> list[str]:
    from farm.fleet.jobs import run_jobs

    if "error" in _worker_state:
        raise RuntimeError(_worker_state["error"])
    outcomes = run_jobs(_worker_state["storage"], _worker_state["signer"], jobs, worker=worker_name())
    return [outcome.state for outcome in outcomes]


def run_local(
    settings: FarmSettings,
    jobs: Sequence[tuple[str, str]],
    *,
    processes: int | None = None,
    on_progress: Callable[[], None] | None = None,
) -> None:
    """Run the jobs on a process pool using every core; returns when all have finished, calling
    ``on_progress`` as each job finishes (and every few tenths of a second between). In the farm
    daemon the pool is its resident one (``keep_local_pool``), started once for many runs."""
    if not jobs:
        return
    for attempt in range(1, POOL_ATTEMPTS + 1):
        try:
            _run_on_a_pool(settings, jobs, processes, on_progress)
            return
        except BrokenProcessPool as broken:  # a worker died (kill -9, the OOM killer)
            from farm.fleet.recovery import fail_broken_pool, release_broken_pool

            if attempt == POOL_ATTEMPTS:
                fail_broken_pool(settings, jobs, str(broken))
            else:
                release_broken_pool(settings, jobs)  # its claims back to the queue: a new pool runs them


def _run_on_a_pool(
    settings: FarmSettings,
    jobs: Sequence[tuple[str, str]],
    processes: int | None,
    on_progress: Callable[[], None] | None,
) -> None:
    from farm.store.db import WalCheckpointer

    checkpoint = WalCheckpointer(settings.database_url)  # the workers' commits leave it to us
    try:
        if _resident is not None:
            _resident.run(settings, jobs, processes=processes, on_progress=on_progress, checkpoint=checkpoint)
            return
        workers = max(1, min(processes or os.cpu_count() or 1, len(jobs)))
        with _new_pool(settings, workers) as pool:
            _run_on(pool, jobs, on_progress, checkpoint)
    finally:
        checkpoint.close()


def _new_pool(settings: FarmSettings, workers: int) -> ProcessPoolExecutor:
    # forkserver: a worker starts from a server process holding the worker's modules
    # (farm/execution/warmup.py), not from a fork of this one, so it does not carry the planner's
    # catalog (hundreds of MiB for 100,000 targets) in its memory.
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=forkserver_context(),
        initializer=_init_local_worker,
        initargs=(settings, process_owner()),
    )


def _run_on(
    pool: ProcessPoolExecutor,
    jobs: Sequence[tuple[str, str]],
    on_progress: Callable[[], None] | None = None,
    checkpoint: Callable[[], None] | None = None,
) -> None:
    # each future reports itself done on a queue: waiting on the set of pending futures would
    # register a waiter on every one of them at each wake-up (quadratic in a run's jobs)
    done: queue.SimpleQueue[Future] = queue.SimpleQueue()
    pending: set[Future] = set()
    for chunk in job_chunks(jobs, pool._max_workers, MAX_CHUNK):  # noqa: SLF001 - the pool's size
        future = pool.submit(_run_local, chunk)
        future.add_done_callback(done.put)
        pending.add(future)
    try:
        while pending:
            for future in _finished(done):
                pending.discard(future)
                future.result()  # an infrastructure error stops the run loudly
            stop_if_requested()
            if checkpoint is not None:
                checkpoint()
            if on_progress is not None:
                on_progress()
    finally:
        for future in pending:  # stopped early (an error, an interrupt): the rest stay queued
            future.cancel()


def _finished(done: queue.SimpleQueue[Future]) -> list[Future]:
    """The futures done since the last call: waits up to ``_CHECK_SECONDS`` for the first."""
    try:
        finished = [done.get(timeout=_CHECK_SECONDS)]
    except queue.Empty:
        return []
    while True:
        try:
            finished.append(done.get_nowait())
        except queue.Empty:
            return finished


def _ready() -> int:
    return os.getpid()


class ResidentPool:
    """The farm daemon's local pool, kept across runs: its workers keep their imports, their
    storage connections, their render children and the documents those parsed.

    A run reuses the pool only if it was started for the same settings, the same number of
    processes and the same signing key file (replaced, the key is loaded again by new workers);
    otherwise the pool is replaced. A pool that broke (a worker died) is replaced on the next run.
    """

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._started_for: tuple[object, ...] | None = None

    def warm(self, settings: FarmSettings, processes: int | None = None) -> None:
        """Start the workers now (each runs its initializer), so the first run finds them ready."""
        pool = self._pool_for(settings, processes)
        workers = pool._max_workers  # noqa: SLF001 - how many to wake
        for future in [pool.submit(_ready) for _ in range(workers)]:
            future.result()

    def run(
        self,
        settings: FarmSettings,
        jobs: Sequence[tuple[str, str]],
        *,
        processes: int | None = None,
        on_progress: Callable[[], None] | None = None,
        checkpoint: Callable[[], None] | None = None,
    ) -> None:
        pool = self._pool_for(settings, processes)
        try:
            _run_on(pool, jobs, on_progress, checkpoint)
        except BrokenProcessPool:
            self.close()
            raise

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool, self._started_for = None, None

    def _pool_for(self, settings: FarmSettings, processes: int | None) -> ProcessPoolExecutor:
        workers = max(1, processes or os.cpu_count() or 1)
        started_for = (settings, workers, _key_file_state(settings))
        if self._pool is None or self._started_for != started_for:
            self.close()
            self._pool, self._started_for = _new_pool(settings, workers), started_for
        return self._pool


def _key_file_state(settings: FarmSettings) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(settings.signing_key_path)
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


_resident: ResidentPool | None = None


def keep_local_pool() -> ResidentPool:
    """Make ``run_local`` use one resident pool for every run of this process (the farm daemon)."""
    global _resident
    if _resident is None:
        _resident = ResidentPool()
    return _resident
