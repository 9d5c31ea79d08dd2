"""``HEAD`` answered as ``GET`` without the body (RFC 9110: a server that answers GET answers HEAD).

FastAPI's routes take only the methods they are declared with, so a ``HEAD`` of any API route or
page was a 405; the probes and the static files (Starlette's own routes) answered it."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    """ASGI middleware: a ``HEAD`` request is routed as ``GET``; its response keeps the status and
    the headers (``content-length`` included) and drops the body."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        routed = {**scope, "method": "GET"}

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.start":
                # routed by now: what routing found, for the access log and the metrics' route label
                for key in ("route", "endpoint", "path_params"):
                    if key in routed:
                        scope[key] = routed[key]
            elif message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app(routed, receive, without_body)
