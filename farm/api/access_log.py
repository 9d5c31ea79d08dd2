"""One log line per API request: method, path, status and duration, with the run id where the
request is about one (a ``/runs/{run_id}`` path, or the run a POST created)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable

from fastapi import Request, Response

from farm.logs import job_log_context
from farm.metrics import HTTP_SECONDS

log = logging.getLogger("farm.api.access")


_PARAMETER = re.compile(r"\{(\w+)(?::\w+)?\}")


def _route(request: Request) -> str:
    """The template of the route that answered (a mount's prefix), or ``unmatched``. An included
    router's route may know only its own part of the path (``/runs/{run_id}``): the prefix it was
    included under is what precedes that part, filled in, in the request's path."""
    template = getattr(request.scope.get("route"), "path", None)
    if not template:
        return "unmatched"
    params = request.path_params
    filled = _PARAMETER.sub(lambda match: str(params.get(match.group(1), match.group(0))), template)
    path = request.url.path
    return path[: len(path) - len(filled)] + template if path.endswith(filled) else template


async def log_request(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """``app.middleware("http")``: times the request and logs it once it has been answered."""
    started = time.perf_counter()
    status = 500  # an exception that escapes every handler is answered 500 by the server
    try:
        response = await call_next(request)
        status = response.status_code
        return response
    finally:
        seconds = time.perf_counter() - started
        HTTP_SECONDS.labels(request.method, _route(request), str(status)).observe(seconds)
        fields = {
            "method": request.method,
            "path": request.url.path,
            "status": status,
            "duration_ms": round(seconds * 1000, 2),
        }
        run_id = request.path_params.get("run_id") or getattr(request.state, "run_id", "")
        with job_log_context(run_id=str(run_id or "")):
            log.info("%s %s %d", request.method, request.url.path, status, extra=fields)
