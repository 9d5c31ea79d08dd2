"""The fleet runner's entry points used by the CLI and the API: run, list, diff, output."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from farm.catalog import CatalogSnapshot, load_catalog
from farm.scheduler.planner import PlannedRun, plan_run
from farm.store import models
from farm.store.context import Storage
from farm.store.db import read_scope
from farm.store.migrate import upgrade
from farm.store.runs import latest_output_digest, newest_runs, targets_of_run


def prepare_database(storage: Storage) -> None:
    """The embedded SQLite database is migrated on first use; PostgreSQL needs `farm db upgrade`."""
    if storage.settings.database_url.startswith("sqlite"):
        upgrade(storage.settings.database_url)


def plan_catalog(storage: Storage, catalog: str | Path) -> tuple[CatalogSnapshot, PlannedRun]:
    snapshot = load_catalog(catalog)
    planned = plan_run(
        storage, snapshot, source=str(Path(catalog).resolve()), batch_size=storage.settings.batch_size
    )
    return snapshot, planned


@dataclass(frozen=True)
class TargetOutput:
    application: str
    cluster: str
    state: str
    output_digest: str | None
    error_code: str | None = None


def run_outputs(storage: Storage, run_id: str) -> dict[tuple[str, str], TargetOutput]:
    with read_scope(storage.sessions) as session:
        if session.get(models.FleetRun, run_id) is None:
            raise LookupError(f"run {run_id} does not exist")
        return {
            (row.application, row.cluster_profile): TargetOutput(
                row.application, row.cluster_profile, row.state, row.output_digest, row.error_code
            )
            for row in targets_of_run(session, run_id)
        }


def _outcome(output: TargetOutput) -> tuple[bool, str | None]:
    """What a target produced: a cached and a freshly rendered job with one digest are the same."""
    return output.error_code is not None, output.output_digest


@dataclass(frozen=True)
class RunDiff:
    added: list[tuple[str, str]]
    removed: list[tuple[str, str]]
    changed: list[tuple[str, str]]
    unchanged: int


def diff_runs(storage: Storage, run_a: str, run_b: str) -> RunDiff:
    before, after = run_outputs(storage, run_a), run_outputs(storage, run_b)
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    common = sorted(set(before) & set(after))
    changed = [t for t in common if _outcome(before[t]) != _outcome(after[t])]
    return RunDiff(added, removed, changed, len(common) - len(changed))


def unified_output_diff(storage: Storage, run_a: str, run_b: str, target: tuple[str, str]) -> str:
    before, after = run_outputs(storage, run_a)[target], run_outputs(storage, run_b)[target]

    def text(output: TargetOutput) -> list[str]:
        if output.output_digest is None:
            return []
        return storage.objects.get(output.output_digest).decode().splitlines(keepends=True)

    name = f"{target[0]}/{target[1]}"
    return "".join(difflib.unified_diff(text(before), text(after), f"{run_a}/{name}", f"{run_b}/{name}"))


def latest_output(storage: Storage, application: str, cluster: str) -> bytes:
    with read_scope(storage.sessions) as session:
        digest = latest_output_digest(session, application, cluster)
    if digest is None:
        raise LookupError(f"no output for target {application}/{cluster}")
    return storage.objects.get(digest)


def recent_runs(storage: Storage, limit: int = 20) -> list[models.FleetRun]:
    with read_scope(storage.sessions) as session:
        return newest_runs(session, limit)
