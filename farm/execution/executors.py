"""The executor a run's jobs are handed to: what ``farm.fleet`` calls with the jobs it planned.

An executor is a callable taking ``(job id, batch key)`` pairs. The local one runs them on a
process pool and returns when all are done (``blocking``); the Celery one sends them to the
workers and returns at once. Entry points choose one here (``executor_for``) and hand it to
``farm.fleet``, which never imports Celery.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from farm.settings import FarmSettings

if TYPE_CHECKING:
    from farm.execution.celery import CeleryQueue
    from farm.store.context import Storage

LOCAL, CELERY = "local", "celery"
EXECUTORS = (LOCAL, CELERY)


@dataclass(frozen=True)
class Executor:
    """Runs or sends a run's jobs. ``blocking``: the call returns once every job is done."""

    name: str
    settings: FarmSettings
    processes: int | None = None
    # local: called as each job finishes and between (farm run draws its progress with it)
    on_progress: Callable[[], None] | None = field(default=None, compare=False)

    @property
    def blocking(self) -> bool:
        return self.name == LOCAL

    def __call__(self, jobs: Sequence[tuple[str, str]]) -> None:
        if not jobs:
            return
        if self.name == LOCAL:
            from farm.evidence.keys import load_configured_signer
            from farm.execution.local import run_local

            load_configured_signer(self.settings)  # the embedded key exists before workers start
            run_local(self.settings, jobs, processes=self.processes, on_progress=self.on_progress)
        else:
            self._celery(jobs)

    def prepare(self, storage: Storage) -> None:
        """The local executor signs in this process tree: its key must exist (generated only for
        a home without evidence) and be trusted, checked before the run is recorded."""
        if self.name == LOCAL:
            from farm.store.trust import signer_for_run

            signer_for_run(storage)

    def send_qualification(self, snapshot_digest: str, cluster: str, selection: str) -> None:
        """Celery only: send the qualification of one subject of a stored snapshot."""
        self._celery.send_qualification(snapshot_digest, cluster, selection)

    @cached_property
    def _celery(self) -> CeleryQueue:
        """One client per executor: a run's jobs and its re-qualifications share it."""
        from farm.execution.celery import CeleryQueue

        return CeleryQueue(self.settings)


def chosen_executor_name(settings: FarmSettings, name: str | None = None) -> str:
    """``name`` (a command line's ``--executor``), else Celery once a broker is set, else
    ``FARM_EXECUTOR``. Raises ValueError for anything but local or celery."""
    chosen = name or (CELERY if settings.broker_url else settings.executor)
    if chosen not in EXECUTORS:
        raise ValueError(f"--executor: must be local or celery, got {chosen!r}")
    return chosen


def executor_for(settings: FarmSettings, name: str | None = None, processes: int | None = None) -> Executor:
    """The executor ``name`` chooses (see ``chosen_executor_name``)."""
    return Executor(chosen_executor_name(settings, name), settings, processes or None)


def uses_celery(settings: FarmSettings) -> bool:
    """The farm's executor when no command line says otherwise: Celery once a broker is set."""
    return bool(settings.broker_url) or settings.executor == "celery"
