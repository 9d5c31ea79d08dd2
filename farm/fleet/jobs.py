"""Running one job: claim it, render each of its targets, sign, store the batch, record it.

``run_jobs`` (``run_job`` for one) is the only way anything in the farm renders (the local
executor, the inline one and the Celery tasks all call it). A job is one application and a batch
of its targets:

1. the claim (one short transaction) returns the targets not recorded yet, each with what the
   action and failure caches hold for its key, so a re-delivered batch skips its twin's work;
2. each target's request is fetched by digest and verified (a forged or damaged request fails
   that target), rendered, and its output signed, all outside any transaction;
3. the batch's blobs are made durable together (on a thread, while the batch is signed), then one
   transaction records every target's result, the outputs, evidence and cache entries, and the
   job's final state, only if this worker still holds the claim (otherwise the transaction rolls
   back and the job reports ``skipped``); a call's consecutive jobs are recorded together, up to
   ``RECORD_GROUP_JOBS`` in one transaction (one whose claim was taken over is left out and the
   others recorded again); on SQLite the same transaction finishes the run when it was the last
   open job (on PostgreSQL a probe after the commit does, once per call for each run, after the
   call's last job of it: ``farm.fleet.progress``).

A job's transactions share one pooled connection, checked out once per call. ``run_jobs`` runs
several jobs in turn (a call of the local pool), each job's renders overlapping the previous job's
recording: the render child renders job N+1 while this process signs, stores and records job N.
On SQLite, the claim and the recording wait their turn to write (``write_turn``).

Errors of a render are values of its target: a bad application fails its own targets with the
core's stable error code and message (cached against the action key, so an unchanged re-run
reports it again without rendering). Internal errors (a handler bug) fail the target and are not
cached. Infrastructure errors (database, object storage) release the claim and propagate, so the
caller can retry; nothing of the batch is recorded.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from farm.build.bounded import BoundExceeded, InFlight
from farm.build.fetch import RequestRefused, fetch_checked_request
from farm.build.step import RenderJob, render_bounds, start_renders
from farm.core.errors import bound_message
from farm.core.request import RenderRequest
from farm.evidence.failure import SignedFailure, failure_is_vouched, sign_failure
from farm.evidence.keys import Signer, TrustedSigners, load_configured_trust
from farm.evidence.provenance import RenderProvenance, inputs_of
from farm.evidence.signing import Rendered, SignedOutput, rendered, sign_batch
from farm.fleet.progress import after_job_recorded, finalize_run_if_done, finalize_run_in_transaction
from farm.identity.fingerprint import core_version
from farm.logs import job_log_context
from farm.metrics import JOB_SECONDS, RENDER_SECONDS
from farm.store.context import Storage
from farm.store.db import Connection, job_plans_kept, session_scope, write_turn
from farm.store.models import JobState
from farm.store.objects import ObjectStore, ObjectStoreUnavailableError
from farm.store.outputs import lock_action_keys, put_manifests, record_failures, record_outputs
from farm.store.runs import (
    ClaimedJob,
    ClaimedTarget,
    TargetResult,
    claim_job,
    fail_open_job,
    finish_job,
    release_job,
)
from farm.store.snapshots import RequestReader

log = logging.getLogger(__name__)

FORGED_MESSAGE = "job.batch_key_mismatch"
NONDETERMINISTIC = "render.nondeterministic"
SKIPPED = "skipped"
RETRIES_EXHAUSTED = "job.retries_exhausted"
# Consecutive jobs of a call recorded in one transaction: each commit cost a worker about a
# millisecond of CPU on SQLite, whatever it held, and the job's pages shared with its neighbours
# (the run's, the jobs' rows, the indexes' upper levels) are written once (docs/performance.md,
# twentieth session: a worker's CPU a target 290-334 µs recording each job, 233-234 recording four).
RECORD_GROUP_JOBS = 4


@dataclass(frozen=True)
class JobOutcome:
    job_id: str
    # succeeded when this worker recorded the batch; "skipped" when another worker holds or
    # finished the job, including a claim taken over (by the reconciler) while this worker ran
    state: str
    rendered: int = 0
    failed: int = 0
    cached: int = 0
    results: tuple[TargetResult, ...] = field(default=(), repr=False)


@dataclass
class _Batch:
    """What a job produced before it records anything."""

    results: list[TargetResult] = field(default_factory=list)
    rendered: dict[str, Rendered] = field(default_factory=dict)  # target id → its output, to sign
    signed: dict[str, SignedOutput] = field(default_factory=dict)  # target id → its signed output
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # cacheable core failures
    trusted: TrustedSigners | None = None  # read once, when a claimed target has a cached failure

    def fail(self, target: ClaimedTarget, code: str, message: str, *, cacheable: bool = False) -> None:
        message = bound_message(message)
        self.results.append(TargetResult(target.id, JobState.FAILED, error_code=code, error_message=message))
        if cacheable:
            self.failures.append((target.action_key, code, message))


def run_job(
    storage: Storage, signer: Signer, job_id: str, *, worker: str, expected_batch_key: str | None = None
) -> JobOutcome:
    return run_jobs(storage, signer, [(job_id, expected_batch_key)], worker=worker)[0]


def run_jobs(
    storage: Storage, signer: Signer, jobs: Sequence[tuple[str, str | None]], *, worker: str
) -> list[JobOutcome]:
    """``run_job`` for each ``(job id, expected batch key)`` in turn, each job's renders overlapping
    the previous job's recording: while the render child renders job N+1, this process stores,
    signs and records job N (otherwise one waits for the other, and a core idles). Consecutive
    jobs are recorded together, up to ``RECORD_GROUP_JOBS`` in one transaction. The outcomes are
    in the jobs' order."""
    outcomes: list[JobOutcome | None] = [None] * len(jobs)
    held: list[_Started] = []  # claimed by this worker, not recorded yet
    # runs whose completion this call still has to probe (PostgreSQL): once, after its last job
    unprobed: dict[str, None] = {}
    # the jobs' transactions share one pooled connection, their statements planned once on it
    with storage.engine.connect() as connection, job_plans_kept(connection):

        def record(group: list[_Started]) -> None:
            for started, (outcome, finished) in zip(
                group, _record(storage, signer, group, worker, connection), strict=True
            ):
                outcomes[started.index] = outcome
                held.remove(started)
                if finished is None:
                    unprobed[started.job.run_id] = None
                else:
                    after_job_recorded(storage, started.job.run_id, finished, connection)

        try:
            rendered: _Started | None = None
            waiting: list[_Started] = []  # rendered, their blobs being written: recorded together
            for index, (job_id, expected_batch_key) in enumerate(jobs):
                if rendered is not None:  # its blobs are written while the next job starts
                    rendered.store(storage.objects)
                    waiting.append(rendered)
                current = _begin(storage, job_id, expected_batch_key, worker, connection, held)
                if len(waiting) >= RECORD_GROUP_JOBS:
                    record(waiting)
                    waiting = []
                if current is None:
                    outcomes[index] = JobOutcome(job_id, SKIPPED)
                    rendered = None
                    continue
                current.index = index
                with job_log_context(run_id=current.job.run_id, job_id=current.job.id):
                    _collect(current)
                rendered = current
            if rendered is not None:
                waiting.append(rendered)
            if waiting:
                record(waiting)
        except BaseException as error:
            for started in held:
                started.abandon()
            if isinstance(error, Exception):  # infrastructure: render errors are values of their targets
                _release(storage, held, worker, error)
                # best effort, the error is what the caller gets: the waiting farm run (or the
                # retried message's probe) finishes a run left without its probe
                with contextlib.suppress(Exception):
                    _probe_completions(storage, unprobed, connection)
            raise
        _probe_completions(storage, unprobed, connection)
    assert all(outcome is not None for outcome in outcomes), "a job of the call has no outcome"
    return [outcome for outcome in outcomes if outcome is not None]


def _probe_completions(storage: Storage, runs: dict[str, None], connection: Connection) -> None:
    """Finish each of ``runs`` that has no open job left (``after_job_recorded``'s probe).

    On PostgreSQL a recorded job's run is probed after the commit. A call probes each run once,
    after its last job: the jobs it still holds keep the run open until then, and the probe
    after them sees every job recorded before it (a job recorded elsewhere meanwhile, whose own
    probe saw this call's jobs open, included). Probing after every job cost a transaction a
    job."""
    for run_id in runs:
        after_job_recorded(storage, run_id, None, connection)


@dataclass
class _Started:
    """A claimed job whose renders were sent to the render child."""

    job: ClaimedJob
    began: float  # perf_counter() at the claim
    index: int = 0  # its place in the call's jobs (its outcome's)
    batch: _Batch = field(default_factory=_Batch)
    pending: list[tuple[ClaimedTarget, RenderRequest]] = field(default_factory=list)
    renders: InFlight | None = None
    stored: Future[None] | None = None  # the blobs' write, on this process's blob writer

    def store(self, objects: ObjectStore) -> None:
        """Start writing the job's outputs to the object store (``stored``), unless started."""
        if self.stored is None and self.batch.rendered:
            outputs = self.batch.rendered.values()
            manifests = [output.manifests for output in outputs]
            digests = [output.output_digest for output in outputs]
            self.stored = _blob_writer().submit(put_manifests, objects, manifests, digests)

    def wait_stored(self) -> None:
        """Wait for the blobs' write; raises its error."""
        stored, self.stored = self.stored, None
        if stored is not None:
            stored.result()

    def abandon(self) -> None:
        """Stop its renders and wait for its blobs' write (never left running past the job)."""
        if self.renders is not None:
            self.renders.abandon()
            self.renders = None
        with contextlib.suppress(BaseException):
            self.wait_stored()


_writer: tuple[int, ThreadPoolExecutor] | None = None


def _blob_writer() -> ThreadPoolExecutor:
    """This process's thread for object-store writes, started once (a thread started for each
    job waited for the scheduler to run it, on a machine whose cores are busy)."""
    global _writer
    if _writer is None or _writer[0] != os.getpid():  # a forked process starts its own
        _writer = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="farm-blob-writer"))
    return _writer[1]


def _begin(
    storage: Storage,
    job_id: str,
    expected_batch_key: str | None,
    worker: str,
    connection: Connection,
    held: list[_Started],
) -> _Started | None:
    """Claim the job (added to ``held``) and send its renders to the render child; None when
    another worker holds or finished it."""
    began = time.perf_counter()
    with write_turn(storage.engine), connection.begin():
        job = claim_job(connection, job_id, worker=worker)
    if job is None:
        return None
    started = _Started(job, began)
    held.append(started)
    with job_log_context(run_id=job.run_id, job_id=job.id):
        log.info("job claimed: %d targets of %s", len(job.targets), job.application)
        if expected_batch_key is not None and expected_batch_key != job.batch_key:
            for target in job.targets:
                started.batch.fail(
                    target,
                    FORGED_MESSAGE,
                    f"the message expected batch {expected_batch_key}, the job is {job.batch_key}",
                )
        else:
            _start_renders(storage, started)
    return started


def _record(
    storage: Storage, signer: Signer, group: list[_Started], worker: str, connection: Connection
) -> list[tuple[JobOutcome, bool | None]]:
    """Each job's outcome, and whether it finished its run (None: not known, on PostgreSQL)."""
    answers = _store_and_record(storage, signer, group, worker, connection)
    for started, (outcome, _) in zip(group, answers, strict=True):
        with job_log_context(run_id=started.job.run_id, job_id=started.job.id):
            log.info(
                "job %s: %d rendered, %d failed, %d cached",
                outcome.state,
                outcome.rendered,
                outcome.failed,
                outcome.cached,
            )
        JOB_SECONDS.observe(time.perf_counter() - started.began)
    return answers


def _release(storage: Storage, held: Sequence[_Started], worker: str, error: BaseException) -> None:
    """Give back the claims of jobs this worker could not record, for another worker to run."""
    message = bound_message(f"{type(error).__name__}: {error}")
    with session_scope(storage.sessions) as session:  # a connection of its own: the jobs' may be what failed
        for started in held:
            release_job(session, started.job.id, worker=worker, error=message)


def _store_and_record(
    storage: Storage, signer: Signer, group: list[_Started], worker: str, connection: Connection
) -> list[tuple[JobOutcome, bool | None]]:
    """Sign the jobs' batches while their blobs are written, then record the jobs in one
    transaction: a job whose claim was taken over meanwhile records nothing (``skipped``), the
    others are recorded again without it."""
    # durable before any row points at them; stored while the batches are signed (the flush is
    # mostly a wait for the disk or for S3's answers, the signing is CPU)
    for started in group:
        started.store(storage.objects)
    try:
        signed_failures = []
        for started in group:
            _sign_batch(signer, started.job, started.batch)
            signed_failures.append([sign_failure(signer, *failure) for failure in started.batch.failures])
    except BaseException:
        for started in group:
            started.abandon()  # never leaves a write running past the job; the signing's error wins
        raise
    for started in group:
        started.wait_stored()
    recording = list(range(len(group)))
    while True:
        results, finished, lost = _record_in_transaction(
            storage, signer, group, recording, signed_failures, worker, connection
        )
        if lost is None:
            break
        job = group[lost].job
        with job_log_context(run_id=job.run_id, job_id=job.id):
            log.warning("job %s: %s no longer holds the claim (taken over); nothing recorded", job.id, worker)
        recording.remove(lost)
    answers: list[tuple[JobOutcome, bool | None]] = []
    last_of_run = {group[i].job.run_id: i for i in recording}
    for i, started in enumerate(group):
        if i not in results:
            answers.append((JobOutcome(started.job.id, SKIPPED), False))
            continue
        counts = {state: sum(1 for r in results[i] if r.state is state) for state in JobState}
        outcome = JobOutcome(
            started.job.id,
            JobState.SUCCEEDED.value,
            rendered=counts[JobState.SUCCEEDED],
            failed=counts[JobState.FAILED],
            cached=counts[JobState.CACHED],
            results=tuple(results[i]),
        )
        # the run finishes once: its last job of the group carries what its transaction found
        run_id = started.job.run_id
        answers.append((outcome, finished[run_id] if last_of_run[run_id] == i else False))
    return answers


def _record_in_transaction(
    storage: Storage,
    signer: Signer,
    group: list[_Started],
    recording: list[int],
    signed_failures: list[list[SignedFailure]],
    worker: str,
    connection: Connection,
) -> tuple[dict[int, list[TargetResult]], dict[str, bool | None], int | None]:
    """Record the jobs of ``group`` at ``recording`` in one transaction: their targets' results
    by index, and whether each of their runs finished in it; or, when a job's claim was taken
    over, nothing (rolled back) and that job's index."""
    results: dict[int, list[TargetResult]] = {}
    finished: dict[str, bool | None] = {}
    with write_turn(storage.engine), session_scope(storage.sessions, bind=connection) as session:
        lock_action_keys(session, [o.action_key for i in recording for o in group[i].batch.signed.values()])
        for i in recording:
            job, batch = group[i].job, group[i].batch
            refused = record_outputs(session, signer, list(batch.signed.values()))
            results[i] = [_refuse_if_nondeterministic(result, batch, refused) for result in batch.results]
            record_failures(session, signed_failures[i])
            if not finish_job(session, job.id, worker=worker, results=results[i]):
                session.rollback()
                return {}, {}, i
        for run_id in dict.fromkeys(group[i].job.run_id for i in recording):
            finished[run_id] = finalize_run_in_transaction(session, run_id)
    return results, finished, None


def _refuse_if_nondeterministic(result: TargetResult, batch: _Batch, refused: dict) -> TargetResult:
    signed = batch.signed.get(result.target_id)
    if signed is None or signed.action_key not in refused:
        return result
    return TargetResult(
        result.target_id,
        JobState.FAILED,
        error_code=NONDETERMINISTIC,
        error_message=str(refused[signed.action_key]),
    )


def _pending_request(
    storage: Storage, job: ClaimedJob, target: ClaimedTarget, batch: _Batch, reader: RequestReader
) -> RenderRequest | None:
    """The request of a target that needs rendering; None when the caches answered it or its
    request cannot be trusted (its result is then in ``batch``)."""
    # a twin rendered this key since planning (a hit whose blob is gone renders again)
    if target.cached_output is not None and storage.objects.exists(target.cached_output):
        batch.results.append(TargetResult(target.id, JobState.CACHED, output_digest=target.cached_output))
        return None
    if target.cached_failure is not None and _vouched(storage, target, batch):
        failure = target.cached_failure
        batch.results.append(
            TargetResult(
                target.id, JobState.CACHED, error_code=failure.error_code, error_message=failure.error_message
            )
        )
        return None
    try:
        return fetch_checked_request(
            storage.objects,
            reader,
            snapshot_digest=job.snapshot_digest,
            cluster=target.cluster_profile,
            request_digest=target.request_digest,
            action_key=target.action_key,
            version=core_version(),
            pack=target.request_pack,
        )
    except RequestRefused as refused:  # a forgery is never cached
        batch.fail(target, refused.code, refused.message)
        return None


def _vouched(storage: Storage, target: ClaimedTarget, batch: _Batch) -> bool:
    """A cached failure is served only with a trusted signed statement of it; otherwise the
    target renders (and ``farm verify --all`` reports the row)."""
    failure = target.cached_failure
    assert failure is not None
    if batch.trusted is None:
        batch.trusted = load_configured_trust(storage.settings)
    return failure_is_vouched(
        batch.trusted, target.action_key, failure.error_code, failure.error_message, failure.envelope
    )


def _start_renders(storage: Storage, started: _Started) -> None:
    """Fetch and check the requests of the targets the caches do not answer, and send them to
    the render child."""
    reader = RequestReader(storage.objects)  # the batch's targets share their application's pack
    job, batch = started.job, started.batch
    started.pending = [
        (target, request)
        for target in job.targets
        if (request := _pending_request(storage, job, target, batch, reader)) is not None
    ]
    jobs = [RenderJob(request) for _, request in started.pending]
    started.renders = start_renders(jobs, render_bounds(storage.settings))


def _collect(started: _Started) -> None:
    """Wait for the job's renders and give each target its result."""
    assert started.renders is not None or not started.pending
    outcomes = started.renders.outcomes() if started.renders is not None else []
    started.renders = None
    job, batch = started.job, started.batch
    for (target, request), outcome in zip(started.pending, outcomes, strict=True):
        if isinstance(outcome, BoundExceeded):
            log.warning("render of target %s (job %s) stopped: %s", target.id, job.id, outcome.message)
            batch.fail(target, outcome.code, outcome.message)
        elif outcome.manifests is None:
            if outcome.crash:
                log.error("render of target %s (job %s) crashed\n%s", target.id, job.id, outcome.crash)
            batch.fail(target, outcome.code, outcome.message, cacheable=outcome.cacheable)
        else:
            RENDER_SECONDS.observe(outcome.seconds)
            _sign(job, target, request, outcome.manifests, batch)


def _sign(
    job: ClaimedJob,
    target: ClaimedTarget,
    request: RenderRequest,
    manifests: bytes,
    batch: _Batch,
) -> None:
    provenance = RenderProvenance(
        inputs=inputs_of(request, core_version()),
        application=job.application,
        cluster_profile=target.cluster_profile,
        catalog_snapshot=job.snapshot_digest,
        target_id=target.id,
    )
    output = rendered(manifests, provenance)
    batch.rendered[target.id] = output
    batch.results.append(TargetResult(target.id, JobState.SUCCEEDED, output_digest=output.output_digest))


def _sign_batch(signer: Signer, job: ClaimedJob, batch: _Batch) -> None:
    """One signed statement about every output of the batch (``farm.evidence.batch``)."""
    signed = sign_batch(signer, job.id, list(batch.rendered.values()))
    batch.signed = dict(zip(batch.rendered, signed, strict=True))


def give_up_job(storage: Storage, job_id: str, error: BaseException) -> bool:
    """Fail a job whose infrastructure retries ran out, and its open targets, instead of leaving
    it queued forever; finishes its run when it was the last open job. False when the job had
    finished meanwhile."""
    message = f"the job's retries ran out on an infrastructure error: {type(error).__name__}: {error}"
    code = error.code if isinstance(error, ObjectStoreUnavailableError) else RETRIES_EXHAUSTED
    return fail_job(storage, job_id, code, message)


def fail_job(storage: Storage, job_id: str, code: str, message: str) -> bool:
    """Fail a job this worker cannot run (its retries ran out, its signing key is refused) and
    its open targets with ``code``, instead of leaving it queued forever; finishes its run when it
    was the last open job. False when the job had finished meanwhile."""
    message = bound_message(message)
    with session_scope(storage.sessions) as session:
        run_id = fail_open_job(session, job_id, code=code, message=message)
    if run_id is None:
        return False
    log.error("job %s failed: %s", job_id, message)
    finalize_run_if_done(storage, run_id)
    return True
