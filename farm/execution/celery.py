"""The Celery executor's client side: sends jobs to the workers by task name.

``CeleryQueue`` sends a run's jobs by task name (``farm.render_jobs``), a few per message
(``FARM_CELERY_JOBS_PER_MESSAGE``), each as its id and batch key, nothing else, through a client
made from the settings, so this library never imports the worker application in ``workers/``.
A worker runs a message's jobs with ``run_jobs``: each job renders while the one before is
recorded. ``farm.render_job`` (one job) is still served, for messages sent before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from farm.execution.chunks import job_chunks
from farm.identity.fingerprint import core_version, versioned_queue
from farm.settings import BROKER_REQUIRED, FarmSettings, SettingsError

RENDER_TASK = "farm.render_job"  # one job: messages sent before farm.render_jobs
RENDER_JOBS_TASK = "farm.render_jobs"
QUALIFY_TASK = "farm.qualification.qualify"


class CeleryQueue:
    """Sends jobs to Celery workers by task name: (job id, batch key) pairs, nothing else."""

    def __init__(self, settings: FarmSettings, client: Any | None = None) -> None:
        if client is None:
            from celery import Celery

            if not settings.broker_url:  # Celery would guess amqp://localhost; another farm's broker
                raise SettingsError(BROKER_REQUIRED)
            client = Celery("farm-client", broker=settings.broker_url)
            client.conf.update(task_serializer="json", broker_connection_retry_on_startup=True)
        self.client = client
        self.base_queue = settings.celery_queue
        self.jobs_per_message = settings.celery_jobs_per_message

    @staticmethod
    def queue_name(settings: FarmSettings, version: str | None = None) -> str:
        """The queue jobs of core ``version`` (default: this process's) go to."""
        return versioned_queue(settings.celery_queue, version or core_version())

    def queue_for(self, version: str | None = None) -> str:
        """The queue of core ``version`` (default: the core of this process, the planner's)."""
        return versioned_queue(self.base_queue, version or core_version())

    def __call__(self, jobs: Sequence[tuple[str, str]], version: str | None = None) -> None:
        """Send the jobs, in order, a few per message (``message_jobs``), to the queue of the core
        they were planned under (this process's, unless ``version`` says otherwise); called after
        the planning transaction committed."""
        queue = self.queue_for(version)
        for message in self.message_jobs(jobs):
            self.client.send_task(RENDER_JOBS_TASK, args=(message,), queue=queue)

    def message_jobs(self, jobs: Sequence[tuple[str, str]]) -> list[list[tuple[str, str]]]:
        """The jobs cut into messages of at most ``FARM_CELERY_JOBS_PER_MESSAGE``, fewer towards the
        end. How many workers consume the queue is not known here (asking the broker takes a
        second): the messages shrink as if there were as many as a message carries jobs."""
        most = self.jobs_per_message
        return job_chunks(jobs, workers=most, most=most)

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

    def send_qualification(self, snapshot_digest: str, cluster: str, selection: str) -> None:
        """Send the qualification of one subject to this core's queue: ids only, the worker reads
        the catalog from the stored snapshot ``snapshot_digest``, never from a folder."""
        self.client.send_task(
            QUALIFY_TASK, args=(snapshot_digest, cluster, selection), queue=self.queue_for()
        )
