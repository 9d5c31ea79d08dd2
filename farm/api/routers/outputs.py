"""Outputs: the latest output of a target, any output by digest."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

from farm.scheduler.service import latest_output

router = APIRouter(tags=["outputs"])


@router.get("/targets/{application}/{cluster}/output")
def target_latest_output(request: Request, application: str, cluster: str) -> Response:
    try:
        content = latest_output(request.app.state.storage, application, cluster)
    except LookupError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    return Response(content, media_type="application/yaml")
