"""The API's error body as its OpenAPI spec documents it: every error, whatever refused the request
(a route, the validation of its parameters, the token, the body's bound), is
``{"error": {"status": …, "detail": …}}`` (``farm.api.security.error_response``), and each route
lists the statuses it may answer with that body."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

ERROR = "Error"
ERROR_SCHEMA: dict[str, Any] = {
    "title": ERROR,
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["status", "detail"],
            "properties": {
                "status": {"type": "integer", "description": "the response's status code"},
                "detail": {
                    "description": "what was wrong: a message, or one item per problem (a "
                    "parameter's: loc, msg, type; a catalog's: a message)",
                    "anyOf": [
                        {"type": "string"},
                        {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "object"}]}},
                    ],
                },
            },
        }
    },
}

REASONS = {
    401: "no valid bearer token (every change; reads when FARM_API_READ_REQUIRES_TOKEN is set)",
    403: "the server has no API token configured (FARM_API_TOKEN)",
    404: "what the path names does not exist",
    409: "the catalog does not load: one item per problem",
    413: "the request body is over its bound",
    415: "the request body is not sent as JSON",
    422: "a parameter or body is not valid (unknown, out of bounds, malformed, ambiguous run id prefix)",
    503: "the database or the object store failed; or (a triggered run) the run is planned but the broker "
    "did not take its jobs",
}
# what every route may answer: the token (when reads need it), its parameters' validation, and
# the database's failure
COMMON = (401, 403, 422, 503)


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a route (or router) answering ``statuses`` with the error body."""
    reference = {"$ref": f"#/components/schemas/{ERROR}"}
    return {
        status: {"description": REASONS[status], "content": {"application/json": {"schema": reference}}}
        for status in statuses
    }


def document_errors(app: FastAPI) -> None:
    """Add the error body's schema to ``app``'s OpenAPI components, where ``error_responses``
    refers to it."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            schema.setdefault("components", {}).setdefault("schemas", {})[ERROR] = ERROR_SCHEMA
        return app.openapi_schema  # type: ignore[return-value]

    app.openapi = openapi  # type: ignore[method-assign]
