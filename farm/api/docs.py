"""``/docs``: Swagger UI served from the installed ``fastapi-offline`` package, never a CDN.

FastAPI's own docs page loads Swagger UI from a CDN and starts it with an inline script; the first
fails without internet and the second is refused by the pages' content security policy. This page
loads the same UI from package data and starts it from ``/static/swagger-init.js``.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request
from starlette.responses import HTMLResponse

SWAGGER_ASSETS = Path(str(files("fastapi_offline") / "static"))
ASSETS_URL = "/static/docs"

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} API</title>
<link rel="stylesheet" href="{assets}/swagger-ui.css">
<link rel="icon" href="{assets}/favicon.png">
</head>
<body>
<div id="swagger-ui" data-openapi="{openapi}"></div>
<script src="{assets}/swagger-ui-bundle.js"></script>
<script src="/static/swagger-init.js"></script>
</body>
</html>
"""


def add_docs(app: FastAPI) -> None:
    """Serve Swagger UI at ``/docs`` over ``app.openapi_url``, its assets under ``ASSETS_URL``.
    Mounted before ``/static`` so that mount does not take these paths."""
    page = PAGE.format(title=app.title, assets=ASSETS_URL, openapi=app.openapi_url)

    async def docs(_: Request) -> HTMLResponse:
        return HTMLResponse(page)

    app.mount(ASSETS_URL, StaticFiles(directory=str(SWAGGER_ASSETS)), name="swagger-ui")
    app.add_route("/docs", docs, include_in_schema=False)
