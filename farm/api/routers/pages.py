"""The web dashboard: server-rendered pages over the same queries as the JSON API."""

from __future__ import annotations

from pathlib import Path as FilePath
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer, YamlLexer

from farm.api.paging import decode_cursor, encode_cursor, page_of
from farm.api.routers.outputs import output_evidence
from farm.api.routers.qualification import board, subject_timeline
from farm.api.routers.runs import grid_filter
from farm.api.routers.snapshots import list_snapshots, snapshot_detail, snapshot_diff
from farm.api.run_ids import ResolvedRunId, resolve_or_http_error
from farm.api.strict import Digest, RunId, SubjectId
from farm.fleet.diff import unified_output_diff
from farm.fleet.progress import RunSummary, runs_progress
from farm.fleet.recovery import shown_state
from farm.publish.service import publishes_of
from farm.qualification.states import STATES
from farm.store.db import read_scope
from farm.store.models import FleetRun, JobState
from farm.store.queries import (
    NEWEST_FIRST,
    RUN_ORDERINGS,
    RunGrid,
    previous_run_of_target,
    run_grid,
    runs_page,
    target_of_run,
)
from farm.store.runs import TargetFilter, run_by_id

TEMPLATES = Jinja2Templates(directory=str(FilePath(__file__).resolve().parent.parent / "templates"))
FORMATTER = HtmlFormatter(noclasses=True, style="default")

router = APIRouter(include_in_schema=False)


def _yaml(text: str) -> str:
    return highlight(text, YamlLexer(), FORMATTER)


def _duration(run: FleetRun) -> str:
    if run.finished_at is None:
        return "-"
    seconds = (run.finished_at - (run.started_at or run.created_at)).total_seconds()
    return f"{seconds:.1f} s"


@router.get("/", response_class=HTMLResponse)
def runs_page_view(request: Request, cursor: str | None = None) -> HTMLResponse:
    storage = request.app.state.storage
    ordering = RUN_ORDERINGS[NEWEST_FIRST]
    after = decode_cursor(cursor, NEWEST_FIRST, ordering)
    with read_scope(storage.sessions) as session:
        rows, last = page_of(runs_page(session, 21, after), 20)
    by_id = {run.id: run for run in rows}
    runs = [
        {
            "id": summary.run_id,
            "created_at": by_id[summary.run_id].created_at,
            "kind": by_id[summary.run_id].kind,
            "trigger": by_id[summary.run_id].trigger,
            "fleet": by_id[summary.run_id].fleet or "-",
            "duration": _duration(by_id[summary.run_id]),
            "state": summary.state,
            "total": summary.total,
            "done": summary.done,
            "failed": summary.failed,
            "rendered": summary.counts.get(JobState.SUCCEEDED.value, 0),
            "cached": summary.counts.get(JobState.CACHED.value, 0),
        }
        for summary in runs_progress(storage, list(rows))
    ]
    next_cursor = encode_cursor(NEWEST_FIRST, ordering, last) if last is not None else None
    return TEMPLATES.TemplateResponse(request, "runs.html", {"runs": runs, "next_cursor": next_cursor})


def grid_html(run_id: str, grid: RunGrid) -> Markup:
    """The grid's table body. Built with one join rather than a template loop: a run of 2,000
    targets is 2,000 cells, and per-cell template evaluation was most of the page's time. A run
    has a handful of (state, error code) pairs, so each pair's markup is escaped once."""
    href = f"/runs/{escape(run_id)}/targets/"
    opening: dict[tuple[str, str | None], tuple[str, str]] = {}
    rows = []
    for app, cells in zip(grid.applications, grid.rows(), strict=True):
        tds = []
        for cell in cells:
            if cell is None:
                tds.append("<td></td>")
                continue
            state, code, target_id = cell
            parts = opening.get((state, code))
            if parts is None:
                css = f"cell {escape(state)}{' error' if code else ''}"
                parts = opening[(state, code)] = (
                    f'<td><a class="{css}" href="{href}',
                    f'">{escape(code or state)}</a></td>',
                )
            tds.append(f"{parts[0]}{escape(target_id)}{parts[1]}")
        rows.append(f"<tr><th>{escape(app)}</th>{''.join(tds)}</tr>")
    return Markup("\n".join(rows))


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(
    request: Request, run_id: ResolvedRunId, where: Annotated[TargetFilter, Depends(grid_filter)]
) -> HTMLResponse:
    storage = request.app.state.storage
    with read_scope(storage.sessions) as session:  # the run and its grid in one transaction
        run = run_by_id(session, run_id)
        if run is None:
            raise HTTPException(status_code=404, detail=f"run {run_id} does not exist")
        grid = run_grid(session, run_id, where)
    if where == TargetFilter():  # the grid holds every target: its cells are the run's counts
        summary = RunSummary(run.id, shown_state(run), run.snapshot_digest, grid.counts())
    else:
        summary = runs_progress(storage, [run])[0]
    context = {
        "run": {
            "id": run_id,
            "state": summary.state,
            "total": summary.total,
            "done": summary.done,
            "failed": summary.failed,
        },
        "grid": grid,
        "grid_body": grid_html(run_id, grid),
        "publishes": publishes_of(storage, run_id),
        "states": [s.value for s in JobState],
        "chosen": {
            "state": where.states[0] if where.states else None,
            "application": where.application,
            "cluster": where.cluster_profile,
        },
    }
    return TEMPLATES.TemplateResponse(request, "run.html", context)


@router.get("/runs/{run_id}/targets/{target_id}", response_class=HTMLResponse)
def target_page(request: Request, run_id: RunId, target_id: RunId) -> HTMLResponse:
    run_id = resolve_or_http_error(request, run_id)  # after both parameters are validated
    storage = request.app.state.storage
    with read_scope(storage.sessions) as session:
        target = target_of_run(session, run_id, target_id)
        if target is None:
            raise HTTPException(status_code=404, detail=f"run {run_id} has no target {target_id}")
        previous = previous_run_of_target(session, run_id, target.application, target.cluster_profile)
    highlighted = _yaml(storage.objects.get(target.output_digest).decode()) if target.output_digest else None
    diff = None
    if previous is not None and target.output_digest:  # a failure is not a deleted manifest
        text = unified_output_diff(storage, previous, run_id, (target.application, target.cluster_profile))
        diff = highlight(text, DiffLexer(), FORMATTER) if text else None
    context = {
        "t": target,
        "run_id": run_id,
        "highlighted": highlighted,
        "previous_run": previous,
        "diff": diff,
    }
    return TEMPLATES.TemplateResponse(request, "target.html", context)


@router.get("/outputs/{digest}", response_class=HTMLResponse)
def output_page(request: Request, digest: Digest) -> HTMLResponse:
    storage = request.app.state.storage
    evidence = output_evidence(storage, digest)
    content = storage.objects.get(digest)
    context = {"digest": digest, "evidence": evidence, "highlighted": _yaml(content.decode())}
    return TEMPLATES.TemplateResponse(request, "output.html", context)


@router.get("/qualification", response_class=HTMLResponse)
def qualification_page(request: Request) -> HTMLResponse:
    subjects = board(request.app.state.storage)
    by_state = {state: [s for s in subjects if s.state == state] for state in STATES}
    context = {"by_state": {state: rows for state, rows in by_state.items() if rows}, "total": len(subjects)}
    return TEMPLATES.TemplateResponse(request, "qualification.html", context)


@router.get("/qualification/{subject_id}", response_class=HTMLResponse)
def subject_page(request: Request, subject_id: SubjectId) -> HTMLResponse:
    timeline = subject_timeline(request.app.state.storage, subject_id)
    return TEMPLATES.TemplateResponse(request, "subject.html", {"timeline": timeline})


@router.get("/snapshots", response_class=HTMLResponse)
def snapshots_page_view(request: Request) -> HTMLResponse:
    snapshots = list_snapshots(request.app.state.storage, 50)
    pairs = [(s, snapshots[i + 1] if i + 1 < len(snapshots) else None) for i, s in enumerate(snapshots)]
    return TEMPLATES.TemplateResponse(request, "snapshots.html", {"pairs": pairs})


@router.get("/snapshots/{digest}", response_class=HTMLResponse)
def snapshot_page(request: Request, digest: Digest) -> HTMLResponse:
    detail = snapshot_detail(request.app.state.storage, digest)
    return TEMPLATES.TemplateResponse(request, "snapshot.html", {"s": detail})


@router.get("/snapshots/{old}/diff/{new}", response_class=HTMLResponse)
def snapshot_diff_page(request: Request, old: Digest, new: Digest) -> HTMLResponse:
    diff = snapshot_diff(request.app.state.storage, old, new)
    return TEMPLATES.TemplateResponse(request, "snapshot_diff.html", {"d": diff})
