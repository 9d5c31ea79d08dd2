"""Every list endpoint pages with an opaque cursor (the next page in the ``Link`` header) and sorts
by a fixed set of keys; bad values are 422. ``/healthz`` and ``/readyz`` (which names what is
down), and the HTTP request metrics beside the worker metrics. SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest
from conftest_store import S3Bucket
from fastapi.testclient import TestClient
from fleet.conftest import make_catalog

from api.conftest import ExampleFleet, FinishedRun
from farm.api import create_app
from farm.execution.local import run_local
from farm.fleet.service import plan_catalog
from farm.settings import load_settings
from farm.store.context import open_storage


def _walk(client: TestClient, path: str, **params: object) -> list:
    """Every item of a list endpoint, page by page through its ``Link: rel="next"`` headers."""
    items: list = []
    url: str | None = path
    pages = 0
    while url is not None:
        response = client.get(url, params=params if pages == 0 else None)
        assert response.status_code == 200, response.text
        body = response.json()
        items += body["runs"] if isinstance(body, dict) else body
        url = response.links.get("next", {}).get("url")
        pages += 1
    assert pages == max(1, -(-len(items) // int(params["limit"])))  # full pages, then the rest
    return items


@pytest.fixture
def three_runs(finished_run: FinishedRun) -> list[str]:
    """The finished run and two more, each of a changed catalog (three snapshots)."""
    catalog = make_catalog(finished_run.catalog_root, apps=0, clusters=())
    runs = [finished_run.run_id]
    for version in ("v2", "v3"):
        catalog.write_app("app-0", image=f"ghcr.io/example/app:{version}.0.0")
        _, planned = plan_catalog(finished_run.env.storage, finished_run.catalog_root)
        run_local(finished_run.env.settings, planned.queued, processes=1)
        runs.append(planned.run_id)
    return runs


def test_the_runs_list_pages_to_its_end_in_both_orders(client: TestClient, three_runs: list[str]) -> None:
    newest = [run["id"] for run in _walk(client, "/api/runs", limit=1)]
    assert newest == three_runs[::-1]
    oldest = [run["id"] for run in _walk(client, "/api/runs", limit=2, sort="created_at")]
    assert oldest == three_runs


def test_a_runs_targets_page_in_each_sort_and_every_target_comes_once(
    client: TestClient, finished_run: FinishedRun
) -> None:
    path = f"/api/runs/{finished_run.run_id}/targets"
    every = client.get(path).json()
    assert len(every) == 6 and "link" not in client.get(path).headers
    for sort, key in (
        ("application", lambda t: (t["application"], t["cluster"])),
        ("cluster", lambda t: (t["cluster"], t["application"])),
        ("state", lambda t: (t["state"], t["application"], t["cluster"])),
    ):
        paged = _walk(client, path, limit=4, sort=sort)
        assert [key(t) for t in paged] == sorted(key(t) for t in every), sort
    failed = _walk(client, path, limit=1, state="failed")  # the filter is kept from page to page
    assert [t["state"] for t in failed] == ["failed", "failed"]


def test_snapshots_and_a_targets_history_page_in_both_orders(
    client: TestClient, three_runs: list[str]
) -> None:
    snapshots = client.get("/api/snapshots").json()
    assert len(snapshots) == 3
    assert [s["digest"] for s in _walk(client, "/api/snapshots", limit=1)] == [s["digest"] for s in snapshots]
    oldest = _walk(client, "/api/snapshots", limit=2, sort="created_at")
    assert [s["digest"] for s in oldest] == [s["digest"] for s in snapshots[::-1]]
    history = "/api/targets/app-0/cluster-a/history"
    assert [h["run_id"] for h in _walk(client, history, limit=1)] == three_runs[::-1]
    assert [h["run_id"] for h in _walk(client, history, limit=2, sort="created_at")] == three_runs


def test_qualification_subjects_page_by_subject_state_and_latest_change(
    example_client: TestClient, example_fleet: ExampleFleet
) -> None:
    from farm.catalog import load_catalog
    from farm.evidence.keys import load_configured_trust
    from farm.qualification.service import refresh_all

    settings = example_fleet.env.settings
    trusted = frozenset(load_configured_trust(settings))
    refresh_all(
        example_fleet.env.storage, load_catalog(example_fleet.root), trusted, "tests"
    )  # every subject
    every = example_client.get("/api/qualification").json()
    assert len(every) > 3
    by_subject = _walk(example_client, "/api/qualification", limit=2)
    assert [s["id"] for s in by_subject] == [s["id"] for s in every]
    by_state = _walk(example_client, "/api/qualification", limit=3, sort="state")
    assert [(s["state"], s["cluster"], s["selection"]) for s in by_state] == sorted(
        (s["state"], s["cluster"], s["selection"]) for s in every
    )
    latest = _walk(example_client, "/api/qualification", limit=2, sort="-since")
    assert sorted(s["id"] for s in latest) == sorted(s["id"] for s in every)
    assert [s["since"] for s in latest] == sorted((s["since"] for s in every), reverse=True)


def _cursor(sort: str, key: list) -> str:
    return base64.urlsafe_b64encode(json.dumps([sort, key]).encode()).decode()


def test_a_bad_sort_limit_or_cursor_is_422_on_every_list(client: TestClient, three_runs: list[str]) -> None:
    run = three_runs[0]
    lists = [
        "/api/runs",
        f"/api/runs/{run}/targets",
        "/api/snapshots",
        "/api/qualification",
        "/api/targets/app-0/cluster-a/history",
    ]
    for path in lists:
        assert client.get(path, params={"sort": "bogus"}).status_code == 422, path
        assert client.get(path, params={"limit": 0}).status_code == 422, path
        assert client.get(path, params={"cursor": "!!!"}).status_code == 422, path
        forged = _cursor("created_at", [{"at": "2026-01-01T00:00:00"}, 7])  # an integer where an id goes
        assert client.get(path, params={"cursor": forged}).status_code == 422, path
    first = client.get("/api/runs", params={"limit": 1, "sort": "created_at"}).json()["next_cursor"]
    other_sort = client.get("/api/runs", params={"cursor": first})
    assert other_sort.status_code == 422 and "sort=created_at" in other_sort.text


def test_healthz_answers_and_readyz_is_ready_when_database_and_object_store_answer(
    client: TestClient,
) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "checks": {"database": "ok", "object_store": "ok"}}


@pytest.mark.timeout(120)
def test_readyz_is_503_naming_each_service_that_is_down(
    finished_run: FinishedRun, s3_endpoint: str, tmp_path: Path
) -> None:
    live = finished_run.env.settings
    nowhere_db = "postgresql+psycopg://postgres@127.0.0.1:1/farm"
    cases = {
        "database": {"database_url": nowhere_db, "object_store": live.object_store},
        "object_store": {
            "database_url": live.database_url,
            "object_store": "s3://farm-absent",
            "s3_endpoint_url": "http://127.0.0.1:1",
            "s3_access_key_id": "x",
            "s3_secret_access_key": "y",
        },
    }
    for down, overrides in cases.items():
        storage = open_storage(load_settings(home=tmp_path / down, **overrides))
        try:
            with TestClient(create_app(storage)) as client:
                response = client.get("/readyz")
                assert client.get("/healthz").status_code == 200  # the process is up all the same
        finally:
            storage.close()
        body = response.json()
        assert response.status_code == 503, body
        assert body["status"] == f"not ready: {down} down"
        assert body["checks"][down] != "ok"
        assert [name for name, check in body["checks"].items() if check == "ok"] == [
            name for name in ("database", "object_store") if name != down
        ]


@pytest.mark.timeout(120)
def test_readyz_is_503_when_the_object_stores_bucket_is_gone(
    finished_run: FinishedRun, s3_bucket: S3Bucket, tmp_path: Path
) -> None:
    settings = load_settings(
        home=tmp_path / "s3",
        database_url=finished_run.env.settings.database_url,
        object_store=f"s3://{s3_bucket.name}/farm",
        s3_endpoint_url=s3_bucket.endpoint,
    )
    storage = open_storage(settings)
    try:
        with TestClient(create_app(storage)) as client:
            assert client.get("/readyz").status_code == 200
            s3_bucket.client.delete_bucket(Bucket=s3_bucket.name)  # the farm never creates it again
            response = client.get("/readyz")
    finally:
        storage.close()
    body = response.json()
    assert response.status_code == 503, body
    assert body["status"] == "not ready: object_store down"
    assert s3_bucket.name in body["checks"]["object_store"] and body["checks"]["database"] == "ok"


def test_readyz_is_503_when_the_sqlite_database_file_is_gone(tmp_path: Path) -> None:
    storage = open_storage(load_settings(home=tmp_path / "home"))
    database = tmp_path / "home" / "farm.db"
    try:
        with TestClient(create_app(storage)) as client:
            assert client.get("/readyz").status_code == 200  # its connection is pooled from here on
            for path in database.parent.glob("farm.db*"):
                path.unlink()  # the open connection still reads the deleted file: SELECT 1 answers
            response = client.get("/readyz")
    finally:
        storage.close()
    body = response.json()
    assert response.status_code == 503, body
    assert body["status"] == "not ready: database down"
    assert body["checks"] == {
        "database": f"the SQLite database file {database} does not exist",
        "object_store": "ok",
    }


@pytest.mark.timeout(120)
def test_a_request_the_database_cannot_answer_is_a_503_saying_so_not_a_500(
    finished_run: FinishedRun, tmp_path: Path
) -> None:
    live = finished_run.env.settings
    nowhere = "postgresql+psycopg://postgres@127.0.0.1:1/farm"
    storage = open_storage(load_settings(home=tmp_path, database_url=nowhere, object_store=live.object_store))
    try:
        with TestClient(create_app(storage), raise_server_exceptions=False) as client:
            spec = client.get("/openapi.json").json()
            for path in ("/api/runs", "/api/runs/latest", "/api/qualification/1", "/api/snapshots"):
                response = client.get(path)
                assert response.status_code == 503, (path, response.text)
                detail = response.json()["error"]["detail"]
                assert detail.startswith("the database is unavailable: ") and "port 1" in detail, detail
            template = spec["paths"]["/api/runs/{run_id}"]["get"]["responses"]["503"]
            assert template["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
            page = client.get("/", headers={"accept": "text/html"})
            assert page.status_code == 503 and "the database is unavailable" in page.text
    finally:
        storage.close()


def test_a_request_for_bytes_the_object_store_lost_is_a_503_naming_the_blob_not_a_500(
    finished_run: FinishedRun,
) -> None:
    app = create_app(finished_run.env.storage)
    with TestClient(app, raise_server_exceptions=False) as client:
        target = client.get(
            f"/api/runs/{finished_run.run_id}/targets", params={"application": "app-0"}
        ).json()[0]
        digest = target["output_digest"]
        shutil.rmtree(finished_run.env.settings.object_store)  # the local store's folder, gone
        for path in (
            f"/api/outputs/{digest}",
            f"/api/targets/{target['application']}/{target['cluster']}/output",
            f"/runs/{finished_run.run_id}/targets/{target['id']}",
            "/api/snapshots",
        ):
            response = client.get(path)
            assert response.status_code == 503, (path, response.text)
            detail = response.json()["error"]["detail"]
            assert detail.startswith("the object store failed: blob sha256/") and "is missing" in detail
        page = client.get(f"/outputs/{digest}", headers={"accept": "text/html"})
        assert page.status_code == 503 and f"blob sha256/{digest} is missing" in page.text


def test_http_requests_are_counted_by_route_template_beside_the_worker_metrics(
    client: TestClient, finished_run: FinishedRun
) -> None:
    for _ in range(2):
        assert client.get(f"/api/runs/{finished_run.run_id}").status_code == 200
    assert client.get("/api/runs/nope").status_code == 404
    metrics = client.get("/metrics/").text
    lines = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line[:1] != "#"
    }
    ok = 'farm_http_request_seconds_count{method="GET",route="/api/runs/{run_id}",status="200"}'
    missing = 'farm_http_request_seconds_count{method="GET",route="/api/runs/{run_id}",status="404"}'
    assert lines[ok] >= 2 and lines[missing] >= 1
    assert finished_run.run_id not in metrics  # ids never become labels
    assert "farm_jobs{" in metrics and "farm_render_seconds" in metrics  # the worker metrics, same page
