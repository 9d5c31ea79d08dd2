"""The application factory."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from prometheus_client import make_asgi_app
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Mount

from farm.api.access_log import log_request
from farm.api.docs import add_docs
from farm.api.errors import document_errors
from farm.api.head import HeadAsGet
from farm.api.health import add_probes
from farm.api.routers import outputs, pages, qualification, runs, snapshots
from farm.api.security import RequestGate, error_response, require_read_token
from farm.api.strict import bounded_detail, refuse_nul_in_query, refuse_unknown_query
from farm.metrics import metrics_registry
from farm.store.context import Storage
from farm.store.db import DATABASE_UNAVAILABLE
from farm.store.health import database_failure, object_store_errors, object_store_failure

ROUTERS = (runs.router, outputs.router, snapshots.router, qualification.router)
STATIC = Path(__file__).resolve().parent / "static"
log = logging.getLogger(__name__)


def _error(status: int, detail: object, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return error_response(status, bounded_detail(detail), headers)


METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _allowed_methods(app: FastAPI, request: Request) -> str | None:
    """Every method some route of ``request``'s path takes (a 405's ``Allow``), or None when none
    does but a mount's (which answers its own 405)."""
    routes = [route for route in app.router.routes if not isinstance(route, Mount)]
    allowed = [
        method
        for method in METHODS
        if any(route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes)
    ]
    if "GET" in allowed and "HEAD" not in allowed:
        allowed.insert(allowed.index("GET") + 1, "HEAD")  # answered as GET (``HeadAsGet``)
    return ", ".join(allowed) or None


def _unreadable_json(exc: StarletteHTTPException) -> str | None:
    """Why a JSON body FastAPI answered "There was an error parsing the body" (400) for could not
    be read, or None for any other error: such a body is malformed JSON, a 422 as every other."""
    cause = exc.__cause__
    if exc.status_code != 400:
        return None
    if isinstance(cause, UnicodeDecodeError):
        return f"the body is not JSON: it is not UTF-8 ({cause.reason} at byte {cause.start})"
    if isinstance(cause, RecursionError):
        return "the body is not JSON this API reads: it is nested too deep"
    return None


def create_app(
    storage: Storage,
    catalogs: dict[str, Path] | None = None,
    token: str | None = None,
    *,
    read_requires_token: bool = False,
) -> FastAPI:
    """The farm's API over ``storage``; ``catalogs`` maps a fleet name to the folder it is read from."""
    app = FastAPI(
        title="farm",
        dependencies=[
            Depends(refuse_unknown_query),
            Depends(refuse_nul_in_query),
            Depends(require_read_token),
        ],
        docs_url=None,  # served by add_docs from package data
        redoc_url=None,
    )
    app.state.storage = storage
    app.state.catalogs = dict(catalogs or {})
    app.state.token = token
    app.state.read_requires_token = read_requires_token

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        unreadable = _unreadable_json(exc)
        if unreadable is not None:
            return _error(422, [{"loc": ["body"], "msg": unreadable, "type": "json_invalid"}])
        headers = exc.headers
        allowed = _allowed_methods(app, request) if exc.status_code == 405 else None
        if allowed is not None:  # Starlette's Allow names the methods of the path's first route only
            headers = {**(headers or {}), "Allow": allowed}
        if not request.url.path.startswith("/api/") and "text/html" in request.headers.get("accept", ""):
            context = {"status": exc.status_code, "detail": bounded_detail(exc.detail)}
            return pages.TEMPLATES.TemplateResponse(
                request, "error.html", context, status_code=exc.status_code, headers=headers
            )
        return _error(exc.status_code, exc.detail, headers)

    @app.exception_handler(DATABASE_UNAVAILABLE)
    async def _database_unavailable(request: Request, exc: Exception) -> Response:
        # a service down, not a bug: a 503 saying so and one log line, not a 500 and a traceback
        detail = database_failure(exc)
        log.error("%s %s: %s", request.method, request.url.path, detail)
        return await _http_error(request, StarletteHTTPException(503, detail))

    async def _object_store_failed(request: Request, exc: Exception) -> Response:
        # its bytes cannot be served: a 503 naming the blob or the store and one log line
        detail = object_store_failure(exc)
        log.error("%s %s: %s", request.method, request.url.path, detail)
        return await _http_error(request, StarletteHTTPException(503, detail))

    for error in object_store_errors(storage):
        app.add_exception_handler(error, _object_store_failed)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> Response:
        detail = [{k: v for k, v in e.items() if k in ("loc", "msg", "type")} for e in exc.errors()]
        return await _http_error(request, StarletteHTTPException(422, detail))  # a page's: an error page

    for router in ROUTERS:
        app.include_router(router, prefix="/api")
    app.include_router(pages.router)
    add_docs(app)
    document_errors(app)
    add_probes(app)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    app.mount("/metrics", make_asgi_app(metrics_registry(storage)))
    # the token and the body bound before anything reads the body; inside the access log
    app.add_middleware(HeadAsGet)
    app.add_middleware(RequestGate)
    app.middleware("http")(log_request)
    return app
