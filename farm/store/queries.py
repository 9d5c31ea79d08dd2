"""Read queries of the API (dashboard): paged runs list, outputs, target history, snapshots."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from farm.identity.canonical import digest_of
from farm.store.models import CatalogSnapshot, FleetRun, RenderOutput, RenderTarget, RunKind
from farm.store.objects import ObjectStore
from farm.store.paging import Ordering, SortKey, keyset_page
from farm.store.runs import (
    COMPLETE_RUN_STATES,
    TARGET_ROW_COLUMNS,
    TargetFilter,
    TargetRow,
    count_label,
    filter_targets,
)

NEWEST_FIRST = "-created_at"
OLDEST_FIRST = "created_at"
RUN_ORDERINGS: dict[str, Ordering] = {
    NEWEST_FIRST: (SortKey("created_at", FleetRun.created_at, True), SortKey("id", FleetRun.id, True)),
    OLDEST_FIRST: (SortKey("created_at", FleetRun.created_at), SortKey("id", FleetRun.id)),
}
SNAPSHOT_ORDERINGS: dict[str, Ordering] = {
    NEWEST_FIRST: (
        SortKey("created_at", CatalogSnapshot.created_at, True),
        SortKey("digest", CatalogSnapshot.digest, True),
    ),
    OLDEST_FIRST: (
        SortKey("created_at", CatalogSnapshot.created_at),
        SortKey("digest", CatalogSnapshot.digest),
    ),
}


def runs_page(
    session: Session, limit: int, after: list | tuple | None = None, sort: str = NEWEST_FIRST
) -> list[FleetRun]:
    """Runs in ``sort`` order (``RUN_ORDERINGS``; default newest first), after the key ``after``."""
    return list(session.scalars(keyset_page(select(FleetRun), RUN_ORDERINGS[sort], after, limit)))


def output_known(session: Session, digest: str) -> bool:
    """Whether ``digest`` is a recorded render output (the API never serves other blobs by digest)."""
    return session.get(RenderOutput, digest) is not None


def output_size(session: Session, digest: str) -> int | None:
    """The recorded size of output ``digest`` in bytes (None when no such output is recorded)."""
    row = session.get(RenderOutput, digest)
    return row.size_bytes if row is not None else None


def target_of_run(session: Session, run_id: str, target_id: str) -> TargetRow | None:
    """One target of a run by its id, or None."""
    statement = select(*TARGET_ROW_COLUMNS).where(RenderTarget.run_id == run_id, RenderTarget.id == target_id)
    row = session.execute(statement).first()
    return TargetRow(*row) if row else None


def previous_run_of_target(session: Session, run_id: str, application: str, cluster: str) -> str | None:
    """The newest complete fleet run of the same fleet before ``run_id`` that rendered
    (application, cluster) to an output: never a qualification's partial run, and never a run where
    it failed (a target fixed after a failure is compared with its last rendered output)."""
    run = select(FleetRun.created_at, FleetRun.fleet).where(FleetRun.id == run_id).subquery()
    return session.scalar(
        select(RenderTarget.run_id)
        .join(FleetRun, FleetRun.id == RenderTarget.run_id)
        .where(
            RenderTarget.application == application,
            RenderTarget.cluster_profile == cluster,
            RenderTarget.output_digest.is_not(None),
            FleetRun.created_at < select(run.c.created_at).scalar_subquery(),
            FleetRun.fleet.is_not_distinct_from(select(run.c.fleet).scalar_subquery()),
            FleetRun.kind == RunKind.FLEET.value,
            FleetRun.state.in_(COMPLETE_RUN_STATES),
        )
        .order_by(FleetRun.created_at.desc())
        .limit(1)
    )


def target_history(
    session: Session,
    application: str,
    cluster: str,
    limit: int,
    after: list | None = None,
    sort: str = NEWEST_FIRST,
) -> list[tuple[FleetRun, TargetRow]]:
    """The results of one (application, cluster) across runs, in ``sort`` order of their runs
    (``RUN_ORDERINGS``; default newest first), after the run key ``after``."""
    statement = (
        select(FleetRun, RenderTarget)
        .join(RenderTarget, RenderTarget.run_id == FleetRun.id)
        .where(
            # read run by run: a probe of the unique (run, application, ClusterProfile, selection)
            # index per run, where SQLite's planner would otherwise scan the table (revision 0022)
            RenderTarget.run_id.in_(select(FleetRun.id)),
            RenderTarget.application == application,
            RenderTarget.cluster_profile == cluster,
        )
    )
    statement = keyset_page(statement, RUN_ORDERINGS[sort], after, limit)
    return [
        (
            run,
            TargetRow(
                t.application,
                t.cluster_profile,
                t.selection,
                t.state,
                t.output_digest,
                t.error_code,
                t.error_message,
                t.action_key,
                t.request_digest,
                t.id,
                t.job_id,
                t.request_pack,
            ),
        )
        for run, t in session.execute(statement)
    ]


@dataclass(frozen=True)
class StoredSnapshot:
    """A recorded catalog snapshot as the dashboard shows it: documents and targets by digest."""

    digest: str
    name: str
    source: str | None
    created_at: datetime
    runs: int
    applications: dict[str, str] = field(default_factory=dict)  # name → content digest
    clusters: dict[str, str] = field(default_factory=dict)  # name → ClusterProfile digest
    profiles: dict[str, str] = field(default_factory=dict)  # declaration file → digest
    targets: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)  # → (selection, request)
    request_packs: dict[str, str] = field(default_factory=dict)  # application → its request pack

    def pack_of_request(self) -> dict[str, str | None]:
        """Each target's request digest → the pack holding it (None: a blob of its own)."""
        return {request: self.request_packs.get(app) for (app, _), (_, request) in self.targets.items()}


def snapshots_page(
    session: Session, limit: int, after: list | None = None, sort: str = NEWEST_FIRST
) -> list[tuple[CatalogSnapshot, int]]:
    """Snapshots in ``sort`` order (``SNAPSHOT_ORDERINGS``; default newest first) after the key
    ``after``, each with the number of runs of it."""
    runs = (
        select(FleetRun.snapshot_digest, func.count().label("runs"))
        .group_by(FleetRun.snapshot_digest)
        .subquery()
    )
    statement = select(CatalogSnapshot, func.coalesce(runs.c.runs, 0)).outerjoin(
        runs, runs.c.snapshot_digest == CatalogSnapshot.digest
    )
    statement = keyset_page(statement, SNAPSHOT_ORDERINGS[sort], after, limit)
    return [(row, count) for row, count in session.execute(statement)]


def stored_snapshot(session: Session, objects: ObjectStore, digest: str) -> StoredSnapshot | None:
    """One recorded snapshot with its documents and targets (read from its manifest), or None."""
    row = session.get(CatalogSnapshot, digest)
    if row is None:
        return None
    runs = session.scalar(select(func.count()).where(FleetRun.snapshot_digest == digest)) or 0
    if row.blob_digest is None:  # a snapshot recorded without its manifest (tests, old rows)
        return StoredSnapshot(digest, "", row.source, row.created_at, runs)
    content = json.loads(objects.get(row.blob_digest))
    return StoredSnapshot(
        digest=digest,
        name=content.get("name", ""),
        source=row.source,
        created_at=row.created_at,
        runs=runs,
        applications={name: digest_of(app) for name, app in content["applications"].items()},
        clusters=dict(content["clusters"]),
        profiles=dict(content["profiles"]),
        targets={
            (app, cluster): (selection, request) for app, cluster, selection, request in content["targets"]
        },
        request_packs=dict(content.get("requestPacks", {})),
    )


def snapshot_manifest(session: Session, objects: ObjectStore, digest: str) -> dict | None:
    """The manifest of recorded snapshot ``digest`` (its documents by digest), or None when the
    snapshot is unknown or was recorded without one."""
    row = session.get(CatalogSnapshot, digest)
    if row is None or row.blob_digest is None:
        return None
    return json.loads(objects.get(row.blob_digest))


def snapshot_name(objects: ObjectStore, row: CatalogSnapshot) -> str:
    """The fleet name a snapshot's manifest records ("" when it has none)."""
    return json.loads(objects.get(row.blob_digest)).get("name", "") if row.blob_digest else ""


@dataclass(frozen=True)
class RunGrid:
    """A run's application × cluster grid: names once, then one compact cell per target."""

    applications: list[str]
    clusters: list[str]
    cells: list[tuple[int, int, str, str | None, str]]  # app index, cluster index, state, error, id

    def rows(self) -> list[list[tuple[str, str | None, str] | None]]:
        """The grid as rows of cells (None where the run has no such target)."""
        table: list[list[tuple[str, str | None, str] | None]] = [
            [None] * len(self.clusters) for _ in self.applications
        ]
        for app, cluster, state, error_code, target_id in self.cells:
            table[app][cluster] = (state, error_code, target_id)
        return table

    def counts(self) -> dict[str, int]:
        """The cells by state, cached failures apart under ``cached_failure``: of an unfiltered
        grid, the run's ``target_counts`` without counting its targets a second time."""
        return dict(Counter(count_label(state, error_code) for _, _, state, error_code, _ in self.cells))


UNIT, RECORD = "\x1f", "\x1e"  # separators no name, state, error code or id can hold


def run_grid(session: Session, run_id: str, where: TargetFilter) -> RunGrid:
    """The cells of a run's grid, aggregated in SQL: one row per application holding its cells
    as one string, so 2,000 targets cost 100 rows to fetch and not 2,000."""
    cell = (
        RenderTarget.cluster_profile
        + UNIT
        + RenderTarget.state
        + UNIT
        + func.coalesce(RenderTarget.error_code, "")
        + UNIT
        + RenderTarget.id
    )
    statement = filter_targets(
        select(RenderTarget.application, func.aggregate_strings(cell, RECORD)), run_id, where
    )
    statement = statement.group_by(RenderTarget.application).order_by(RenderTarget.application)
    rows = [
        (app, [entry.split(UNIT) for entry in cells.split(RECORD)])
        for app, cells in session.execute(statement)
    ]
    clusters = {name: index for index, name in enumerate(sorted({c[0] for _, cells in rows for c in cells}))}
    grid_cells = [  # by application; within one, in the order the database aggregated them
        (index, clusters[cluster], state, error_code or None, target_id)
        for index, (_, cells) in enumerate(rows)
        for cluster, state, error_code, target_id in cells
    ]
    return RunGrid([app for app, _ in rows], list(clusters), grid_cells)
