"""Publish on run (``FARM_PUBLISH_TO``): a fleet run started from the API publishes when it
completes, a failed push stays recorded failed for ``farm publish --retry``, and the dashboard
shows each run's publishes (a section of the run page, a JSON endpoint)."""

from __future__ import annotations

import json
import stat
import time
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from fleet.conftest import FleetEnv, fleet_env, make_catalog  # noqa: F401

from farm.api import create_app
from farm.evidence.keys import load_configured_signer
from farm.publish.service import retry_unfinished
from farm.settings import load_settings
from farm.store.context import open_storage
from farm.store.models import utcnow
from publish.conftest import Farm, commits, git
from workers.schedule import beat_schedule

TOKEN = "publish-token"


@pytest.mark.timeout(300)
def test_a_run_triggered_from_the_api_publishes_when_it_completes_and_the_dashboard_shows_it(
    tmp_path: Path, database_url: str, bare: Path
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=2, clusters=("cluster-a",))
    settings = load_settings(
        home=tmp_path / "farm",
        database_url=database_url,
        object_store=str(tmp_path / "objects"),
        publish_to=f"git {bare}",
        publish_backoff_seconds=0,
    )
    storage = open_storage(settings)
    try:
        with TestClient(create_app(storage, {"test-fleet": catalog.root}, TOKEN)) as client:
            run_id = client.post(
                "/api/runs", json={"catalog": "test-fleet"}, headers={"Authorization": f"Bearer {TOKEN}"}
            ).json()["run_id"]
            deadline = time.monotonic() + 120
            while not _published(client, run_id) and time.monotonic() < deadline:
                time.sleep(0.2)
            (publish,) = client.get(f"/api/runs/{run_id}/publishes").json()
            assert publish["state"] == "done" and publish["destination"] == str(bare)
            assert publish["reference"] == {"main": commits(bare)[0]}
            page = client.get(f"/runs/{run_id}").text
            assert 'id="publishes"' in page and commits(bare)[0] in page
            assert client.get("/api/runs/0123456789abcdef0123456789abcdef/publishes").status_code == 404
    finally:
        storage.close()
    assert f"run: {run_id}" in git(bare, "log", "-1", "--format=%B", "main")


def _published(client: TestClient, run_id: str) -> bool:
    found = client.get(f"/api/runs/{run_id}/publishes").json()
    return bool(found) and found[0]["state"] != "pending"


@pytest.mark.timeout(300)
def test_a_run_whose_push_is_refused_completes_with_its_publish_recorded_failed_until_retry(
    farm: Farm, bare: Path
) -> None:
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    run_id = farm.run(FARM_PUBLISH_TO=f"git {bare}", FARM_PUBLISH_ATTEMPTS="2")
    assert json.loads(farm("status", run_id, "--json"))["state"] == "completed"
    assert commits(bare) == []
    hook.unlink()
    resumed = json.loads(farm("publish", "--retry", "--json").splitlines()[0])
    assert resumed["state"] == "done"
    assert f"run: {run_id}" in git(bare, "log", "-1", "--format=%B", "main")


@pytest.mark.timeout(300)
def test_the_beat_retries_a_failed_publish_once_its_backoff_has_passed_and_not_before(
    farm: Farm, bare: Path, tmp_path: Path, database_url: str
) -> None:
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    run_id = farm.run()
    failed = farm.publish(
        run_id,
        "--to",
        "git",
        str(bare),
        status=1,
        FARM_PUBLISH_ATTEMPTS="1",
        FARM_PUBLISH_BACKOFF_SECONDS="600",
    )
    assert failed["state"] == "failed"
    hook.unlink()
    settings = load_settings(
        home=tmp_path / "farm", database_url=database_url, object_store=str(tmp_path / "objects")
    )
    storage = open_storage(settings)
    try:
        signer = load_configured_signer(settings)
        assert retry_unfinished(storage, signer, due_at=utcnow()) == []  # its backoff has not passed
        assert commits(bare) == []
        (retried,) = retry_unfinished(storage, signer, due_at=utcnow() + timedelta(seconds=601))
        assert retried.publish_id == failed["publish"] and retried.state == "done"
    finally:
        storage.close()
    assert f"run: {run_id}" in git(bare, "log", "-1", "--format=%B", "main")
    schedule = beat_schedule(load_settings(home=tmp_path / "farm", publish_to=f"git {bare}"))
    assert schedule["publish-retry-due"] == {"task": "farm.publish.retry_due", "schedule": 60.0}
    assert "publish-retry-due" not in beat_schedule(load_settings(home=tmp_path / "farm"))


@pytest.mark.timeout(300)
def test_farm_run_prints_the_commit_it_published_for_each_cluster_in_text_and_json(
    farm: Farm, bare: Path
) -> None:
    text = farm("run", str(farm.catalog.root), FARM_PUBLISH_TO=f"git {bare}")
    (commit,) = commits(bare)
    assert f"  publish to git {bare}: published (main {commit})" in text
    assert "    published cluster-a: 3 output(s)" in text and "    published cluster-b: 3 output(s)" in text
    again = json.loads(farm("run", str(farm.catalog.root), "--json", FARM_PUBLISH_TO=f"git {bare}"))
    (publish,) = again["publishes"]
    assert (publish["state"], publish["changed"], publish["reference"]) == ("done", False, {"main": commit})
    assert [(c["cluster"], c["published"], len(c["outputs"])) for c in publish["clusters"]] == [
        ("cluster-a", True, 3),
        ("cluster-b", True, 3),
    ]


@pytest.mark.timeout(300)
def test_farm_run_prints_each_cluster_its_publish_gate_skipped_with_the_reason(
    farm: Farm, bare: Path
) -> None:
    gated = {"FARM_PUBLISH_TO": f"git {bare}", "FARM_PUBLISH_REQUIRE": "qualified"}
    (publish,) = json.loads(farm("run", str(farm.catalog.root), "--json", **gated))["publishes"]
    assert [(c["cluster"], c["published"]) for c in publish["clusters"]] == [
        ("cluster-a", False),
        ("cluster-b", False),
    ]
    reason = publish["clusters"][0]["reason"]
    assert reason
    assert f"    skipped   cluster-a: {reason}" in farm("run", str(farm.catalog.root), **gated)


@pytest.mark.timeout(300)
def test_farm_run_prints_a_failed_publish_with_its_error_and_how_to_resume_it(farm: Farm, bare: Path) -> None:
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    refused = {"FARM_PUBLISH_TO": f"git {bare}", "FARM_PUBLISH_ATTEMPTS": "1"}
    (publish,) = json.loads(farm("run", str(farm.catalog.root), "--json", **refused))["publishes"]
    assert publish["state"] == "failed" and publish["error"].startswith("publish.push_failed")
    text = farm("run", str(farm.catalog.root), **refused)
    assert f"  publish to git {bare}: failed: publish.push_failed" in text
    assert text.rstrip().endswith("; farm publish --retry resumes it")
