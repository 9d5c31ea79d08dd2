"""Whether the database and the object store answer: the API's ``/readyz``."""

from __future__ import annotations

from sqlalchemy import text

from farm.store.context import Storage
from farm.store.db import STORE_ERRORS

# a digest no blob has: asking whether it exists reaches the store without reading anything
_PROBE = "0" * 64


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:300]


def database_problem(storage: Storage) -> str | None:
    """Why the database does not answer a ``SELECT 1``, or None when it does."""
    try:
        with storage.engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except STORE_ERRORS as error:
        return _first_line(error)
    return None


def object_store_problem(storage: Storage) -> str | None:
    """Why the object store does not answer an existence probe, or None when it does."""
    try:
        storage.objects.exists(_PROBE)
    except Exception as error:  # any failure of any backend (boto, botocore, OS) means not ready
        return f"{type(error).__name__}: {_first_line(error)}"
    return None
