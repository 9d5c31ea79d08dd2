"""The inline executor: a run's jobs run one after the other in this process (a Celery worker's
qualification task renders its subject's jobs itself instead of queueing them behind it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from farm.evidence.keys import Signer
from farm.fleet.jobs import run_job
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
        for job_id, batch_key in jobs:
            run_job(self.storage, self.signer, job_id, worker=self.worker, expected_batch_key=batch_key)
