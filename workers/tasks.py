"""Thin Celery tasks: each reads ids from its message and calls into farm/."""

from __future__ import annotations

import contextlib
import logging
from functools import cache
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError
from celery import Task
from celery.signals import worker_process_init

import farm.build.handlers  # noqa: F401 - every handler loaded before the pool forks
from farm.audit.service import scheduled_audit
from farm.evidence.errors import EvidenceError
from farm.evidence.keys import KeyFileError, Signer, load_configured_signer
from farm.execution.celery import QUALIFY_TASK, RENDER_JOBS_TASK, RENDER_TASK, CeleryQueue
from farm.execution.inline import InlineExecutor
from farm.execution.naming import worker_name
from farm.fleet.jobs import fail_job, give_up_job, run_jobs
from farm.fleet.reconcile import reconcile
from farm.settings import load_settings
from farm.store.context import Storage, open_storage
from farm.store.db import STORE_ERRORS, preload_driver
from farm.store.objects import ObjectStoreError
from workers.celery_app import app
from workers.schedule import AUDIT_TASK, PUBLISH_RETRY_TASK

if TYPE_CHECKING:
    from farm.catalog import CatalogSnapshot

log = logging.getLogger(__name__)

INFRASTRUCTURE_ERRORS = (*STORE_ERRORS, ObjectStoreError, BotoCoreError, ClientError, ConnectionError)


@cache
def _storage() -> Storage:
    """This worker process's storage; its commits wait for their flush only when
    FARM_WORKER_SYNCHRONOUS_COMMIT says so (what a database crash may lose, the reconciler
    sends again)."""
    settings = load_settings()
    return open_storage(
        settings, synchronous_commit=settings.worker_synchronous_commit == "on", journals_in_memory=True
    )


@cache
def _signer() -> Signer:
    return load_configured_signer(_storage().settings)


preload_driver(load_settings().database_url)  # before the pool forks


@worker_process_init.connect
def _warm_pool_process(**_: object) -> None:
    """A pool process makes its storage and loads its key as it starts, not in its first job.
    Nothing here connects to the database, which may be slow to answer while Celery waits for the
    process to start."""
    try:
        _signer()  # makes the storage first
    except Exception:  # noqa: BLE001 - a key or setting that does not load fails each job instead
        log.debug("pool process warm-up skipped", exc_info=True)


_RETRIED = {
    "autoretry_for": INFRASTRUCTURE_ERRORS,
    "retry_backoff": 2,
    "retry_backoff_max": 60,
    "retry_jitter": True,
    "max_retries": 5,
}


@app.task(bind=True, name=RENDER_JOBS_TASK, **_RETRIED)
def render_jobs(self: Task, jobs: list[list[str]]) -> list[str]:
    """Run a message's jobs in turn, each rendering while the one before is recorded. The message
    carries each job's id and the batch key it expects, nothing else."""
    return _run_message(self, [(job_id, batch_key) for job_id, batch_key in jobs])


@app.task(bind=True, name=RENDER_TASK, **_RETRIED)
def render_job(self: Task, job_id: str, batch_key: str) -> str:
    """One job, as messages sent before ``farm.render_jobs`` carry it."""
    return _run_message(self, [(job_id, batch_key)])[0]


def _run_message(task: Task, jobs: list[tuple[str, str]]) -> list[str]:
    """The jobs' outcomes. An infrastructure error gives back the claims this worker holds and
    propagates, so Celery retries the message: the jobs recorded by then are skipped. On the last
    retry's error the jobs still open fail (they would otherwise stay queued); so does every job
    when this worker may not sign (its key missing or not trusted: keys fail closed)."""
    try:
        signer = _signer()
    except (EvidenceError, KeyFileError) as refused:
        return [_refuse(job_id, refused) for job_id, _ in jobs]
    try:
        outcomes = run_jobs(_storage(), signer, jobs, worker=worker_name("celery"))
    except INFRASTRUCTURE_ERRORS as error:
        if task.request.retries >= (task.max_retries or 0):
            for job_id, _ in jobs:  # each on its own: one that cannot be failed leaves the rest to fail
                with contextlib.suppress(*INFRASTRUCTURE_ERRORS):  # the reconciler re-sends it then
                    give_up_job(_storage(), job_id, error)
        raise
    return [outcome.state for outcome in outcomes]


def _refuse(job_id: str, refused: EvidenceError | KeyFileError) -> str:
    code = getattr(refused, "code", "keys.missing")
    log.error("job %s refused: %s", job_id, refused)
    fail_job(_storage(), job_id, code, f"the worker cannot sign: {refused}")
    return "failed"


@app.task(name="farm.reconcile")
def reconcile_stale_jobs() -> int:
    return reconcile(_storage(), CeleryQueue(_storage().settings, client=app))


@app.task(name=AUDIT_TASK)
def audit_latest_run() -> str | None:
    """A sampled audit of the latest run (``FARM_AUDIT_SAMPLE`` targets); its record's digest."""
    storage = _storage()
    report = scheduled_audit(storage, _signer(), storage.settings.audit_sample)
    return report.envelope_digest if report is not None else None


@app.task(name=PUBLISH_RETRY_TASK)
def retry_due_publishes() -> int:
    """Beat: attempt the publishes whose next attempt is due (a failed push after its backoff);
    how many were attempted."""
    from farm.publish.service import retry_unfinished
    from farm.store.models import utcnow

    return len(retry_unfinished(_storage(), _signer(), due_at=utcnow()))


@app.task(name="farm.qualification.find_due")
def find_due_qualifications() -> int:
    """Beat: recover abandoned qualification runs, refresh every state against the catalog named
    by FARM_QUALIFICATION_CATALOG (stored as a snapshot), and send the qualification of every due
    subject, once each (claimed in SQL), naming that snapshot, on this core's queue."""
    from farm.evidence.keys import load_configured_trust
    from farm.fleet.service import schedule_due_qualifications

    storage = _storage()
    catalog = storage.settings.qualification_catalog
    due = schedule_due_qualifications(
        storage,
        _qualification_catalog(),
        frozenset(load_configured_trust(storage.settings)),
        CeleryQueue(storage.settings, client=app),
        source=str(catalog or ""),
    )
    return len(due)


def _qualification_catalog() -> CatalogSnapshot | None:
    """Today's catalog for the finder (FARM_QUALIFICATION_CATALOG), None when unset or broken."""
    from farm.catalog import CatalogError, load_catalog

    catalog = _storage().settings.qualification_catalog
    if catalog is None:
        return None
    try:
        return load_catalog(catalog, max_file_bytes=_storage().settings.catalog_max_file_bytes)
    except CatalogError as error:
        log.error("FARM_QUALIFICATION_CATALOG %s does not load: %s", catalog, error)
        return None


@app.task(name=QUALIFY_TASK)
def qualify_subject_task(snapshot_digest: str, cluster: str, selection: str) -> str:
    """Qualify one subject of the stored catalog snapshot the message names; its jobs run here."""
    from farm.evidence.keys import load_configured_trust
    from farm.fleet.service import qualify_stored_subject

    storage = _storage()
    result = qualify_stored_subject(
        storage,
        snapshot_digest,
        cluster,
        selection,
        executor=InlineExecutor(storage, _signer(), worker_name("celery")),
        signer=_signer(),
        trusted_keyids=frozenset(load_configured_trust(storage.settings)),
    )
    return result.state
