"""The inline executor: a run's jobs run one after the other in this process, with ``run_jobs``
(a Celery worker's qualification task renders its subject's jobs itself instead of queueing
them behind it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from farm.evidence.keys import Signer
from farm.fleet.jobs import run_jobs
from farm.store.context import Storage


@dataclass(frozen=True)
class InlineExecutor:
    storage: Storage
    signer: Signer
    worker: str
    name: str = "inline"
    blocking: bool = True

    def prepare(self, storage: Storage) -> None:
        """Nothing to check: the signer was loaded (and checked) when this worker started."""

    def __call__(self, jobs: Sequence[tuple[str, str]]) -> None:
        """The jobs in turn, each one's renders overlapping the previous one's recording."""
        run_jobs(self.storage, self.signer, jobs, worker=self.worker)
