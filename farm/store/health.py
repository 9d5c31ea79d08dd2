"""Probes of the farm's storage: whether the database and the object store answer (the API's
``/readyz``), and for ``farm doctor`` whether the database is migrated and the bucket present.
Doctor's probes raise driver errors as they come; the caller turns them into one line
(``farm.commands._errors.describe``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import text

from farm.settings import FarmSettings
from farm.store.context import Storage
from farm.store.db import STORE_ERRORS, create_farm_engine
from farm.store.migrate import HEAD_REVISION, current_revision
from farm.store.objects import ObjectStoreError, S3ObjectStore, parse_s3_location, s3_client

# a digest no blob has: asking whether it exists reaches the store without reading anything
_PROBE = "0" * 64


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:300]


def database_problem(storage: Storage) -> str | None:
    """Why the database does not answer a ``SELECT 1``, or None when it does. A SQLite database
    whose file is gone is down: a pooled connection still reads the deleted file (and keeps what
    is written to it from every later process), a new one would start an empty database."""
    url = storage.engine.url
    on_file = url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:")
    if on_file and not Path(url.database).is_file():
        return f"the SQLite database file {url.database} does not exist"
    try:
        with storage.engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except STORE_ERRORS as error:
        return _first_line(error)
    return None


def database_failure(error: Exception) -> str:
    """One line for a request the database failed (``DATABASE_UNAVAILABLE``), without its SQL."""
    return f"the database is unavailable: {_first_line(error)}"


def object_store_errors(storage: Storage) -> tuple[type[Exception], ...]:
    """What ``storage``'s object store raises when it fails (not the caller): the farm's own
    errors (a blob missing or corrupt, a medium refusing), and an S3 client's."""
    if isinstance(storage.objects, S3ObjectStore):
        from botocore.exceptions import BotoCoreError, ClientError  # loaded with the store's client

        return (ObjectStoreError, BotoCoreError, ClientError)
    return (ObjectStoreError,)


def object_store_failure(error: Exception) -> str:
    """One line for a request the object store failed (``object_store_errors``)."""
    return f"the object store failed: {_first_line(error)}"


def object_store_problem(storage: Storage) -> str | None:
    """Why the object store does not answer an existence probe, or None when it does. An S3
    store's bucket is asked for first: a HEAD of a key is a 404 whether the key or the whole
    bucket is missing, so the probe alone reads a deleted bucket as ready."""
    objects = storage.objects
    try:
        if isinstance(objects, S3ObjectStore):
            _head_bucket(objects.client, objects.bucket)
        objects.exists(_PROBE)
    except BucketMissing as missing:
        return f"bucket {missing} does not exist (the farm never creates it)"
    except Exception as error:  # any failure of any backend (boto, botocore, OS) means not ready
        return f"{type(error).__name__}: {_first_line(error)}"
    return None


def database_revision(settings: FarmSettings) -> str | None:
    """The revision the configured database is migrated to (None: never migrated); raises the
    driver's error when it cannot be reached."""
    engine = create_farm_engine(settings.database_url, **_connect_timeout(settings.database_url))
    try:
        return current_revision(engine)
    finally:
        engine.dispose()


def database_is_current(revision: str | None) -> bool:
    return revision == HEAD_REVISION


def _connect_timeout(url: str) -> dict[str, object]:
    # a host that drops packets would otherwise hold the check for the driver's default (minutes)
    return {"connect_args": {"connect_timeout": 5}} if not url.startswith("sqlite") else {}


class BucketMissing(Exception):
    """The bucket FARM_OBJECT_STORE names does not exist (the farm never creates it)."""


def probe_s3_bucket(settings: FarmSettings) -> str:
    """``bucket[/prefix]`` once the bucket answers a HEAD request; raises :class:`BucketMissing`
    when it does not exist, the client's error when the store cannot be reached."""
    bucket, prefix = parse_s3_location(settings.object_store)
    _head_bucket(s3_client(settings), bucket)
    return f"{bucket}/{prefix}" if prefix else bucket


def _head_bucket(client: Any, bucket: str) -> None:
    """Raises :class:`BucketMissing` when ``bucket`` does not exist, the client's error when the
    store cannot be reached."""
    try:
        client.head_bucket(Bucket=bucket)
    except client.exceptions.ClientError as error:
        if str(error.response.get("Error", {}).get("Code")) in ("404", "NoSuchBucket"):
            raise BucketMissing(bucket) from None
        raise
