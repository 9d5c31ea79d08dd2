"""Keyset paging for the API's lists: an ordering by named columns (the last one unique), and
the rows after a given key. Works alike on SQLite and PostgreSQL (no row-value comparison)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, Select, and_, or_
from sqlalchemy.sql.elements import ColumnElement


@dataclass(frozen=True)
class SortKey:
    """One column of an ordering: the row attribute it is read from, the column, the direction."""

    name: str
    column: ColumnElement[Any]
    descending: bool = False


Ordering = tuple[SortKey, ...]


def after_key(ordering: Ordering, key: Sequence[Any]) -> ColumnElement[bool]:
    """Rows strictly after ``key`` in ``ordering``: (a > x) or (a = x and b > y) or …"""
    alternatives = []
    for index, sort in enumerate(ordering):
        equal = [earlier.column == value for earlier, value in zip(ordering[:index], key, strict=False)]
        beyond = sort.column < key[index] if sort.descending else sort.column > key[index]
        alternatives.append(and_(*equal, beyond))
    return or_(*alternatives)


def keyset_page(
    statement: Select[Any], ordering: Ordering, after: Sequence[Any] | None, limit: int
) -> Select[Any]:
    """``statement`` ordered by ``ordering``, from the row after ``after`` (None: the first), at
    most ``limit`` rows."""
    if after is not None:
        statement = statement.where(after_key(ordering, after))
    order = [sort.column.desc() if sort.descending else sort.column.asc() for sort in ordering]
    return statement.order_by(*order).limit(limit)


def key_of(ordering: Ordering, row: Any) -> list[Any]:
    """The key of ``row`` in ``ordering`` (read by attribute name)."""
    return [getattr(row, sort.name) for sort in ordering]


def comparable(sort: SortKey, value: Any) -> bool:
    """Whether both databases can compare ``value`` with ``sort``'s column (a key read from a
    client's cursor): an integer within the column's range (32 bits, or 64 for a big one), text
    holding no NUL and no lone surrogate (PostgreSQL's text holds neither)."""
    if isinstance(value, int) and not isinstance(value, bool):
        bits = 64 if isinstance(sort.column.type, BigInteger) else 32
        return -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return False
        return "\x00" not in value
    return True
