"""The fleet runner's entry points used by the CLI and the API: run, list, diff, output."""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass, field
from pathlib import Path

from farm.catalog import CatalogSnapshot, load_catalog
from farm.core.errors import bound_message
from farm.logs import job_log_context
from farm.scheduler.planner import PlannedRun, plan_run
from farm.store import models
from farm.store.context import Storage
from farm.store.db import read_scope
from farm.store.migrate import is_at_head, upgrade
from farm.store.runs import latest_output_digest, newest_runs, targets_of_run

log = logging.getLogger(__name__)


def prepare_database(storage: Storage) -> None:
    """The embedded SQLite database is migrated on first use; PostgreSQL needs `farm db upgrade`."""
    if storage.settings.database_url.startswith("sqlite") and not is_at_head(storage.engine):
        upgrade(storage.settings.database_url)


def plan_catalog(storage: Storage, catalog: str | Path) -> tuple[CatalogSnapshot, PlannedRun]:
    snapshot = load_catalog(catalog, max_file_bytes=storage.settings.catalog_max_file_bytes)
    return snapshot, plan_snapshot(storage, snapshot, catalog)


def plan_snapshot(storage: Storage, snapshot: CatalogSnapshot, catalog: str | Path) -> PlannedRun:
    """Plan a run of ``snapshot``, loaded from the folder ``catalog``."""
    planned = plan_run(
        storage, snapshot, source=str(Path(catalog).resolve()), batch_size=storage.settings.batch_size
    )
    with job_log_context(run_id=planned.run_id):
        log.info(
            "run planned: %d targets of %s, %d cached, %d jobs queued",
            planned.total,
            snapshot.name,
            planned.cached,
            len(planned.queued),
        )
    return planned


@dataclass(frozen=True)
class TargetOutput:
    application: str
    cluster: str
    state: str
    output_digest: str | None
    error_code: str | None = None
    error_message: str | None = None

    @property
    def failed(self) -> bool:
        return self.error_code is not None


def run_outputs(storage: Storage, run_id: str) -> dict[tuple[str, str], TargetOutput]:
    with read_scope(storage.sessions) as session:
        if session.get(models.FleetRun, run_id) is None:
            raise LookupError(f"run {run_id} does not exist")
        return {
            (row.application, row.cluster_profile): TargetOutput(
                row.application,
                row.cluster_profile,
                row.state,
                row.output_digest,
                row.error_code,
                row.error_message,
            )
            for row in targets_of_run(session, run_id)
        }


@dataclass(frozen=True)
class FailedTarget:
    """A target that failed in the second run; ``before`` is what it was in the first:
    ``rendered``, ``failed`` (with ``before_code``) or ``absent``."""

    target: tuple[str, str]
    error_code: str
    message: str
    before: str
    before_code: str | None = None

    def as_json(self) -> dict[str, str | None]:
        return {
            "target": f"{self.target[0]}/{self.target[1]}",
            "error_code": self.error_code,
            "message": self.message,
            "before": self.before,
            "before_error_code": self.before_code,
        }


@dataclass(frozen=True)
class RunDiff:
    """Targets by what happened between two runs. A target that failed in the second run is
    ``failed`` (never ``changed``, ``added`` or ``unchanged``); one that failed in the first and
    rendered in the second is ``fixed``. ``changed`` compares two rendered outputs only."""

    added: list[tuple[str, str]]
    removed: list[tuple[str, str]]
    changed: list[tuple[str, str]]
    unchanged: int
    failed: list[FailedTarget] = field(default_factory=list)
    fixed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        """Anything a CI check should stop on: a difference or a failure."""
        return bool(self.added or self.removed or self.changed or self.failed or self.fixed)


def _failed_target(target: tuple[str, str], after: TargetOutput, before: TargetOutput | None) -> FailedTarget:
    if before is None:
        was = "absent"
    else:
        was = "failed" if before.failed else "rendered"
    return FailedTarget(
        target,
        after.error_code or "unknown",
        bound_message(after.error_message or ""),
        was,
        before.error_code if before is not None else None,
    )


def diff_runs(storage: Storage, run_a: str, run_b: str) -> RunDiff:
    before, after = run_outputs(storage, run_a), run_outputs(storage, run_b)
    failed = [_failed_target(t, after[t], before.get(t)) for t in sorted(after) if after[t].failed]
    failing = {f.target for f in failed}
    added = sorted(set(after) - set(before) - failing)
    removed = sorted(set(before) - set(after))
    common = sorted((set(before) & set(after)) - failing)
    fixed = [t for t in common if before[t].failed]
    changed = [
        t for t in common if not before[t].failed and before[t].output_digest != after[t].output_digest
    ]
    return RunDiff(added, removed, changed, len(common) - len(changed) - len(fixed), failed, fixed)


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
