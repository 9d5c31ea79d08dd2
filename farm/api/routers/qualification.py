"""Qualification: the board of subjects, one subject's timeline, trigger a qualification."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from pydantic import BaseModel, ConfigDict

from farm.api.background import start_in_background
from farm.api.errors import COMMON, error_responses
from farm.api.paging import decode_cursor, encode_cursor, link_next, page_of
from farm.api.routers.snapshots import DocumentDiff
from farm.api.security import require_token
from farm.api.strict import SubjectId, require_json_body
from farm.catalog import CatalogError, load_catalog
from farm.execution.executors import CELERY, LOCAL, executor_for, uses_celery
from farm.fleet.service import Trigger, qualify
from farm.qualification import service
from farm.qualification.drift import drifted_documents
from farm.qualification.states import STALE
from farm.qualification.subjects import SubjectSyntaxError, format_subject, parse_subject
from farm.store import qualification as records
from farm.store.context import Storage
from farm.store.db import read_scope
from farm.store.models import QualificationEvent, QualificationEvidence, QualificationSubject, utcnow

router = APIRouter(tags=["qualification"], responses=error_responses(*COMMON))


class Subject(BaseModel):
    id: int
    subject: str  # CLUSTER[:PROFILE=VALUE], as the CLI and the board write it
    cluster: str
    selection: str  # "name=value", or "" for an unprofiled ClusterProfile
    state: str
    reason: str
    since: datetime
    current_evidence_id: int | None


class TimelineEntry(BaseModel):
    at: datetime
    kind: Literal["run", "evidence", "transition"]
    summary: str
    run_id: str | None = None  # the fleet run that rendered the subject's targets
    envelope_digest: str | None = None
    current: bool = False
    # a transition to stale: the subject's documents that changed since its evidence, key by key
    drift: list[DocumentDiff] = []


class SubjectTimeline(BaseModel):
    subject: Subject
    entries: list[TimelineEntry]  # oldest first


class QualifyBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    catalog: str
    subjects: list[str] | None = None  # CLUSTER[:PROFILE=VALUE]; default every subject


class QualifyAccepted(BaseModel):
    catalog: str
    subjects: list[str]


def _subject(row: QualificationSubject) -> Subject:
    return Subject(
        id=row.id,
        subject=format_subject(row.cluster_profile, row.selection),
        cluster=row.cluster_profile,
        selection=row.selection,
        state=row.state,
        reason=row.reason,
        since=row.since,
        current_evidence_id=row.current_evidence_id,
    )


def board(storage: Storage) -> list[Subject]:
    with read_scope(storage.sessions) as session:
        return [_subject(row) for row in records.subjects(session)]


def _evidence_before(
    evidence: list[QualificationEvidence], event: QualificationEvent
) -> QualificationEvidence | None:
    earlier = [e for e in evidence if e.attested_at.replace(tzinfo=None) <= event.at.replace(tzinfo=None)]
    return max(earlier, key=lambda e: (e.attested_at.replace(tzinfo=None), e.id), default=None)


def _drift(
    storage: Storage, cluster: str, event: QualificationEvent, evidence: QualificationEvidence | None
) -> list[DocumentDiff]:
    """For a transition to stale: what changed in the subject's documents since its evidence."""
    if event.to_state != STALE or evidence is None or event.snapshot_digest is None:
        return []
    changes = drifted_documents(storage, cluster, evidence.run_id, event.snapshot_digest)
    return [DocumentDiff.model_validate(change.as_json()) for change in changes]


def subject_timeline(storage: Storage, subject_id: int) -> SubjectTimeline:
    """HTTPException 404 when no subject has this id."""
    with read_scope(storage.sessions) as session:
        row = records.subject_by_id(session, subject_id)
        if row is None:
            raise HTTPException(status_code=404, detail=f"no qualification subject {subject_id}")
        found = records.timeline(session, row)
        entries = [
            TimelineEntry(at=run.created_at, kind="run", summary=f"qualification run {run.state}")
            for run in found.runs
        ]
        entries += [
            TimelineEntry(
                at=evidence.attested_at,
                kind="evidence",
                summary=f"signed by {evidence.signer_keyid[:16]} on core {evidence.core_version}",
                run_id=evidence.run_id,
                envelope_digest=evidence.envelope_digest,
                current=evidence.id == row.current_evidence_id,
            )
            for evidence in found.evidence
        ]
        transitions = [(event, _evidence_before(found.evidence, event)) for event in found.events]
        subject = _subject(row)
    entries += [
        TimelineEntry(
            at=event.at,
            kind="transition",
            summary=f"{event.from_state} → {event.to_state}"
            + (f" ({event.reason})" if event.reason else "")
            + f" by {event.cause}",
            drift=_drift(storage, subject.cluster, event, evidence),
        )
        for event, evidence in transitions
    ]
    order = {"run": 0, "evidence": 1, "transition": 2}
    entries.sort(key=lambda entry: (entry.at.replace(tzinfo=None), order[entry.kind]))
    return SubjectTimeline(subject=subject, entries=entries)


SubjectSort = Literal["subject", "state", "-since"]


@router.get("/qualification")
def list_subjects(
    request: Request,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=5_000)] = 500,
    cursor: str | None = None,
    sort: SubjectSort = "subject",
) -> list[Subject]:
    """Subjects with their state, reason and since (the board of ``farm qualification``), by
    subject, state or latest change; the ``Link`` header names the next page."""
    ordering = records.SUBJECT_ORDERINGS[sort]
    after = decode_cursor(cursor, sort, ordering)
    with read_scope(request.app.state.storage.sessions) as session:
        rows, last = page_of(records.subjects_page(session, sort, after, limit + 1), limit)
        subjects = [_subject(row) for row in rows]
        link_next(request, response, encode_cursor(sort, ordering, last) if last is not None else None)
    return subjects


@router.get("/qualification/{subject_id}", responses=error_responses(404))
def get_subject(request: Request, subject_id: SubjectId) -> SubjectTimeline:
    """One subject and its timeline of qualification runs, signed evidence and transitions."""
    return subject_timeline(request.app.state.storage, subject_id)


def _parse_subject(text: str) -> tuple[str, str]:
    try:
        return parse_subject(text)
    except SubjectSyntaxError as error:
        raise HTTPException(
            status_code=422, detail=[{"loc": ["body", "subjects"], "msg": str(error)}]
        ) from None


@router.post(
    "/qualification",
    status_code=202,
    dependencies=[Depends(require_token), Depends(require_json_body)],
    responses=error_responses(404, 409, 413, 415),
)
def trigger_qualification(request: Request, body: QualifyBody) -> QualifyAccepted:
    """Qualify subjects (``CLUSTER[:PROFILE=VALUE]``) of a configured catalog (named by its fleet
    name) through the fleet-run owner, as ``farm qualify`` does: on the Celery workers' queue when
    the farm has a broker (the server waits for them in a background thread), else on a local pool."""
    folder = request.app.state.catalogs.get(body.catalog)
    if folder is None:
        raise HTTPException(
            status_code=404, detail=f"catalog {body.catalog!r} is not configured on this server"
        )
    try:
        snapshot = load_catalog(folder)
    except CatalogError as exc:
        raise HTTPException(status_code=409, detail=[str(p) for p in exc.problems]) from None
    known = service.subjects_of(snapshot)
    # a subject named twice is qualified once (each name was a qualification run of its own)
    named = [_parse_subject(text) for text in body.subjects] if body.subjects is not None else known
    wanted = list(dict.fromkeys(named))
    unknown = [format_subject(c, s) for c, s in wanted if (c, s) not in known]
    if unknown:
        raise HTTPException(
            status_code=404, detail=f"not a subject of catalog {body.catalog!r}: {', '.join(unknown)}"
        )
    storage: Storage = request.app.state.storage
    since = utcnow()
    start_in_background(
        f"qualification of {len(wanted)} subject(s) of {body.catalog}",
        lambda: qualify(
            storage,
            snapshot,
            wanted,
            executor=executor_for(storage.settings, CELERY if uses_celery(storage.settings) else LOCAL),
            trigger=Trigger.API,
            source=str(folder),
        ),
        lambda _message: service.record_errored(storage, snapshot, wanted, since),
    )
    return QualifyAccepted(catalog=body.catalog, subjects=[format_subject(c, s) for c, s in wanted])
