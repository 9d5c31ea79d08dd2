"""Planning a fleet run as set operations: every target's key, the caches asked in bulk, the
uncached targets grouped by application into batched jobs, all rows written in bulk.

No database round trip per target: the cost of planning grows with the number of targets only
through hashing (each application and ClusterProfile is hashed once) and bulk statements.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from farm.allocation import gc_paused
from farm.catalog import CatalogSnapshot, TargetRequest
from farm.catalog.snapshot import Problem, Target
from farm.core.errors import bound_message
from farm.identity.canonical import canonical_json, sha256_hex
from farm.identity.fingerprint import core_version
from farm.identity.keys import batch_key, request_action_keys
from farm.store.context import Storage
from farm.store.db import Session, session_scope
from farm.store.models import JobState, RunKind, RunState, Trigger, new_id, new_ids, utcnow
from farm.store.objects import ObjectStore
from farm.store.runs import (
    TARGET_COLUMNS,
    CachedFailure,
    cached_failures,
    cached_outputs,
    copied_targets,
    copy_answered_targets,
    discard_targets,
    finalize_run,
    insert_run,
    latest_fleet_run,
)
from farm.store.snapshots import persist_requests, persisting_snapshot

if TYPE_CHECKING:
    from farm.evidence.keys import TrustedSigners

DEFAULT_BATCH_SIZE = 50
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PlannedRun:
    run_id: str
    snapshot_digest: str
    queued: list[tuple[str, str]]  # (job id, batch key) of the jobs to execute
    cached: int
    total: int


class KeyedTarget(NamedTuple):
    """One target of a snapshot, its action key and what the caches hold for that key (a named
    tuple: a plan makes one per target, and a frozen dataclass costs several times as much)."""

    target_request: TargetRequest
    action_key: str
    output_digest: str | None = None
    failure: CachedFailure | None = None

    @property
    def cached(self) -> bool:
        return self.output_digest is not None or self.failure is not None


def key_targets(
    session: Session,
    snapshot: CatalogSnapshot,
    version: str,
    objects: ObjectStore | None = None,
    target_requests: Sequence[TargetRequest] | None = None,
    *,
    trust: Callable[[], TrustedSigners] | None = None,
) -> list[KeyedTarget]:
    """Every target's action key on core ``version``, the action and failure caches asked in bulk.

    With ``objects``, a cache hit whose output blob is gone is no hit: the target re-renders. A
    cached failure is served only when ``trust`` (called once, when there is one) holds the key of
    its signed statement and the statement names its key, code and message; any other failure
    row is no hit either (``farm verify --all`` reports it), and without ``trust`` none is served.

    The one planning path of ``farm run`` (``plan_run``) and ``farm plan`` (``farm.fleet.preview``).
    """
    if target_requests is None:
        chosen, keys = snapshot.target_requests, snapshot.action_keys(version)
    else:
        chosen, keys = (
            target_requests,
            request_action_keys(version, [tr.request.digest for tr in target_requests]),
        )
    keyed = list(zip(chosen, keys, strict=True))
    outputs = cached_outputs(session, keys)
    if objects is not None:
        gone = objects.missing(set(outputs.values()))  # one bulk question, not a call per output
        if gone:
            outputs = {key: digest for key, digest in outputs.items() if digest not in gone}
    failures = vouched_failures(cached_failures(session, [key for key in keys if key not in outputs]), trust)
    return [KeyedTarget(tr, key, outputs.get(key), failures.get(key)) for tr, key in keyed]


def vouched_failures(
    failures: dict[str, CachedFailure], trust: Callable[[], TrustedSigners] | None
) -> dict[str, CachedFailure]:
    """The cached failures whose signed statements verify against the trusted signers."""
    if not failures or trust is None:
        return {}
    from farm.evidence.failure import failure_is_vouched  # cryptography: only with a cached failure

    trusted = trust()
    return {
        key: failure
        for key, failure in failures.items()
        if failure_is_vouched(trusted, key, failure.error_code, failure.error_message, failure.envelope)
    }


_Planned = tuple[TargetRequest, str, list[Any]]  # a target, its action key, its row
_QUEUED, _CACHED, _FAILED = JobState.QUEUED.value, JobState.CACHED.value, JobState.FAILED.value
_JOB_ID = TARGET_COLUMNS.index("job_id")


def _batches(items: list[_Planned], size: int) -> list[list[_Planned]]:
    """The targets grouped by application, each group cut into batches of at most ``size``."""
    by_application: dict[str, list[_Planned]] = {}
    for item in items:
        by_application.setdefault(item[0].target.application, []).append(item)
    batches = []
    for group in by_application.values():
        batches += [group[start : start + size] for start in range(0, len(group), size)]
    return batches


def trusted_signers(storage: Storage) -> TrustedSigners:
    from farm.evidence.keys import load_configured_trust

    return load_configured_trust(storage.settings)


@gc_paused()
def plan_run(
    storage: Storage,
    snapshot: CatalogSnapshot,
    *,
    source: str,
    kind: RunKind = RunKind.FLEET,
    trigger: Trigger = Trigger.CLI,
    batch_size: int = DEFAULT_BATCH_SIZE,
    target_requests: Sequence[TargetRequest] | None = None,
    before_work: Callable[[], None] | None = None,
    owner: str | None = None,
) -> PlannedRun:
    """Record a run: cached targets answered at once, the rest in queued jobs of ``batch_size``.

    ``before_work`` is called when the run has targets to render, before anything is recorded:
    whatever it raises aborts the run with nothing written (the signing key's check).

    Everything is committed before this returns, so the jobs can be enqueued safely afterwards.
    ``target_requests`` limits the run to those targets (a qualification run of one subject).
    ``owner`` is the process executing it (``farm.fleet.owners``; None when its jobs are sent).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size: must be at least 1, got {batch_size}")
    version = core_version()
    run_id, now = new_id(), utcnow()
    run = {
        "id": run_id,
        "snapshot_digest": snapshot.digest,
        "kind": RunKind(kind).value,
        "fleet": snapshot.name,
        "trigger": Trigger(trigger).value,
        "core_version": version,
        "selection_policy": "default",
        "state": RunState.RUNNING.value,
        "created_at": now,
        "started_at": now,
        "owner": owner,
    }
    with session_scope(storage.sessions) as session:
        copied = (
            _copy_earlier_answers(storage, session, snapshot, run)
            if kind == RunKind.FLEET and target_requests is None
            else None
        )
        if copied is not None and copied.targets is None:  # the run is answered
            insert_run(session, run, [], [])
            finalize_run(session, run_id, now=now)
            _count_cache_lookups(hits=copied.count, misses=0)
            return PlannedRun(run_id, snapshot.digest, [], copied.count, copied.count)
        chosen = target_requests if copied is None else copied.rest(snapshot)
        already = 0 if copied is None else copied.count
        packs = snapshot.request_pack_digests
        extra_pack = None if target_requests is None else persist_requests(storage.objects, target_requests)
        targets: list[list[Any]] = []
        to_render: list[_Planned] = []
        refused = 0
        with persisting_snapshot(session, storage.objects, snapshot, source):
            keyed_targets = key_targets(
                session,
                snapshot,
                version,
                storage.objects,
                chosen,
                trust=lambda: trusted_signers(storage),
            )
        problems = snapshot.has_problems
        for (tr, key, output, failure), target_id in zip(
            keyed_targets, new_ids(len(keyed_targets)), strict=True
        ):
            target = tr.target
            problem = snapshot.problem_of(target) if problems else None
            # the row's values in TARGET_COLUMNS order: id, run_id, job_id, application,
            # cluster_profile, selection, request_digest, request_pack, action_key, state,
            # error_code, error_message, output_digest, created_at, finished_at
            if problem is not None:  # the loader refused its application or ClusterProfile: say why
                refused += 1
                state, code, message, finished = _FAILED, problem.code, bound_message(problem.message), now
            elif output is not None:
                state, code, message, finished = _CACHED, None, None, now
            elif failure is not None:
                state, code, message, finished = _CACHED, failure.error_code, failure.error_message, now
            else:
                state, code, message, finished = _QUEUED, None, None, None
            row = [
                target_id,
                run_id,
                None,
                target.application,
                target.cluster,
                target.selection,
                tr.request.digest,
                extra_pack or packs[target.application],
                key,
                state,
                code,
                message,
                output if problem is None else None,
                now,
                finished,
            ]
            if state == _QUEUED:
                to_render.append((tr, key, row))
            targets.append(row)
        if target_requests is None:  # a fleet run: the targets the loader refused on their own
            targets += [_refused_row(run_id, target, problem, now) for target, problem in snapshot.refused]
            refused += len(snapshot.refused)
        jobs = []
        for batch in _batches(to_render, batch_size):
            job = _job_row(run_id, batch, now)
            for _, _, row in batch:
                row[_JOB_ID] = job["id"]
            jobs.append(job)
        if jobs and before_work is not None:
            before_work()
        insert_run(session, run, jobs, targets)
        cached = already + len(targets) - len(to_render) - refused
        _count_cache_lookups(hits=cached, misses=len(to_render))
        if not jobs:
            finalize_run(session, run_id, now=now)
    queued = [(job["id"], job["batch_key"]) for job in jobs]
    return PlannedRun(run_id, snapshot.digest, queued, cached, already + len(targets))


@dataclass(frozen=True)
class _Copied:
    """The target rows a run copied from an earlier run (``_copy_earlier_answers``)."""

    count: int
    # (application, cluster, selection) of each, or None when they are every target of the snapshot
    targets: frozenset[tuple[str, str, str]] | None

    def rest(self, snapshot: CatalogSnapshot) -> list[TargetRequest]:
        """The snapshot's targets no copied row answers, to plan one by one."""
        copied = self.targets or frozenset()
        return [tr for tr in snapshot.target_requests if _target_key(tr.target) not in copied]


def _target_key(target: Target) -> tuple[str, str, str]:
    return (target.application, target.cluster, target.selection)


def _copy_earlier_answers(
    storage: Storage, session: Session, snapshot: CatalogSnapshot, run: dict[str, Any]
) -> _Copied | None:
    """Write the rows of ``run``'s targets that the fleet's last complete run answered and that
    have not changed since, each ``cached`` with what the action cache holds for its key now, in
    one statement (``copy_answered_targets``); None when none is copied.

    Where planning would key every target, ask the cache for each key and build and insert each
    row (at 100,000 targets, most of a run whose catalog barely changed), the earlier run's rows
    are copied for each application whose request pack is the one this snapshot names, on the
    same core version, when the cache still answers their keys (a failure has no cache entry: it
    is planned one by one). A copied row must be the row planning would write: its target one
    of the snapshot's with the same request digest (a pack holds the requests, the snapshot's
    manifest which target has which: an unchanged snapshot needs no check), and its output's blob
    in the store; otherwise nothing is copied. ``targets`` is None when every target of the
    snapshot was copied (the run is answered)."""
    if snapshot.has_problems or snapshot.refused:
        return None
    earlier = latest_fleet_run(session, storage.objects, snapshot.name)
    if earlier is None or earlier.core_version != run["core_version"]:
        return None
    now, total = run["created_at"], len(snapshot.target_requests)
    copied = copy_answered_targets(session, earlier.id, run["id"], snapshot.request_pack_digests, now)
    count = len(copied)
    if count == 0:
        return None
    unchanged = earlier.snapshot_digest == snapshot.digest
    if unchanged and count == total:  # the same manifest: every row is its target's
        targets = None
    else:
        rows = copied_targets(session, run["id"])
        if not unchanged and not _rows_are_the_snapshots(rows, snapshot):
            discard_targets(session, run["id"])
            return None
        targets = frozenset((application, cluster, selection) for application, cluster, selection, *_ in rows)
    if storage.objects.missing(set(copied)):
        discard_targets(session, run["id"])
        return None
    log.info(
        "run %s: %d of its %d targets answered as in run %s%s",
        run["id"],
        count,
        total,
        earlier.id,
        " (the catalog is unchanged)" if unchanged else "",
    )
    return _Copied(count, targets)


def _rows_are_the_snapshots(rows: list[tuple[Any, ...]], snapshot: CatalogSnapshot) -> bool:
    """Whether each copied row (application, cluster, selection, request digest, …) is one of the
    snapshot's targets with the same request digest."""
    requests = {_target_key(tr.target): tr.request.digest for tr in snapshot.target_requests}
    return all(
        requests.get((application, cluster, selection)) == digest
        for application, cluster, selection, digest, _ in rows
    )


def _count_cache_lookups(*, hits: int, misses: int) -> None:
    from farm.metrics import count_cache_lookups  # prometheus_client, only once a run is planned

    count_cache_lookups(hits=hits, misses=misses)


def _refused_row(run_id: str, target: Target, problem: Problem, now: datetime) -> list[Any]:
    """A target the loader refused (its selection names an undeclared profile or value): failed
    from the start, with no request; its key names the target, as no request can be built."""
    key = sha256_hex(canonical_json(["refused", target.application, target.cluster, target.selection]))
    values = {
        "id": new_id(),
        "run_id": run_id,
        "job_id": None,
        "application": target.application,
        "cluster_profile": target.cluster,
        "selection": target.selection,
        "request_digest": None,
        "request_pack": None,
        "action_key": key,
        "state": _FAILED,
        "error_code": problem.code,
        "error_message": bound_message(problem.message),
        "output_digest": None,
        "created_at": now,
        "finished_at": now,
    }
    return [values[name] for name in TARGET_COLUMNS]


def _job_row(run_id: str, batch: list[_Planned], now: datetime) -> dict[str, Any]:
    return {
        "id": new_id(),
        "run_id": run_id,
        "application": batch[0][0].target.application,
        "batch_key": batch_key([key for _, key, _ in batch]),
        "target_count": len(batch),
        "state": JobState.QUEUED.value,
        "attempts": 0,
        "claimed_by": None,
        "created_at": now,
        "queued_at": now,
    }
