"""Structured logs: the stdlib ``logging`` with the run and job ids of the job being run on every
record, and (``FARM_LOG_FORMAT=json``) one JSON object a line.

The stdlib is enough here: a ``contextvars`` value carries the ids (a worker runs one job at a time
per process), a filter copies them onto every record, and a small formatter writes JSON. That keeps
every existing ``logging.getLogger`` call working (Celery's and ours) with no new dependency.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime

_JOB_IDS: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("farm_job_ids", default={})  # noqa: B039


@contextlib.contextmanager
def job_log_context(*, run_id: str, job_id: str = "") -> Iterator[None]:
    """Every log record made inside carries ``run_id`` and ``job_id``; without ``job_id``, the job
    of that run already in context (a run's own line from inside its last job), else empty."""
    current = _JOB_IDS.get()
    if not job_id and current.get("run_id") == run_id:
        job_id = current.get("job_id", "")
    token = _JOB_IDS.set({"run_id": run_id, "job_id": job_id})
    try:
        yield
    finally:
        _JOB_IDS.reset(token)


class JobIdsFilter(logging.Filter):
    """Copies the current job's ids onto the record (empty strings outside a job)."""

    def filter(self, record: logging.LogRecord) -> bool:
        ids = _JOB_IDS.get()
        record.run_id = ids.get("run_id", "")
        record.job_id = ids.get("job_id", "")
        return True


# The attributes every LogRecord has; anything else on a record came from ``extra=`` (an API
# request's method, path, status, duration) and is written as a field of its own, except
# uvicorn's ANSI-coloured copy of its message.
_RECORD_ATTRIBUTES = frozenset(logging.makeLogRecord({}).__dict__) | {
    "message",
    "asctime",
    "run_id",
    "job_id",
    "color_message",
}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, run_id, job_id, the record's
    ``extra`` fields (and the exception)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "run_id": getattr(record, "run_id", ""),
            "job_id": getattr(record, "job_id", ""),
        }
        entry |= {key: value for key, value in record.__dict__.items() if key not in _RECORD_ATTRIBUTES}
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [run=%(run_id)s job=%(job_id)s] %(message)s"


def configure_logging(log_format: str, level: str = "INFO") -> None:
    """Send the root logger to stderr as ``text`` or ``json`` lines, job ids on every record."""
    handler = logging.StreamHandler()
    handler.addFilter(JobIdsFilter())
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level.upper())


def configure_json_logging_if_asked(log_format: str) -> None:
    """``FARM_LOG_FORMAT=json``: this CLI process (and, called from their initializer, its local
    pool workers) logs JSON lines at INFO on stderr. With ``text`` the CLI keeps Python's default
    (warnings only), so ``farm run``'s output stays the summary and the progress bar."""
    if log_format == "json":
        configure_logging("json")
