"""Runs: list (cursor paged), one run with progress, its targets (filtered), trigger a run."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict

from farm.api.background import start_in_background
from farm.api.errors import COMMON, error_responses
from farm.api.paging import decode_cursor, encode_cursor, link_next, page_of
from farm.api.run_ids import ResolvedRunId
from farm.api.security import require_token
from farm.api.strict import require_json_body
from farm.catalog import CatalogError, CatalogSnapshot
from farm.commands._errors import describe
from farm.execution.executors import CELERY, LOCAL, Executor, executor_for, uses_celery
from farm.fleet.planner import PlannedRun
from farm.fleet.progress import fail_run, run_progress
from farm.fleet.recovery import shown_state
from farm.fleet.service import Trigger, finish_fleet_run, plan_catalog
from farm.publish.service import publishes_of
from farm.store.context import Storage
from farm.store.db import read_scope
from farm.store.queries import NEWEST_FIRST, RUN_ORDERINGS, RunGrid, run_grid, runs_page
from farm.store.runs import TARGET_ORDERINGS, TargetFilter, run_by_id, targets_page

router = APIRouter(tags=["runs"], responses=error_responses(*COMMON))


class RunItem(BaseModel):
    id: str
    kind: str
    fleet: str | None
    state: str
    snapshot: str
    trigger: str
    created_at: datetime
    finished_at: datetime | None


class RunsPage(BaseModel):
    runs: list[RunItem]
    next_cursor: str | None


class RunDetail(BaseModel):
    id: str
    state: str
    snapshot: str
    counts: dict[str, int]
    total: int
    done: int
    failed: int


class TargetItem(BaseModel):
    id: str
    application: str
    cluster: str
    selection: str
    state: str
    output_digest: str | None
    error_code: str | None
    error_message: str | None


class TriggerBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    catalog: str


class Triggered(BaseModel):
    run_id: str
    queued_jobs: int


def _storage(request: Request) -> Storage:
    return request.app.state.storage


RunSort = Literal["-created_at", "created_at"]
TargetSort = Literal["application", "cluster", "state"]


@router.get("/runs")
def list_runs(
    request: Request,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
    cursor: str | None = None,
    sort: RunSort = NEWEST_FIRST,
) -> RunsPage:
    """Runs, newest first by default, ``limit`` a page; ``next_cursor`` (and the ``Link`` header)
    name the next page."""
    ordering = RUN_ORDERINGS[sort]
    after = decode_cursor(cursor, sort, ordering)
    with read_scope(_storage(request).sessions) as session:
        rows, last = page_of(runs_page(session, limit + 1, after, sort), limit)
    next_cursor = encode_cursor(sort, ordering, last) if last is not None else None
    link_next(request, response, next_cursor)
    items = [
        RunItem(
            id=r.id,
            kind=r.kind,
            fleet=r.fleet,
            state=shown_state(r),
            snapshot=r.snapshot_digest,
            trigger=r.trigger,
            created_at=r.created_at,
            finished_at=r.finished_at,
        )
        for r in rows
    ]
    return RunsPage(runs=items, next_cursor=next_cursor)


@router.get("/runs/{run_id}", responses=error_responses(404))
def get_run(request: Request, run_id: ResolvedRunId) -> RunDetail:
    try:
        summary = run_progress(_storage(request), run_id)
    except LookupError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    return RunDetail(
        id=summary.run_id,
        state=summary.state,
        snapshot=summary.snapshot_digest,
        counts=summary.counts,
        total=summary.total,
        done=summary.done,
        failed=summary.failed,
    )


class PublishItem(BaseModel):
    id: int
    kind: str
    destination: str  # without credentials
    options: dict[str, str]
    state: str  # pending, failed (farm publish --retry resumes it) or done
    attempts: int
    error: str | None
    reference: dict[str, str]  # git: branch → commit; oci: cluster → REPO/<cluster>@digest
    record: str | None  # the digest of the signed publish record
    updated_at: datetime


@router.get("/runs/{run_id}/publishes", responses=error_responses(404))
def get_run_publishes(request: Request, run_id: ResolvedRunId) -> list[PublishItem]:
    """The publishes of a run (``farm publish``, ``FARM_PUBLISH_TO``), oldest first."""
    with read_scope(_storage(request).sessions) as session:
        if run_by_id(session, run_id) is None:
            raise HTTPException(status_code=404, detail=f"run {run_id} does not exist")
    return [PublishItem(**item) for item in publishes_of(_storage(request), run_id)]


class RunGridBody(BaseModel):
    run_id: str
    applications: list[str]
    clusters: list[str]
    cells: list[tuple[int, int, str, str | None, str]]  # app index, cluster index, state, error, id


def grid_filter(
    state: Annotated[list[str] | None, Query()] = None,
    application: str | None = None,
    cluster: str | None = None,
) -> TargetFilter:
    # an empty value (the page's "any") filters nothing
    return TargetFilter(
        states=tuple(s for s in state or () if s),
        application=application or None,
        cluster_profile=cluster or None,
    )


def load_grid(storage: Storage, run_id: str, where: TargetFilter) -> RunGrid:
    """HTTPException 404 for an unknown run."""
    with read_scope(storage.sessions) as session:
        if run_by_id(session, run_id) is None:
            raise HTTPException(status_code=404, detail=f"run {run_id} does not exist")
        return run_grid(session, run_id, where)


@router.get("/runs/{run_id}/grid", response_model=RunGridBody, responses=error_responses(404))
def get_grid(
    request: Request, run_id: ResolvedRunId, where: Annotated[TargetFilter, Depends(grid_filter)]
) -> Response:
    """A run's application × cluster grid, compact: names once, one [app, cluster, state, error
    code, target id] cell per target (the run page's data; all targets' details: ``/targets``)."""
    grid = load_grid(_storage(request), run_id, where)
    body = {
        "run_id": run_id,
        "applications": grid.applications,
        "clusters": grid.clusters,
        "cells": grid.cells,
    }
    # the cells are plain str/int values from SQL: serialized directly, not validated cell by cell
    return Response(json.dumps(body, separators=(",", ":")), media_type="application/json")


@router.get("/runs/{run_id}/targets", response_model=list[TargetItem], responses=error_responses(404))
def list_targets(
    request: Request,
    run_id: ResolvedRunId,
    state: Annotated[list[str] | None, Query()] = None,
    error_code: str | None = None,
    application: str | None = None,
    cluster: str | None = None,
    failed: bool = False,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 5_000,
    cursor: str | None = None,
    sort: TargetSort = "application",
) -> Response:
    """A run's targets, filtered, sorted by application (then cluster), cluster or state; a page
    holds ``limit``, and the ``Link`` header names the next."""
    ordering = TARGET_ORDERINGS[sort]
    after = decode_cursor(cursor, sort, ordering)
    where = TargetFilter(
        states=tuple(state or ()),
        error_code=error_code,
        application=application,
        cluster_profile=cluster,
        failed_only=failed,
    )
    storage = _storage(request)
    with read_scope(storage.sessions) as session:
        if run_by_id(session, run_id) is None:
            raise HTTPException(status_code=404, detail=f"run {run_id} does not exist")
        rows, last = page_of(targets_page(session, run_id, where, sort, after, limit + 1), limit)
    items = [
        {
            "id": r.target_id,
            "application": r.application,
            "cluster": r.cluster_profile,
            "selection": r.selection,
            "state": r.state,
            "output_digest": r.output_digest,
            "error_code": r.error_code,
            "error_message": r.error_message,
        }
        for r in rows
    ]
    # rows of plain SQL values, serialized directly: validating 2,000 models cost more than the query
    response = Response(json.dumps(items, separators=(",", ":")), media_type="application/json")
    link_next(request, response, encode_cursor(sort, ordering, last) if last is not None else None)
    return response


def _finish_or_503(
    storage: Storage, snapshot: CatalogSnapshot, planned: PlannedRun, executor: Executor
) -> None:
    """Send the run's jobs to the Celery workers and apply the after-run steps; a broker that
    cannot take them is a 503 saying that the run is planned and its jobs stay queued for
    ``farm reconcile`` to send."""
    try:
        finish_fleet_run(storage, snapshot, planned, executor, trigger=Trigger.API)
    except Exception as error:
        message = describe(error)
        if message is None:
            raise
        raise HTTPException(
            status_code=503,
            detail=f"run {planned.run_id} is planned but its jobs could not be sent: {message}; they stay "
            "queued: farm reconcile sends them once the broker is back",
        ) from None


@router.post(
    "/runs",
    status_code=202,
    dependencies=[Depends(require_token), Depends(require_json_body)],
    responses=error_responses(404, 409, 413, 415),
)
def trigger_run(request: Request, body: TriggerBody) -> Triggered:
    """Start a fleet run of a configured catalog (named by its fleet name) through the fleet-run
    owner, as ``farm run`` does (after-run steps included): its jobs go to the Celery workers when
    the farm has a broker, else to a local pool in a background thread."""
    folder = request.app.state.catalogs.get(body.catalog)
    if folder is None:
        raise HTTPException(
            status_code=404, detail=f"catalog {body.catalog!r} is not configured on this server"
        )
    storage = _storage(request)
    try:
        snapshot, planned = plan_catalog(storage, folder, trigger=Trigger.API)
    except CatalogError as exc:
        raise HTTPException(status_code=409, detail=[str(p) for p in exc.problems]) from None
    request.state.run_id = planned.run_id  # for the request's log line
    # the executor's own checks (the signing key) fail the run's jobs, recorded, as any failure of
    # a run the API started in the background
    executor = executor_for(storage.settings, CELERY if uses_celery(storage.settings) else LOCAL)
    if executor.blocking:
        start_in_background(
            f"run {planned.run_id}",
            lambda: finish_fleet_run(storage, snapshot, planned, executor, trigger=Trigger.API),
            lambda message: fail_run(storage, planned.run_id, message),
        )
    else:
        _finish_or_503(storage, snapshot, planned, executor)
    return Triggered(run_id=planned.run_id, queued_jobs=len(planned.queued))
