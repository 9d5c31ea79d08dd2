"""The API and the pages take a run id as the CLI does: the full id, a unique prefix of one, or
``latest``; an ambiguous prefix is a 422 naming the candidates, a prefix of none a 404. A run whose
owner died reads ``interrupted`` in the runs list and on the run's page, as in ``farm runs``."""

from __future__ import annotations

import os

from fastapi.testclient import TestClient
from sqlalchemy import update

from api.conftest import FinishedRun
from farm.fleet.owners import process_owner
from farm.fleet.service import plan_catalog
from farm.store import models
from farm.store.db import session_scope

GONE_PID = 2**22 + 7  # past pid_max: no such process


def test_the_api_and_the_pages_take_a_unique_run_id_prefix_and_latest(
    client: TestClient, finished_run: FinishedRun
) -> None:
    run_id = finished_run.run_id
    for typed in (run_id[:12], "latest"):
        assert client.get(f"/api/runs/{typed}").json()["id"] == run_id
        assert len(client.get(f"/api/runs/{typed}/targets").json()) == 6
        assert client.get(f"/api/runs/{typed}/grid").json()["run_id"] == run_id
        assert client.get(f"/api/runs/{typed}/publishes").json() == []
        page = client.get(f"/runs/{typed}")
        assert page.status_code == 200 and f"/runs/{run_id}/targets/" in page.text
    target = client.get(f"/api/runs/{run_id}/targets").json()[0]
    assert client.get(f"/runs/latest/targets/{target['id']}").status_code == 200
    app, cluster = target["application"], target["cluster"]
    diff = client.get(f"/api/runs/{run_id[:12]}/diff/latest/targets/{app}/{cluster}")
    assert diff.status_code == 200 and diff.text == ""


def test_an_ambiguous_run_id_prefix_is_a_422_naming_the_candidates_and_a_prefix_of_none_a_404(
    client: TestClient, finished_run: FinishedRun
) -> None:
    _, second = plan_catalog(finished_run.env.storage, finished_run.catalog_root)
    prefix = os.path.commonprefix([finished_run.run_id, second.run_id])
    assert prefix, "two runs made seconds apart share their time prefix"
    for path in (f"/api/runs/{prefix}", f"/runs/{prefix}", f"/api/runs/{prefix}/targets"):
        ambiguous = client.get(path)
        assert ambiguous.status_code == 422, path
        detail = ambiguous.json()["error"]["detail"] if path.startswith("/api") else ambiguous.text
        assert finished_run.run_id in detail and second.run_id in detail
        assert "is ambiguous" in detail
    absent = client.get("/api/runs/ffffffff")
    assert absent.status_code == 404
    assert "run ffffffff does not exist" in absent.json()["error"]["detail"]


def test_a_run_whose_owner_died_reads_interrupted_in_the_api_and_on_its_page(
    client: TestClient, finished_run: FinishedRun
) -> None:
    host, boot, _, _ = process_owner().split("/")
    dead_owner = f"{host}/{boot}/{GONE_PID}/1"
    with session_scope(finished_run.env.storage.sessions) as session:  # as a kill -9 leaves it
        session.execute(
            update(models.FleetRun)
            .where(models.FleetRun.id == finished_run.run_id)
            .values(state=models.RunState.RUNNING.value, owner=dead_owner, finished_at=None)
        )
    assert [run["state"] for run in client.get("/api/runs").json()["runs"]] == ["interrupted"]
    assert client.get(f"/api/runs/{finished_run.run_id}").json()["state"] == "interrupted"
    assert "interrupted" in client.get(f"/runs/{finished_run.run_id}").text
    assert "interrupted" in client.get("/").text
