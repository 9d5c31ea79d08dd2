"""Unknown query parameters are refused once, for every route, instead of silently ignored."""

from __future__ import annotations

from fastapi import HTTPException, Request
from fastapi.routing import APIRoute


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
