"""The compose topology's scheduled re-qualification, on a real Redis and a real ``farm worker``:
the beat sends ``farm.qualification.find_due`` by name; a worker that has the catalog mounted
(FARM_QUALIFICATION_CATALOG, as docker-compose.yml sets it for every farm service) brings every
state up to it, claims the stale subjects and qualifies them from the stored snapshot."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from celery import Celery
from fleet.test_celery import (
    EXAMPLE_FLEET,
    CeleryFarm,
    wait_until,
)
from sqlalchemy import func, select

from farm.identity.fingerprint import core_version, versioned_queue
from farm.store import models
from farm.store.db import session_scope

FIND_DUE = "farm.qualification.find_due"  # the beat's entry (workers/schedule.py)


def _evidence(farm: CeleryFarm) -> int:
    with session_scope(farm.storage.sessions) as session:
        return session.scalar(select(func.count()).select_from(models.QualificationEvidence)) or 0


@pytest.mark.timeout(400)
def test_the_beats_find_due_task_on_a_worker_with_the_mounted_catalog_requalifies_an_edited_subject(
    celery_farm: CeleryFarm, tmp_path: Path
) -> None:
    catalog = tmp_path / "catalog"  # docker-compose.yml mounts FARM_CATALOG_DIR here, read-only
    shutil.copytree(EXAMPLE_FLEET, catalog)
    celery_farm.env |= {"FARM_QUALIFICATION_CATALOG": str(catalog)}
    celery_farm.start_farm_worker()  # the compose worker's command
    celery_farm.farm_json("qualify", str(catalog), "--executor", "celery")
    before = _evidence(celery_farm)
    assert before == 4
    cluster = catalog / "clusters" / "prod-nginx.yaml"
    cluster.write_text(cluster.read_text().replace("letsencrypt-prod", "letsencrypt-other"))

    client = Celery("beat-stand-in", broker=celery_farm.env["FARM_BROKER_URL"])
    client.send_task(FIND_DUE, queue=versioned_queue(celery_farm.queue, core_version()))
    wait_until(
        lambda: _evidence(celery_farm) == before + 2,  # both values of prod-nginx, qualified again
        "the worker to re-qualify the edited ClusterProfile's subjects",
        poll=0.3,
        check=celery_farm.check_workers_alive,
        describe=lambda: celery_farm.worker_log(0)[-6000:],
    )
    log = celery_farm.worker_log(0)
    assert FIND_DUE in log and "Traceback" not in log, log[-4000:]
