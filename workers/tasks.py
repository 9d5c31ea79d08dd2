"""Thin Celery tasks: each reads ids from its message and calls into farm/."""

from __future__ import annotations

from functools import cache

from botocore.exceptions import BotoCoreError, ClientError
from sqlalchemy.exc import DBAPIError, OperationalError

from farm.evidence.keys import Signer, load_configured_signer
from farm.scheduler.audit import scheduled_audit
from farm.scheduler.executors import RENDER_TASK, CeleryQueue, worker_name
from farm.scheduler.jobs import run_job
from farm.scheduler.reconcile import reconcile
from farm.store.context import Storage, open_storage
from farm.store.objects import ObjectStoreError
from workers.celery_app import app
from workers.schedule import AUDIT_TASK

INFRASTRUCTURE_ERRORS = (
    OperationalError,
    DBAPIError,
    ObjectStoreError,
    BotoCoreError,
    ClientError,
    ConnectionError,
)


@cache
def _storage() -> Storage:
    return open_storage()


@cache
def _signer() -> Signer:
    return load_configured_signer(_storage().settings)


@app.task(
    name=RENDER_TASK,
    autoretry_for=INFRASTRUCTURE_ERRORS,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=5,
)
def render_job(job_id: str, batch_key: str) -> str:
    """Run one job. The message carries the job id and the batch key it expects, nothing else."""
    outcome = run_job(
        _storage(), _signer(), job_id, worker=worker_name("celery"), expected_batch_key=batch_key
    )
    return outcome.state


@app.task(name="farm.reconcile")
def reconcile_stale_jobs() -> int:
    return reconcile(_storage(), CeleryQueue(_storage().settings, client=app))


@app.task(name=AUDIT_TASK)
def audit_latest_run() -> str | None:
    """A sampled audit of the latest run (``FARM_AUDIT_SAMPLE`` targets); its record's digest."""
    storage = _storage()
    report = scheduled_audit(storage, _signer(), storage.settings.audit_sample)
    return report.envelope_digest if report is not None else None
