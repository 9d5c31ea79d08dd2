"""Catalog snapshots: the list, one snapshot, and the diff between two (``farm plan``'s plan)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request, Response
from pydantic import BaseModel

from farm.api.errors import COMMON, error_responses
from farm.api.paging import decode_cursor, encode_cursor, link_next, page_of
from farm.api.strict import Digest
from farm.fleet.preview import REMOVED, snapshot_plan
from farm.store.context import Storage
from farm.store.db import read_scope
from farm.store.queries import (
    NEWEST_FIRST,
    SNAPSHOT_ORDERINGS,
    StoredSnapshot,
    snapshot_name,
    snapshots_page,
    stored_snapshot,
)

router = APIRouter(tags=["snapshots"], responses=error_responses(*COMMON))


class SnapshotItem(BaseModel):
    digest: str
    name: str
    source: str | None
    created_at: datetime
    runs: int


class TargetEntry(BaseModel):
    application: str
    cluster: str
    selection: str
    request_digest: str


class SnapshotDetail(SnapshotItem):
    applications: dict[str, str]
    clusters: dict[str, str]
    profiles: dict[str, str]
    targets: list[TargetEntry]


class Changes(BaseModel):
    added: list[str]
    removed: list[str]
    changed: list[str]


class AffectedTarget(BaseModel):
    application: str
    cluster: str
    causes: list[str]


class KeyDiff(BaseModel):
    path: str  # e.g. spec.capabilities.expose.rendering.ingressClassName
    kind: str  # added | removed | changed
    old: Any
    new: Any


class DocumentDiff(BaseModel):
    path: str  # the document's path in the catalog (default folder names)
    kind: str  # added | removed | changed
    keys: list[KeyDiff]  # for a changed document: every key whose value differs


class SnapshotDiff(BaseModel):
    old: str
    new: str
    applications: Changes
    clusters: Changes
    profiles: Changes
    documents: list[DocumentDiff]  # every input document that differs, with its keys
    unchanged: int  # targets whose request is the same in both snapshots
    affected: list[AffectedTarget]  # every other target of the new snapshot, with its causes
    removed: list[AffectedTarget]
    causes: dict[str, int]  # targets per cause, as ``farm plan --json`` counts them


def _item(stored: StoredSnapshot) -> SnapshotItem:
    return SnapshotItem(
        digest=stored.digest,
        name=stored.name,
        source=stored.source,
        created_at=stored.created_at,
        runs=stored.runs,
    )


SnapshotSort = Literal["-created_at", "created_at"]


def list_snapshots(
    storage: Storage, limit: int, after: list | None = None, sort: str = NEWEST_FIRST
) -> list[SnapshotItem]:
    with read_scope(storage.sessions) as session:
        rows = snapshots_page(session, limit, after, sort)
    return [
        SnapshotItem(
            digest=row.digest,
            name=snapshot_name(storage.objects, row),
            source=row.source,
            created_at=row.created_at,
            runs=runs,
        )
        for row, runs in rows
    ]


def snapshot_detail(storage: Storage, digest: str) -> SnapshotDetail:
    """HTTPException 404 when no snapshot has this digest."""
    with read_scope(storage.sessions) as session:
        stored = stored_snapshot(session, storage.objects, digest)
    if stored is None:
        raise HTTPException(status_code=404, detail=f"no catalog snapshot {digest}")
    targets = [
        TargetEntry(application=app, cluster=cluster, selection=selection, request_digest=request)
        for (app, cluster), (selection, request) in sorted(stored.targets.items())
    ]
    return SnapshotDetail(
        **_item(stored).model_dump(),
        applications=stored.applications,
        clusters=stored.clusters,
        profiles=stored.profiles,
        targets=targets,
    )


def _changes(old: dict[str, str], new: dict[str, str]) -> Changes:
    return Changes(
        added=sorted(set(new) - set(old)),
        removed=sorted(set(old) - set(new)),
        changed=sorted(name for name in set(old) & set(new) if old[name] != new[name]),
    )


def snapshot_diff(storage: Storage, old_digest: str, new_digest: str) -> SnapshotDiff:
    """HTTPException 404 when either snapshot is unknown."""
    try:
        old, new, plan = snapshot_plan(storage, old_digest, new_digest)
    except LookupError as exc:
        raise HTTPException(status_code=404, detail=str(exc).strip("'\"")) from None
    return SnapshotDiff(
        old=old_digest,
        new=new_digest,
        applications=_changes(old.applications, new.applications),
        clusters=_changes(old.clusters, new.clusters),
        profiles=_changes(old.profiles, new.profiles),
        documents=[DocumentDiff.model_validate(document.as_json()) for document in plan.documents],
        unchanged=plan.cached_outputs,
        affected=[
            AffectedTarget(application=t.application, cluster=t.cluster, causes=[str(c) for c in t.causes])
            for t in plan.render
        ],
        removed=[
            AffectedTarget(application=app, cluster=cluster, causes=[REMOVED])
            for app, cluster in plan.removed
        ],
        causes=plan.as_json()["causes"],
    )


@router.get("/snapshots")
def get_snapshots(
    request: Request,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: str | None = None,
    sort: SnapshotSort = NEWEST_FIRST,
) -> list[SnapshotItem]:
    """Recorded catalog snapshots, newest first by default, each with its fleet name and number
    of runs; the ``Link`` header names the next page."""
    ordering = SNAPSHOT_ORDERINGS[sort]
    after = decode_cursor(cursor, sort, ordering)
    items, last = page_of(list_snapshots(request.app.state.storage, limit + 1, after, sort), limit)
    link_next(request, response, encode_cursor(sort, ordering, last) if last is not None else None)
    return list(items)


@router.get("/snapshots/{digest}", responses=error_responses(404))
def get_snapshot(request: Request, digest: Digest) -> SnapshotDetail:
    """One snapshot: its applications, ClusterProfiles and profile declarations by digest, its targets."""
    return snapshot_detail(request.app.state.storage, digest)


@router.get("/snapshots/{old}/diff/{new}", responses=error_responses(404))
def diff_snapshots(request: Request, old: Digest, new: Digest) -> SnapshotDiff:
    """What changed from snapshot ``old`` to ``new``: documents, and the targets affected with the
    causes ``farm plan`` names (the same plan code)."""
    return snapshot_diff(request.app.state.storage, old, new)
