"""The core version that goes into every action key.

It is the core's release number plus a digest of the core's own source, so any change to a
handler invalidates the action cache by itself: a stale output can never be served after an
upgrade, and two workers running different cores never share cache entries.
"""

from __future__ import annotations

from functools import cache
from hashlib import sha256
from pathlib import Path

import farm.core
from farm.core import CORE_VERSION


def versioned_queue(queue: str, version: str) -> str:
    """The Celery queue of jobs planned under core ``version``: ``<FARM_CELERY_QUEUE>.<version>``.
    A worker consumes only its own core's queue, so during a rolling upgrade a job waits for a
    worker that renders it with the core it was planned under instead of failing it."""
    return f"{queue}.{version}"


@cache
def core_version() -> str:
    root = Path(farm.core.__file__).resolve().parent
    digest = sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return f"{CORE_VERSION}+{digest.hexdigest()[:16]}"
