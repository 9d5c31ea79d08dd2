"""The bearer-token rule: changes always need the configured token; reads need it when asked to.

``RequestGate`` applies it before a request body is read: a request that may carry a body (any
method but GET, HEAD and OPTIONS) is refused without its token before a byte of the body is
received, and a body over ``MAX_BODY_BYTES`` is refused with 413, whether or not it declares its
length. Every response carries the security headers of ``SECURITY_HEADERS``.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from fastapi import HTTPException, Request
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Every body the API takes is a catalog name and a list of subjects: a mebibyte is far more.
MAX_BODY_BYTES = 1024 * 1024
BODYLESS_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# The pages load their script and stylesheet from /static; the highlighted YAML carries inline
# style attributes (pygments' noclasses), hence 'unsafe-inline' for styles only.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none';"
    " base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


def _presented_token(headers: Headers) -> str | None:
    header = headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token if scheme.lower() == "bearer" and token else None


def token_refusal(expected: str | None, headers: Headers) -> HTTPException | None:
    """Why a request with ``headers`` is refused when the token ``expected`` is required, or None."""
    if expected is None:
        return HTTPException(
            status_code=403, detail="this server has no API token configured (FARM_API_TOKEN)"
        )
    presented = _presented_token(headers)
    # compared as bytes: compare_digest refuses str with non-ASCII characters (a TypeError, a 500);
    # a header's bytes are its text as latin-1, a configured token's its text as UTF-8
    if presented is None or not hmac.compare_digest(presented.encode("latin-1"), expected.encode()):
        # RFC 9110: a 401 names the scheme it takes
        return HTTPException(
            status_code=401,
            detail="a valid bearer token is required",
            headers={"WWW-Authenticate": 'Bearer realm="farm"'},
        )
    return None


def _check(request: Request) -> None:
    refusal = token_refusal(request.app.state.token, request.headers)
    if refusal is not None:
        raise refusal


async def require_token(request: Request) -> None:
    _check(request)


async def require_read_token(request: Request) -> None:
    if request.app.state.read_requires_token:
        _check(request)


def error_response(status: int, detail: object, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """The API's error body: ``{"error": {"status": …, "detail": …}}``, with ``headers``."""
    return JSONResponse(
        status_code=status, content={"error": {"status": status, "detail": detail}}, headers=headers
    )


class _BodyTooLarge(Exception):
    pass


class RequestGate:
    """ASGI middleware: the token before the body, a bounded body, security headers on every
    response."""

    def __init__(self, app: ASGIApp, max_body_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(send)
        if scope["method"] in BODYLESS_METHODS:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = token_refusal(scope["app"].state.token, headers)
        if refusal is not None:
            await error_response(refusal.status_code, refusal.detail, refusal.headers)(scope, receive, send)
            return
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._too_large(scope, receive, send)
            return
        try:
            body = await self._read_body(receive)
        except _BodyTooLarge:
            await self._too_large(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read_body(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: nothing to answer
                return b"".join(chunks)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _BodyTooLarge()
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        detail = f"the request body is over the {self.max_body_bytes}-byte limit"
        response = error_response(413, detail)
        response.headers["connection"] = "close"
        await response(scope, receive, send)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _with_security_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in SECURITY_HEADERS.items():
                headers.setdefault(name, value)
        await send(message)

    return sending
