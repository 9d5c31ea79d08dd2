"""``/healthz`` (the process answers) and ``/readyz`` (its database and object store answer).

Plain routes, outside the API's token and query rules: probes carry no token."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse

from farm.store.health import database_problem, object_store_problem


async def healthz(_: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


def readyz(request: Request) -> JSONResponse:
    """200 when the database and the object store answer; 503 naming each that does not."""
    storage = request.app.state.storage
    problems = {"database": database_problem(storage), "object_store": object_store_problem(storage)}
    down = [name for name, problem in problems.items() if problem is not None]
    checks = {name: problem or "ok" for name, problem in problems.items()}
    if down:
        return JSONResponse(
            {"status": f"not ready: {', '.join(down)} down", "checks": checks}, status_code=503
        )
    return JSONResponse({"status": "ready", "checks": checks})


def add_probes(app: FastAPI) -> None:
    app.add_route("/healthz", healthz, include_in_schema=False)
    app.add_route("/readyz", readyz, include_in_schema=False)
