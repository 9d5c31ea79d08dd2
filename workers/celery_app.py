"""The Celery application: Redis broker, at-least-once delivery, a few job ids per task.

- ``acks_late`` + ``reject_on_worker_lost``: a message is acknowledged only after the job ran, so
  a worker killed mid-job leaves the message to be redelivered;
- prefetch 1: a worker holds one message at a time (``FARM_CELERY_JOBS_PER_MESSAGE`` jobs at
  most), so a dead worker strands at most one running job, and the jobs of its message it had
  not claimed stay queued;
- results are not stored: completion is counted in SQL;
- on PostgreSQL a worker's commits do not wait for their flush (FARM_WORKER_SYNCHRONOUS_COMMIT,
  ``workers/tasks.py``): what a crash of the database server loses, the reconciler sends again;
- every task goes to the queue ``<FARM_CELERY_QUEUE>.<core version>`` of the core its run was
  planned under, which ``farm worker`` of that core consumes: workers of different farms (or test
  runs) on one broker never take each other's jobs, and during a rolling upgrade a job waits for a
  worker of its own core instead of failing with ``action_key_mismatch``;
- beat runs the reconciler, which re-sends jobs stuck in queued/running past a timeout, the
  qualification finder, and a sampled ``farm audit`` when ``FARM_AUDIT_SAMPLE`` is set
  (``workers/schedule.py``).
"""

from __future__ import annotations

import logging

from celery import Celery
from celery.signals import setup_logging

from farm.identity.fingerprint import core_version, versioned_queue
from farm.settings import BROKER_REQUIRED, SettingsError, load_settings
from workers.schedule import beat_schedule


def make_celery() -> Celery:
    settings = load_settings()
    if not settings.broker_url:  # never a guessed default: another farm's Redis db 0 is not ours
        raise SettingsError(BROKER_REQUIRED)
    app = Celery("farm", broker=settings.broker_url, include=["workers.tasks"])
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        # <FARM_CELERY_QUEUE>.<core version>: `farm worker` consumes only its own core's queue.
        task_default_queue=versioned_queue(settings.celery_queue, core_version()),
        task_serializer="json",
        accept_content=["json"],
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": 3600},
        worker_hijack_root_logger=False,
        beat_schedule=beat_schedule(settings),
        timezone="UTC",  # the crontab settings (FARM_*_SCHEDULE) are read in UTC
    )
    return app


@setup_logging.connect
def _farm_logging(loglevel: str | int = "INFO", **_: object) -> None:
    """Celery leaves logging to the farm: text or JSON lines (FARM_LOG_FORMAT), job ids on each."""
    from farm.logs import configure_logging

    level = loglevel if isinstance(loglevel, str) else logging.getLevelName(loglevel)
    configure_logging(load_settings().log_format, level or "INFO")


app = make_celery()
