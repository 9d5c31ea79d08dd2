"""Reads of recorded runs for the CLI: the newest runs, the latest output of a target."""

from __future__ import annotations

from farm.store import models
from farm.store.context import Storage
from farm.store.db import read_scope
from farm.store.runs import latest_output_digest, newest_runs


def latest_output(storage: Storage, application: str, cluster: str) -> bytes:
    with read_scope(storage.sessions) as session:
        digest = latest_output_digest(session, application, cluster)
    if digest is None:
        raise LookupError(f"no output for target {application}/{cluster}")
    return storage.objects.get(digest)


def recent_runs(storage: Storage, limit: int = 20) -> list[models.FleetRun]:
    """The newest runs; a running run whose owner is gone reads ``interrupted`` (the row, detached,
    is never written back)."""
    from farm.fleet.recovery import shown_state

    with read_scope(storage.sessions) as session:
        runs = newest_runs(session, limit)
    for run in runs:
        run.state = shown_state(run)
    return runs
