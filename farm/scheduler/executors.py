"""Executors: a local process pool (the embedded default) and Celery. Both end in ``run_job``.

The Celery side is an adapter handed to the scheduler: ``CeleryQueue`` sends a job by task
name (``farm.render_job``) through a client made from the settings, so this library never
imports the worker application in ``workers/``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from farm.scheduler.interrupts import stop_if_requested
from farm.scheduler.warmup import forkserver_context
from farm.settings import BROKER_REQUIRED, FarmSettings, SettingsError

RENDER_TASK = "farm.render_job"
QUALIFY_TASK = "farm.qualification.qualify"
_CHECK_SECONDS = 0.2  # how often a run on the local pool looks for a stop request
_worker_state: dict = {}


def worker_name(prefix: str = "local") -> str:
    return f"{prefix}@{socket.gethostname()}:{os.getpid()}"


def _init_local_worker(settings: FarmSettings) -> None:
    from farm.evidence.keys import load_configured_signer
    from farm.logs import configure_json_logging_if_asked
    from farm.store.context import open_storage

    configure_json_logging_if_asked(settings.log_format)  # a pool worker is a fresh process

    try:
        _worker_state["storage"] = open_storage(settings)
        _worker_state["signer"] = load_configured_signer(settings)
    except Exception as exc:  # noqa: BLE001 - raised by each job: one message, not a child's traceback
        _worker_state["error"] = f"the local render worker could not start: {exc}"


def _run_local(job_id: str, batch_key: str) -> str:
    from farm.scheduler.jobs import run_job

    if "error" in _worker_state:
        raise RuntimeError(_worker_state["error"])
    outcome = run_job(
        _worker_state["storage"],
        _worker_state["signer"],
        job_id,
        worker=worker_name(),
        expected_batch_key=batch_key,
    )
    return outcome.state


def run_local(
    settings: FarmSettings,
    jobs: Sequence[tuple[str, str]],
    *,
    processes: int | None = None,
) -> None:
    """Run the jobs on a process pool using every core; returns when all have finished. In the
    farm daemon the pool is its resident one (``keep_local_pool``), started once for many runs."""
    if not jobs:
        return
    if _resident is not None:
        _resident.run(settings, jobs, processes=processes)
        return
    workers = max(1, min(processes or os.cpu_count() or 1, len(jobs)))
    with _new_pool(settings, workers) as pool:
        _run_on(pool, jobs)


def _new_pool(settings: FarmSettings, workers: int) -> ProcessPoolExecutor:
    # forkserver: a worker starts from a server process holding the worker's modules
    # (farm/scheduler/warmup.py), not from a fork of this one, so it does not carry the planner's
    # catalog (hundreds of MiB for 100,000 targets) in its memory.
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=forkserver_context(),
        initializer=_init_local_worker,
        initargs=(settings,),
    )


def _run_on(pool: ProcessPoolExecutor, jobs: Sequence[tuple[str, str]]) -> None:
    pending: set[Future] = {pool.submit(_run_local, job_id, key) for job_id, key in jobs}
    try:
        while pending:
            finished, pending = wait(pending, timeout=_CHECK_SECONDS, return_when=FIRST_COMPLETED)
            stop_if_requested()
            for future in finished:
                future.result()  # an infrastructure error stops the run loudly
    finally:
        for future in pending:  # stopped early (an error, an interrupt): the rest stay queued
            future.cancel()


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
    ) -> None:
        pool = self._pool_for(settings, processes)
        try:
            _run_on(pool, jobs)
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


class CeleryQueue:
    """Sends jobs to Celery workers by task name: (job id, batch key), nothing else."""

    def __init__(self, settings: FarmSettings, client: Any | None = None) -> None:
        if client is None:
            from celery import Celery

            if not settings.broker_url:  # Celery would guess amqp://localhost; another farm's broker
                raise SettingsError(BROKER_REQUIRED)
            client = Celery("farm-client", broker=settings.broker_url)
            client.conf.update(task_serializer="json", broker_connection_retry_on_startup=True)
        self.client = client
        self.base_queue = settings.celery_queue

    @staticmethod
    def queue_name(settings: FarmSettings, version: str | None = None) -> str:
        """The queue jobs of core ``version`` (default: this process's) go to."""
        from farm.scheduler.fingerprint import core_version, versioned_queue

        return versioned_queue(settings.celery_queue, version or core_version())

    def queue_for(self, version: str | None = None) -> str:
        """The queue of core ``version`` (default: the core of this process, the planner's)."""
        from farm.scheduler.fingerprint import core_version, versioned_queue

        return versioned_queue(self.base_queue, version or core_version())

    def __call__(self, jobs: Sequence[tuple[str, str]], version: str | None = None) -> None:
        """Send one message per job to the queue of the core they were planned under (this
        process's, unless ``version`` says otherwise); called after the planning transaction
        committed."""
        queue = self.queue_for(version)
        for job_id, batch_key in jobs:
            self.client.send_task(RENDER_TASK, args=(job_id, batch_key), queue=queue)

    def consumers(self, queue: str, timeout: float = 1.0) -> list[str] | None:
        """The workers that consume ``queue``, asked over the broker (Celery's remote control);
        None when the broker cannot be asked."""
        try:
            replies = self.client.control.inspect(timeout=timeout).active_queues() or {}
        except Exception:  # noqa: BLE001 - any broker failure: the caller says what it can
            return None
        return sorted(
            worker for worker, queues in replies.items() if any(q.get("name") == queue for q in queues or ())
        )

    def send_qualification(self, cluster: str, selection: str) -> None:
        """Send the qualification of one subject (ids only: the worker reads the catalog named by
        ``FARM_QUALIFICATION_CATALOG``) to this core's queue."""
        self.client.send_task(QUALIFY_TASK, args=(cluster, selection), queue=self.queue_for())


def uses_celery(settings: FarmSettings) -> bool:
    """The farm's executor when no command line says otherwise: Celery once a broker is set."""
    return bool(settings.broker_url) or settings.executor == "celery"
