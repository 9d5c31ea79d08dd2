"""Strict requests: unknown query parameters are refused once, for every route, instead of
silently ignored; path parameters are bounded by type; error details are bounded."""

from __future__ import annotations

import email.message
from typing import Annotated

from fastapi import HTTPException, Path, Request
from fastapi.routing import APIRoute
from pydantic import AfterValidator

from farm.core.errors import bound_message


def declared_query_names(route: APIRoute) -> set[str]:
    names: set[str] = set()
    for param in route.dependant.query_params:
        names.add(param.alias or param.name)
    for dependency in route.dependant.dependencies:
        names.update(param.alias or param.name for param in dependency.query_params)
    return names


async def refuse_unknown_query(request: Request) -> None:
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    unknown = sorted(set(request.query_params) - declared_query_names(route))
    if unknown:
        raise HTTPException(
            status_code=422,
            detail=[
                {"loc": ["query", name], "msg": "unknown query parameter", "type": "extra_forbidden"}
                for name in unknown
            ],
        )


async def refuse_nul_in_query(request: Request) -> None:
    """A query value holding a NUL character is refused (PostgreSQL's text cannot hold one: as a
    filter it failed the query)."""
    holding = sorted({name for name, value in request.query_params.multi_items() if "\x00" in value})
    if holding:
        raise HTTPException(
            status_code=422,
            detail=[
                {
                    "loc": ["query", name],
                    "msg": "a query value may not hold a NUL character",
                    "type": "value_error",
                }
                for name in holding
            ],
        )


def _is_json(content_type: str) -> bool:
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


async def require_json_body(request: Request) -> None:
    """A body sent as another media type than JSON is refused with 415 naming it (it was read as
    bytes and refused as "not a valid dictionary"); a body without a content type is read as JSON."""
    content_type = request.headers.get("content-type")
    if content_type and not _is_json(content_type):
        raise HTTPException(
            status_code=415,
            detail=f"the body must be JSON (content-type: application/json), not {content_type.split(';')[0]}",
        )


# Path parameters, bounded before any of them reaches a query: an id as the store writes it
# (uuid hex), a digest (``sha256:`` and hex, or bare hex), an application or cluster name, and a
# qualification subject id within the store's 32-bit integer column.
RunId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
Digest = Annotated[
    str,
    Path(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9:_-]+$"),
    AfterValidator(lambda digest: digest.removeprefix("sha256:") or digest),  # stored as bare hex
]
Name = Annotated[str, Path(min_length=1, max_length=253, pattern=r"^[^\x00-\x1f\x7f]+$")]
SubjectId = Annotated[int, Path(ge=1, le=2**31 - 1)]

MAX_DETAIL_CHARS = 1000  # characters of one error string; quoted values are cut far shorter


def bounded_detail(detail: object) -> object:
    """An error's detail with every string bounded: a quoted value over 256 characters is cut to
    its first 100 and its length (``bound_message``), a string over ``MAX_DETAIL_CHARS`` is cut, so
    an error never echoes a whole request value."""
    if isinstance(detail, str):
        text = bound_message(detail)
        return (
            text if len(text) <= MAX_DETAIL_CHARS else f"{text[:MAX_DETAIL_CHARS]}… ({len(text)} characters)"
        )
    if isinstance(detail, list | tuple):
        return [bounded_detail(item) for item in detail]
    if isinstance(detail, dict):
        return {key: bounded_detail(value) for key, value in detail.items()}
    return detail
