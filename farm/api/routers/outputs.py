"""Outputs: the latest output of a target, any output by digest with its provenance and signature."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel

from farm.api.errors import COMMON, error_responses
from farm.api.paging import decode_cursor, encode_cursor, link_next, page_of
from farm.api.run_ids import ResolvedRunA, ResolvedRunB
from farm.api.strict import Digest, Name
from farm.evidence.keys import load_configured_trust
from farm.evidence.provenance import RenderProvenance
from farm.fleet.diff import unified_output_diff
from farm.fleet.queries import latest_output
from farm.store.audit import check_output
from farm.store.context import Storage
from farm.store.db import read_scope
from farm.store.queries import NEWEST_FIRST, RUN_ORDERINGS, output_known, output_size, target_history

router = APIRouter(tags=["outputs"], responses=error_responses(*COMMON))


class YamlResponse(Response):
    """An output's bytes: the spec documents the route's body as YAML text, not JSON."""

    media_type = "application/yaml"


class DiffResponse(Response):
    """A unified diff: the spec documents the route's body as diff text, not JSON."""

    media_type = "text/x-diff"


@router.get(
    "/targets/{application}/{cluster}/output", response_class=YamlResponse, responses=error_responses(404)
)
def target_latest_output(request: Request, application: Name, cluster: Name) -> Response:
    try:
        content = latest_output(request.app.state.storage, application, cluster)
    except LookupError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    return YamlResponse(content)


@router.get("/outputs/{digest}", response_class=YamlResponse, responses=error_responses(404))
def output_by_digest(request: Request, digest: Digest) -> Response:
    """Any stored output by its content digest (``sha256:<hex>``)."""
    storage = request.app.state.storage
    with read_scope(storage.sessions) as session:
        known = output_known(session, digest)
    if not known:
        raise HTTPException(status_code=404, detail=f"no output {digest}")
    return YamlResponse(storage.objects.get(digest))


class SignatureFailure(BaseModel):
    code: str
    message: str


class Provenance(BaseModel):
    evidence_id: int
    envelope_digest: str  # the envelope that vouches: its job's batch envelope, or the record's own
    subject_index: int | None = None  # this output's subject in a batch statement
    signer_keyid: str
    statement: dict[str, str] | None  # what the signed statement says; None when it is unreadable


class OutputEvidence(BaseModel):
    digest: str
    size: int
    signature: str  # "valid" or "invalid"
    failures: list[SignatureFailure]
    provenance: list[Provenance]


def _statement(provenance: RenderProvenance | None) -> dict[str, str] | None:
    if provenance is None:
        return None
    inputs = provenance.inputs
    return {
        "application": provenance.application,
        "cluster": provenance.cluster_profile,
        "selection": inputs.selection,
        "catalog_snapshot": provenance.catalog_snapshot,
        "target_id": provenance.target_id,
        "action_key": provenance.action_key,
        "core_version": inputs.core_version,
        "request_digest": inputs.request_digest,
        "application_digest": inputs.application_digest,
        "values_digest": inputs.values_digest,
        "cluster_profile_digest": inputs.cluster_profile_digest,
    }


def output_evidence(storage: Storage, digest: str) -> OutputEvidence:
    """The checks of ``farm verify --output`` on one output, and the provenance its envelopes state.
    HTTPException 404 for a digest that is no recorded output."""
    trusted = load_configured_trust(storage.settings)
    with read_scope(storage.sessions) as session:
        if not output_known(session, digest):
            raise HTTPException(status_code=404, detail=f"no output {digest}")
        checked = check_output(session, storage.objects, trusted, digest)
        size = output_size(session, digest)
    return OutputEvidence(
        digest=digest,
        size=size,
        signature="invalid" if checked.failures else "valid",
        failures=[
            SignatureFailure(code=f.code, message=f"{f.target}: {f.message}") for f in checked.failures
        ],
        provenance=[
            Provenance(
                evidence_id=record.id,
                envelope_digest=record.batch_envelope or record.envelope_digest,
                subject_index=record.subject_index,
                signer_keyid=record.signer_keyid,
                statement=_statement(provenance),
            )
            for record, provenance in checked.records
        ],
    )


@router.get("/outputs/{digest}/evidence", responses=error_responses(404))
def output_provenance(request: Request, digest: Digest) -> OutputEvidence:
    """One output's signature status (the DSSE envelopes verified as ``farm verify`` does, with
    the reason when invalid) and the provenance each signed statement records."""
    return output_evidence(request.app.state.storage, digest)


@router.get(
    "/runs/{run_a}/diff/{run_b}/targets/{application}/{cluster}",
    response_class=DiffResponse,
    responses=error_responses(404),
)
def target_output_diff(
    request: Request, run_a: ResolvedRunA, run_b: ResolvedRunB, application: Name, cluster: Name
) -> Response:
    """The unified diff of one target's output between two runs (what ``farm diff -u`` prints)."""
    try:
        text = unified_output_diff(request.app.state.storage, run_a, run_b, (application, cluster))
    except LookupError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    return DiffResponse(text)


class HistoryItem(BaseModel):
    run_id: str
    run_created_at: datetime
    target_id: str
    state: str
    output_digest: str | None
    error_code: str | None
    error_message: str | None


@router.get("/targets/{application}/{cluster}/history", responses=error_responses(404))
def history_of_target(
    request: Request,
    response: Response,
    application: Name,
    cluster: Name,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: str | None = None,
    sort: Literal["-created_at", "created_at"] = NEWEST_FIRST,
) -> list[HistoryItem]:
    """One target's results across runs, newest first by default; 404 when no run ever had it;
    the ``Link`` header names the next page."""
    ordering = RUN_ORDERINGS[sort]
    after = decode_cursor(cursor, sort, ordering)
    with read_scope(request.app.state.storage.sessions) as session:
        rows, last = page_of(target_history(session, application, cluster, limit + 1, after, sort), limit)
    link_next(request, response, encode_cursor(sort, ordering, last[0]) if last is not None else None)
    if not rows and after is None:
        raise HTTPException(status_code=404, detail=f"no run has target {application}/{cluster}")
    return [
        HistoryItem(
            run_id=run.id,
            run_created_at=run.created_at,
            target_id=t.target_id,
            state=t.state,
            output_digest=t.output_digest,
            error_code=t.error_code,
            error_message=t.error_message,
        )
        for run, t in rows
    ]
