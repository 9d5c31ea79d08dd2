"""Running one job: claim it, read its documents from the snapshot, render, sign, store, finish.

``run_job`` is the only way anything in the farm renders (the CLI's run, the local executor and
the Celery task all call it). Errors of the render are values of the job: a bad application fails
its own job with the core's stable error code and message. Infrastructure errors (database,
object storage) release the claim and propagate so the caller can retry.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from farm.core.errors import CoreError
from farm.core.render import render
from farm.evidence.keys import Signer
from farm.evidence.provenance import RenderProvenance, action_key
from farm.scheduler.keys import documents_inputs
from farm.scheduler.progress import finalize_run_if_done
from farm.scheduler.snapshots import SnapshotNotFound, TargetDocuments, manifest_documents
from farm.store.context import Storage
from farm.store.db import session_scope
from farm.store.models import JobState
from farm.store.outputs import NondeterministicOutputError, sign_and_put, store_output
from farm.store.repository import ClaimedJob, claim_job_returning, finish_job, release_job

log = logging.getLogger(__name__)

FORGED_ACTION_KEY = "action_key_mismatch"
INTERNAL_ERROR = "internal_error"
NONDETERMINISTIC = "nondeterministic_output"


@dataclass(frozen=True)
class JobOutcome:
    job_id: str
    # succeeded or failed when this worker recorded it; "skipped" when another worker holds or
    # finished the job, including a claim taken over (by the reconciler) while this worker ran
    state: str
    error_code: str | None = None
    output_digest: str | None = None


SKIPPED = "skipped"


class _ClaimLost(Exception):
    """The job is no longer this worker's: roll back what it was about to record."""


def _claim(storage: Storage, job_id: str, worker: str) -> ClaimedJob | None:
    with session_scope(storage.sessions) as session:
        return claim_job_returning(session, job_id, worker=worker)


def _finish(storage: Storage, job: ClaimedJob, worker: str, **fields: Any) -> bool:
    """Record the job's final state if this worker still holds it; finalise the run. True if it did."""
    with session_scope(storage.sessions) as session:
        won = finish_job(session, job.id, worker=worker, **fields)
    if won:
        finalize_run_if_done(storage, job.run_id)
    return won


def _lost(job: ClaimedJob, worker: str) -> JobOutcome:
    log.warning(
        "job %s: %s no longer holds the claim (taken over); its result is not recorded", job.id, worker
    )
    return JobOutcome(job.id, SKIPPED)


def _render(documents: TargetDocuments) -> bytes:
    return render(
        documents.app_yaml,
        documents.profile_yaml,
        package=documents.package_yaml,
        values=documents.values_yaml,
        namespace=documents.namespace,
        app_source=f"{documents.application}/app.yaml",
        profile_source=f"{documents.cluster}.yaml",
        values_source=f"{documents.application}/values.yaml",
        package_source=f"{documents.application}/kurel.yaml",
    ).manifests


def run_job(
    storage: Storage, signer: Signer, job_id: str, *, worker: str, expected_action_key: str | None = None
) -> JobOutcome:
    job = _claim(storage, job_id, worker)
    if job is None:
        return JobOutcome(job_id, SKIPPED)
    try:
        return _execute(storage, signer, job, worker, expected_action_key)
    except Exception:  # infrastructure: a render error is a value of the job, handled in _execute
        with session_scope(storage.sessions) as session:
            release_job(session, job.id, worker=worker)
        raise


def _fail(storage: Storage, job: ClaimedJob, worker: str, code: str, message: str) -> JobOutcome:
    if not _finish(storage, job, worker, state=JobState.FAILED, error_code=code, error_message=message):
        return _lost(job, worker)
    return JobOutcome(job.id, JobState.FAILED.value, error_code=code)


def _documents(storage: Storage, job: ClaimedJob) -> TargetDocuments:
    if job.manifest_digest is None:
        raise SnapshotNotFound(f"catalog snapshot {job.snapshot_digest} is not in the store")
    return manifest_documents(storage.objects, job.manifest_digest, job.application, job.cluster_profile)


def _execute(
    storage: Storage, signer: Signer, job: ClaimedJob, worker: str, expected_action_key: str | None
) -> JobOutcome:
    documents = _documents(storage, job)
    inputs = documents_inputs(documents)
    key = action_key(inputs)
    if key != job.action_key or (expected_action_key is not None and expected_action_key != job.action_key):
        message = f"the job's inputs have action key {key}, the job was planned as {job.action_key}" + (
            f" and the message expected {expected_action_key}" if expected_action_key else ""
        )
        return _fail(storage, job, worker, FORGED_ACTION_KEY, message)
    try:
        manifests = _render(documents)
    except CoreError as exc:
        return _fail(storage, job, worker, exc.code, exc.message)
    except Exception as exc:  # a handler bug fails its own job, never the run
        log.exception("render of job %s crashed", job.id)
        return _fail(storage, job, worker, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
    provenance = RenderProvenance(
        inputs=inputs,
        application=job.application,
        cluster_profile=job.cluster_profile,
        catalog_snapshot=job.snapshot_digest,
        job_id=job.id,
    )
    # Signing and the blob fsyncs happen before the recording transaction takes the write lock
    # (skipped when the key was cached at claim time: the reuse path writes no new evidence).
    signed = None
    if job.cached_output_digest is None:
        signed = sign_and_put(storage.objects, signer, manifests=manifests, provenance=provenance)
    try:
        with session_scope(storage.sessions) as session:
            record = store_output(
                session,
                storage.objects,
                signer,
                manifests=manifests,
                action_key=key,
                provenance=provenance,
                signed=signed,
            )
            if not finish_job(
                session, job.id, worker=worker, state=JobState.SUCCEEDED, output_digest=record.output_digest
            ):
                raise _ClaimLost  # rolls back this transaction: a worker that lost its claim records nothing
    except _ClaimLost:
        return _lost(job, worker)
    except NondeterministicOutputError as exc:
        return _fail(storage, job, worker, NONDETERMINISTIC, str(exc))
    finalize_run_if_done(storage, job.run_id)
    return JobOutcome(job.id, JobState.SUCCEEDED.value, output_digest=record.output_digest)
