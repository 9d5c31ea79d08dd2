"""The bearer-token rule: changes always need the configured token; reads need it when asked to."""

from __future__ import annotations

import hmac

from fastapi import HTTPException, Request


def _presented_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token if scheme.lower() == "bearer" and token else None


def _check(request: Request) -> None:
    expected: str | None = request.app.state.token
    if expected is None:
        raise HTTPException(
            status_code=403, detail="this server has no API token configured (FARM_API_TOKEN)"
        )
    presented = _presented_token(request)
    if presented is None or not hmac.compare_digest(presented, expected):
        raise HTTPException(status_code=401, detail="a valid bearer token is required")


async def require_token(request: Request) -> None:
    _check(request)


async def require_read_token(request: Request) -> None:
    if request.app.state.read_requires_token:
        _check(request)
