"""Cutting a run's jobs into the calls (local pool) or messages (Celery) that carry a few each.

A worker runs a call's jobs one after another, each job's renders overlapping the previous one's
recording (``farm.fleet.jobs.run_jobs``), so a longer call leaves fewer recordings uncovered. The
calls shrink towards the end of the run (guided self-scheduling: a quarter of what is left per
worker) so the workers still finish together.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

Job = TypeVar("Job")


def job_chunks(jobs: Sequence[Job], workers: int, most: int) -> list[list[Job]]:
    """The jobs in the order given, cut into chunks of at most ``most``, each at most a quarter of
    what is left per worker (``workers`` of them), single jobs at the end."""
    chunks: list[list[Job]] = []
    start = 0
    while start < len(jobs):
        size = max(1, min(most, (len(jobs) - start) // (4 * max(1, workers))))
        chunks.append(list(jobs[start : start + size]))
        start += size
    return chunks
