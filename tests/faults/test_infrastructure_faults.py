"""Infrastructure faults on a farm of its own (Redis, PostgreSQL on their own loopback ports):
each run ends with every target rendered once, nothing lost and nothing written twice."""

from __future__ import annotations

import re

import pytest
from fleet.conftest import make_catalog
from fleet.test_celery import OPEN_JOB_STATES, wait_until
from sqlalchemy import select

from farm.store import models
from farm.store.db import session_scope

from .conftest import FaultFarm

pytestmark = pytest.mark.timeout(120)


def _counts(farm, run_id: str) -> dict[str, int]:
    """jobs, outputs, duplicates, lost: what the fault report gives for a run."""
    targets = farm.targets(run_id)
    with session_scope(farm.storage.sessions) as session:
        cache = session.execute(select(models.ActionCacheEntry.action_key)).scalars().all()
        evidence = session.execute(select(models.EvidenceRecord.target_id)).scalars().all()
    keys = [target.action_key for target in targets]
    return {
        "jobs": len(farm.jobs(run_id)),
        "outputs": sum(1 for target in targets if target.state == "succeeded" and target.output_digest),
        "duplicates": (len(cache) - len(set(cache))) + (len(evidence) - len(set(evidence))),
        "lost": sum(1 for target in targets if target.state != "succeeded") + len(set(keys) - set(cache)),
    }


def test_a_redis_restart_loses_queued_messages_and_the_reconciler_recovers_every_job(
    fault_farm: FaultFarm, tmp_path
) -> None:
    farm = fault_farm.farm
    catalog = make_catalog(tmp_path / "catalog", apps=10)  # 10 x 3 clusters minus one = 29
    planned = farm.farm_json("run", str(catalog.root), "--executor", "celery", "--no-wait")
    run_id = planned["run_id"]
    assert planned["counts"]["queued"] == 29

    fault_farm.redis.restart()  # no persistence: the 10 messages are gone
    farm.start_worker()
    reconcile = farm.farm("reconcile", "--timeout", "0")
    assert reconcile.returncode == 0, reconcile.stdout + reconcile.stderr
    assert re.fullmatch(r"re-sent 10 jobs\n", reconcile.stdout), reconcile.stdout

    wait_until(
        lambda: not {job.state for job in farm.jobs(run_id)} & OPEN_JOB_STATES,
        "every job of the run to finish",
        check=farm.check_workers_alive,
        describe=lambda: farm.describe(run_id),
    )
    assert farm.farm_json("status", run_id, status=None)["state"] == "completed"
    assert _counts(farm, run_id) == {"jobs": 10, "outputs": 29, "duplicates": 0, "lost": 0}
    verify = farm.farm("verify", "--run", run_id)
    assert verify.returncode == 0, verify.stdout + verify.stderr
