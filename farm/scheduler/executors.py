"""Executors: a local process pool (the embedded default) and Celery. Both end in ``run_job``."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

from farm.settings import FarmSettings

_worker_state: dict = {}


def worker_name(prefix: str = "local") -> str:
    return f"{prefix}@{socket.gethostname()}:{os.getpid()}"


def _init_local_worker(settings: FarmSettings) -> None:
    from farm.evidence.keys import load_configured_signer
    from farm.store.context import open_storage

    _worker_state["storage"] = open_storage(settings)
    _worker_state["signer"] = load_configured_signer(settings)


def _run_local(job_id: str, action_key: str) -> str:
    from farm.scheduler.jobs import run_job

    outcome = run_job(
        _worker_state["storage"],
        _worker_state["signer"],
        job_id,
        worker=worker_name(),
        expected_action_key=action_key,
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
    with ProcessPoolExecutor(
        max_workers=workers, initializer=_init_local_worker, initargs=(settings,)
    ) as pool:
        pending: set[Future] = {pool.submit(_run_local, job_id, key) for job_id, key in jobs}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                future.result()  # an infrastructure error stops the run loudly
            if on_done is not None:
                on_done()


def enqueue_celery(jobs: Sequence[tuple[str, str]]) -> None:
    """Send one task per job (ids only); called after the planning transaction committed."""
    from workers.tasks import render_job

    for job_id, action_key in jobs:
        render_job.apply_async(args=(job_id, action_key))
