"""A run id in an API path or a page's address, as the CLI takes it: a full id, a unique prefix
of one, or ``latest`` (``farm.store.run_ids``). None is a 404; several are a 422 naming them."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request

from farm.api.strict import RunId
from farm.store.db import read_scope
from farm.store.run_ids import AmbiguousRunId, RunIdError, resolve_run_id


def resolve_or_http_error(request: Request, typed: str) -> str:
    """The full id of the run ``typed`` names; HTTPException 404 (none) or 422 (several)."""
    try:
        with read_scope(request.app.state.storage.sessions) as session:
            return resolve_run_id(session, typed)
    except AmbiguousRunId as error:
        raise HTTPException(status_code=422, detail=str(error)) from None
    except RunIdError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None


def _resolved_run_id(request: Request, run_id: RunId) -> str:
    return resolve_or_http_error(request, run_id)


def _resolved_run_a(request: Request, run_a: RunId) -> str:
    return resolve_or_http_error(request, run_a)


def _resolved_run_b(request: Request, run_b: RunId) -> str:
    return resolve_or_http_error(request, run_b)


# the full id of the run the path's ``run_id`` (``run_a``, ``run_b``) names
ResolvedRunId = Annotated[str, Depends(_resolved_run_id)]
ResolvedRunA = Annotated[str, Depends(_resolved_run_a)]
ResolvedRunB = Annotated[str, Depends(_resolved_run_b)]
