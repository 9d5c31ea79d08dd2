"""Planning a fleet run: one job per target, cache hits recorded as ``cached`` at once."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import insert

from farm.catalog import CatalogSnapshot
from farm.scheduler.fingerprint import core_version
from farm.scheduler.keys import target_action_key
from farm.scheduler.progress import finalize_run_if_done
from farm.scheduler.snapshots import persist_snapshot
from farm.store import models
from farm.store.context import Storage
from farm.store.db import session_scope
from farm.store.models import JobState, RunState, new_id, utcnow
from farm.store.repository import queue_jobs


@dataclass(frozen=True)
class PlannedRun:
    run_id: str
    snapshot_digest: str
    queued: list[tuple[str, str]]  # (job id, expected action key) of the jobs to execute
    cached: int
    total: int


def _cache_hits(session, keys: list[str]) -> dict[str, str]:
    hits: dict[str, str] = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        rows = session.query(
            models.ActionCacheEntry.action_key, models.ActionCacheEntry.output_digest
        ).filter(models.ActionCacheEntry.action_key.in_(chunk))
        hits.update(dict(rows.all()))
    return hits


def plan_run(
    storage: Storage, snapshot: CatalogSnapshot, *, source: str, trigger: str = "manual"
) -> PlannedRun:
    """Record a run with one job per target and move the jobs that need rendering to ``queued``.

    Everything is committed before this returns, so jobs can be enqueued safely afterwards.
    """
    keys = {target: target_action_key(snapshot, target) for target in snapshot.targets}
    run_id = new_id()
    now = utcnow()
    with session_scope(storage.sessions) as session:
        persist_snapshot(session, storage.objects, snapshot, source)
        hits = _cache_hits(session, sorted(set(keys.values())))
        session.add(
            models.FleetRun(
                id=run_id,
                snapshot_digest=snapshot.digest,
                trigger=trigger,
                core_version=core_version(),
                state=RunState.RUNNING.value,
                created_at=now,
                started_at=now,
            )
        )
        session.flush()
        rows, to_run = [], []
        for target, key in keys.items():
            job_id = new_id()
            hit = hits.get(key)
            rows.append(
                {
                    "id": job_id,
                    "run_id": run_id,
                    "application": target.application,
                    "cluster_profile": target.cluster,
                    "selection": "",
                    "action_key": key,
                    "state": JobState.CACHED.value if hit else JobState.PLANNED.value,
                    "attempts": 0,
                    "output_digest": hit,
                    "created_at": now,
                    "finished_at": now if hit else None,
                }
            )
            if not hit:
                to_run.append((job_id, key))
        if rows:
            session.execute(insert(models.RenderJob), rows)
        for start in range(0, len(to_run), 500):
            queue_jobs(session, [job_id for job_id, _ in to_run[start : start + 500]], now=now)
    if not to_run:
        finalize_run_if_done(storage, run_id)
    return PlannedRun(run_id, snapshot.digest, to_run, len(rows) - len(to_run), len(rows))
