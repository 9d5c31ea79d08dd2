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
def job_log_context(*, run_id: str, job_id: str) -> Iterator[None]:
    """Every log record made inside carries ``run_id`` and ``job_id``."""
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


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, run_id, job_id (and the exception)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "run_id": getattr(record, "run_id", ""),
            "job_id": getattr(record, "job_id", ""),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


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
