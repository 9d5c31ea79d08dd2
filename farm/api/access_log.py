"""One log line per API request: method, path, status and duration, with the run id where the
request is about one (a ``/runs/{run_id}`` path, or the run a POST created)."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from fastapi import Request, Response

from farm.logs import job_log_context

log = logging.getLogger("farm.api.access")


async def log_request(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """``app.middleware("http")``: times the request and logs it once it has been answered."""
    started = time.perf_counter()
    status = 500  # an exception that escapes every handler is answered 500 by the server
    try:
        response = await call_next(request)
        status = response.status_code
        return response
    finally:
        fields = {
            "method": request.method,
            "path": request.url.path,
            "status": status,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
        }
        run_id = request.path_params.get("run_id") or getattr(request.state, "run_id", "")
        with job_log_context(run_id=str(run_id or "")):
            log.info("%s %s %d", request.method, request.url.path, status, extra=fields)
