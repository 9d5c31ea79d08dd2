"""Executors: a local process pool (the embedded default) and Celery. Both end in ``run_job``.

The Celery side is an adapter handed to the scheduler: ``CeleryQueue`` sends a job by task
name (``farm.render_job``) through a client made from the settings, so this library never
imports the worker application in ``workers/``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from farm.scheduler.warmup import forkserver_context
from farm.settings import BROKER_REQUIRED, FarmSettings, SettingsError

RENDER_TASK = "farm.render_job"
QUALIFY_TASK = "farm.qualification.qualify"
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
    on_done: Callable[[], None] | None = None,
) -> None:
    """Run the jobs on a process pool using every core; returns when all have finished."""
    if not jobs:
        return
    workers = max(1, min(processes or os.cpu_count() or 1, len(jobs)))
    # forkserver: a worker starts from a server process holding the worker's modules
    # (farm/scheduler/warmup.py), not from a fork of this one, so it does not carry the planner's
    # catalog (hundreds of MiB for 100,000 targets) in its memory.
    context = forkserver_context()
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_init_local_worker, initargs=(settings,)
    ) as pool:
        pending: set[Future] = {pool.submit(_run_local, job_id, key) for job_id, key in jobs}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                future.result()  # an infrastructure error stops the run loudly
            if on_done is not None:
                on_done()


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
