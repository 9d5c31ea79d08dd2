"""Cursor paging of the API's lists: an opaque cursor names the sort it was made for and the key
of the last row served; the next page's URL is in the response's ``Link: <…>; rel="next"`` header.
A cursor that is not one this API gave out, or was made for another sort, is a 422."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from fastapi import HTTPException, Request, Response

from farm.store.paging import Ordering, SortKey, comparable, key_of


def _refuse(message: str) -> HTTPException:
    return HTTPException(status_code=422, detail=[{"loc": ["query", "cursor"], "msg": message}])


def encode_cursor(sort: str, ordering: Ordering, row: Any) -> str:
    """The cursor of the page after ``row`` in ``sort``."""
    key = [{"at": v.isoformat()} if isinstance(v, datetime) else v for v in key_of(ordering, row)]
    return base64.urlsafe_b64encode(json.dumps([sort, key], separators=(",", ":")).encode()).decode()


def _value(raw: Any, key: SortKey) -> Any:
    """The value ``raw`` names for ``key``'s column; ValueError (or OverflowError) when it is not
    one, or is one the database cannot compare: a moment past the ends of UTC, an integer past the
    column's range, text with a NUL or a lone surrogate."""
    if key.column.type.python_type is datetime and isinstance(raw, dict) and isinstance(raw.get("at"), str):
        moment = datetime.fromisoformat(raw["at"])
        return moment if moment.tzinfo is None else moment.astimezone(UTC)  # as the column binds it
    if not isinstance(raw, key.column.type.python_type) or isinstance(raw, bool) or not comparable(key, raw):
        raise ValueError(raw)
    return raw


def decode_cursor(cursor: str | None, sort: str, ordering: Ordering) -> list[Any] | None:
    """The key a cursor names (None without one); HTTPException 422 when it is not a cursor of
    ``sort`` this API gave out."""
    if cursor is None:
        return None
    try:
        made_for, raw = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        if made_for != sort:
            raise _refuse(f"this cursor was made for sort={made_for}: repeat that sort or start without one")
        if not isinstance(raw, list) or len(raw) != len(ordering):
            raise ValueError(cursor)
        return [_value(value, key) for value, key in zip(raw, ordering, strict=True)]
    # RecursionError: JSON nested deeper than the decoder goes (a few kilobytes of "[")
    except (binascii.Error, ValueError, TypeError, OverflowError, RecursionError):
        raise _refuse("not a cursor this API gave out") from None


def page_of(rows: Sequence[Any], limit: int) -> tuple[Sequence[Any], Any | None]:
    """The rows to serve (``limit`` of the ``limit + 1`` fetched) and the last one when more follow."""
    served = rows[:limit]
    return served, (served[-1] if len(rows) > limit else None)


def link_next(request: Request, response: Response, cursor: str | None) -> None:
    """Name the next page in ``response``'s ``Link`` header (RFC 8288) when there is one."""
    if cursor is not None:
        response.headers["link"] = f'<{request.url.include_query_params(cursor=cursor)}>; rel="next"'
