"""Known failures as one ``Error:`` line: what failed, where, and the setting to check.

``describe(error)`` turns the farm's own errors and the infrastructure exceptions of its services
(the database through SQLAlchemy, the broker through kombu/redis, S3 through botocore, the file
system) into one line, or returns None for anything else, which is a bug and keeps its traceback.
Classes are recognised by name, so nothing here imports SQLAlchemy, Celery or boto3: a command that
never touched them does not pay for loading them. URLs are shown with their password redacted.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from farm.core.errors import bound_message

# The farm's own errors: their message already says what and where.
_FARM_ERRORS = {
    "farm.core.errors.CoreError",
    "farm.settings.SettingsError",
    "farm.evidence.keys.KeyFileError",
    "farm.evidence.errors.EvidenceError",
    "farm.store.objects.ObjectStoreError",
    "farm.core.request.RequestError",
    "alembic.util.exc.CommandError",
}
_SCHEMA_MISSING = (
    "no such table",
    "no such column",
    "does not exist",  # PostgreSQL: relation/column "…" does not exist
    "undefinedtable",
    "undefinedcolumn",
)
_UNREACHABLE = (
    "could not connect",
    "connection refused",
    "connection failed",
    "connection to server",
    "timeout",
    "timed out",
    "unable to open database file",
    "name or service not known",
    "could not translate host name",
    "server closed the connection",
)


def _class_names(error: BaseException) -> set[str]:
    return {f"{cls.__module__}.{cls.__qualname__}" for cls in type(error).__mro__}


def _one_line(error: BaseException) -> str:
    """The driver's own message (SQLAlchemy's ``orig``), on one line, without SQL or links."""
    inner = getattr(error, "orig", None) or error
    lines = [line.strip() for line in str(inner).splitlines() if line.strip()]
    text = "; ".join(
        line for line in lines if not line.startswith(("(Background on", "[SQL:", "[parameters:"))
    )
    return bound_message(text or type(inner).__name__)


def _setting(name: str) -> str:
    """A configured URL or location, its password redacted; the variable's name if unreadable."""
    from farm.settings import load_settings, redact_url

    try:
        return redact_url(str(getattr(load_settings(), name) or ""))
    except Exception:  # the settings themselves may be what is wrong; the name still helps
        return "FARM_" + name.upper()


def _database(error: BaseException) -> str:
    detail = _one_line(error)
    where = _setting("database_url")
    low = (detail + " " + type(getattr(error, "orig", error)).__name__).lower()
    from farm.store.damage import DAMAGE_MARKS, RECOVERY

    if any(mark in low for mark in DAMAGE_MARKS):
        return (
            f"{where.removeprefix('sqlite:///')}: the database file is damaged ({detail.split('; ')[0]}): "
            f"restore it from a backup, then farm verify --all says what is affected; see {RECOVERY}"
        )
    if any(mark in low for mark in _SCHEMA_MISSING):
        return (
            f"the database at {where} has no farm schema or an older one: run farm db upgrade "
            f"(FARM_DATABASE_URL names the database; {detail.split('; ')[0]})"
        )
    if "unable to open database file" in low and (unopenable := _sqlite_unopenable(where)):
        return unopenable
    if any(mark in low for mark in _UNREACHABLE):
        return f"database unreachable at {where}: {detail} (check FARM_DATABASE_URL and that the server runs)"
    return f"database at {where}: {detail}"


def _sqlite_unopenable(where: str) -> str | None:
    """Why SQLite could not open its file (it says only "unable to open database file"): a file,
    not a server, so "unreachable … check that the server runs" misled (a read-only home)."""
    if not where.startswith("sqlite:"):
        return None
    from farm.store.db import sqlite_file

    path = sqlite_file(where)
    if path is None:
        return None
    folder = path.parent
    if not folder.is_dir():
        why = f"its folder {folder} does not exist"
    elif not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.R_OK | os.W_OK)):
        why = "it or its folder is not writable (a read-only file system, or their permissions)"
    else:
        why = "unable to open database file"
    return f"the database file {path} cannot be opened: {why} (FARM_HOME or FARM_DATABASE_URL names it)"


def _broker(error: BaseException) -> str:
    broker = _setting("broker_url") or "FARM_BROKER_URL"
    return (
        f"broker unreachable at {broker}: {_one_line(error)} (check FARM_BROKER_URL and that the broker runs)"
    )


def _object_store(error: BaseException) -> str:
    return (
        f"object store {_setting('object_store')}: {_one_line(error)} "
        "(check FARM_OBJECT_STORE, FARM_S3_ENDPOINT_URL, FARM_S3_REGION and the credentials: "
        "FARM_S3_ACCESS_KEY_ID/FARM_S3_SECRET_ACCESS_KEY, or boto3's AWS_* chain)"
    )


def _file_system(error: BaseException) -> str:
    assert isinstance(error, OSError)
    reason = error.strerror or _one_line(error)
    return f"{error.filename}: {reason}" if error.filename else reason


_SERVICES: list[tuple[tuple[str, ...], Callable[[BaseException], str]]] = [
    (("sqlalchemy.exc.SQLAlchemyError",), _database),
    (
        (
            "kombu.exceptions.OperationalError",
            "kombu.exceptions.KombuError",
            "redis.exceptions.RedisError",
            "amqp.exceptions.AMQPError",
        ),
        _broker,
    ),
    (("botocore.exceptions.BotoCoreError", "botocore.exceptions.ClientError"), _object_store),
]


def describe(error: BaseException) -> str | None:
    """One line for a known failure, or None (a bug: let its traceback show)."""
    names = _class_names(error)
    if "farm.evidence.keys.KeyFileError" in names and "signing key" in str(error):
        return bound_message(f"{error} (FARM_SIGNING_KEY names the key; farm keys generate writes one)")
    if names & _FARM_ERRORS:
        return bound_message(getattr(error, "message", None) or str(error))
    if type(error) is LookupError or (
        isinstance(error, LookupError) and type(error).__module__.startswith("farm.")
    ):
        return bound_message(str(error))  # "no run …", "no output for target …"
    for classes, explain in _SERVICES:
        if names & set(classes):
            return explain(error)
    if isinstance(error, OSError):
        return _file_system(error)
    return None
