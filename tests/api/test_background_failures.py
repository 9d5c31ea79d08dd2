"""Work a trigger leaves running in the background records its failure and logs one line."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient
from fleet.conftest import Catalog

from api.conftest import TOKEN, ExampleFleet, FinishedRun

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _background_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "farm.api.background"]


def _wait_for(condition: Callable[[], object], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.2)


@pytest.mark.timeout(120)
def test_a_triggered_run_whose_executor_fails_is_failed_with_the_message_and_one_log_line(
    client: TestClient,
    finished_run: FinishedRun,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    Catalog(finished_run.catalog_root).write_app("app-9")  # two new targets: jobs to run
    finished_run.env.settings.signing_key_path.write_text("not a key\n")  # the workers cannot start
    caplog.set_level(logging.INFO, logger="farm.api.background")
    response = client.post("/api/runs", json={"catalog": "test-fleet"}, headers=AUTH)
    assert response.status_code == 202
    run_id = response.json()["run_id"]
    _wait_for(lambda: client.get(f"/api/runs/{run_id}").json()["state"] != "running")
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["state"] == "completed_with_failures" and run["done"] == run["total"]
    failed = client.get(f"/api/runs/{run_id}/targets", params={"application": "app-9"}).json()
    assert [t["error_code"] for t in failed] == ["run.executor_failed"] * 2
    assert all("signing.key" in t["error_message"] for t in failed)
    _wait_for(lambda: _background_lines(caplog), 10)
    lines = _background_lines(caplog)
    assert len(lines) == 1 and lines[0].exc_info is None
    assert lines[0].levelno == logging.ERROR and "signing.key" in lines[0].getMessage()
    assert "Traceback" not in capsys.readouterr().err


def test_a_run_of_a_catalog_made_invalid_after_the_server_started_is_refused_with_its_problem(
    client: TestClient, finished_run: FinishedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    (finished_run.catalog_root / "fleet.yaml").write_text("spec: [unclosed\n")
    response = client.post("/api/runs", json={"catalog": "test-fleet"}, headers=AUTH)
    assert response.status_code == 409
    assert "fleet.yaml" in " ".join(response.json()["error"]["detail"])
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.timeout(120)
def test_a_triggered_qualification_that_fails_errors_its_run_and_logs_one_line(
    example_client: TestClient,
    example_fleet: ExampleFleet,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    example_fleet.env.settings.signing_key_path.write_text("not a key\n")  # cannot sign evidence
    caplog.set_level(logging.INFO, logger="farm.api.background")
    response = example_client.post(
        "/api/qualification", json={"catalog": "example", "subjects": ["staging-traefik"]}, headers=AUTH
    )
    assert response.status_code == 202
    _wait_for(lambda: _background_lines(caplog))
    lines = _background_lines(caplog)
    assert len(lines) == 1 and lines[0].exc_info is None and "signing.key" in lines[0].getMessage()
    subject = next(
        s for s in example_client.get("/api/qualification").json() if s["cluster"] == "staging-traefik"
    )
    timeline = example_client.get(f"/api/qualification/{subject['id']}").json()
    runs = [e["summary"] for e in timeline["entries"] if e["kind"] == "run"]
    assert runs == ["qualification run errored"]
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.timeout(120)
def test_a_triggered_run_whose_broker_is_unreachable_is_a_503_saying_the_jobs_stay_queued(
    finished_run: FinishedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    import dataclasses

    from farm.api.app import create_app

    Catalog(finished_run.catalog_root).write_app("app-9")  # two new targets: jobs to send
    storage = finished_run.env.storage
    settings = storage.settings.model_copy(update={"broker_url": "redis://127.0.0.1:9/0"})
    app = create_app(
        dataclasses.replace(storage, settings=settings), {"test-fleet": finished_run.catalog_root}, TOKEN
    )
    with TestClient(app) as broker_down:
        response = broker_down.post("/api/runs", json={"catalog": "test-fleet"}, headers=AUTH)
        assert response.status_code == 503, response.text
        detail = response.json()["error"]["detail"]
        assert "broker unreachable at " in detail and "check FARM_BROKER_URL" in detail
        assert "they stay queued: farm reconcile sends them" in detail
        run_id = detail.split()[1]
        queued = broker_down.get(f"/api/runs/{run_id}/targets", params={"state": "queued"}).json()
        assert sorted(t["application"] for t in queued) == ["app-9", "app-9"]
    assert "Traceback" not in capsys.readouterr().err
