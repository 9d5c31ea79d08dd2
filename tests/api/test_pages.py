from __future__ import annotations

from fastapi.testclient import TestClient
from fleet.conftest import make_catalog

from api.conftest import ExampleFleet, FinishedRun
from farm.execution.local import run_local
from farm.fleet.planner import PlannedRun
from farm.fleet.service import plan_catalog


def _failed_target(client: TestClient, run_id: str) -> dict:
    return client.get(f"/api/runs/{run_id}/targets", params={"state": "failed"}).json()[0]


def test_the_runs_page_lists_the_run_with_its_progress(client: TestClient, finished_run: FinishedRun) -> None:
    page = client.get("/").text
    assert f'href="/runs/{finished_run.run_id}"' in page
    assert '<progress data-field="progress" max="6" value="6">' in page


def test_the_run_page_is_a_grid_coloured_by_state_with_filters(
    client: TestClient, finished_run: FinishedRun
) -> None:
    page = client.get(f"/runs/{finished_run.run_id}").text
    assert page.count('class="cell succeeded"') == 4 and page.count('class="cell failed error"') == 2
    filtered = client.get(f"/runs/{finished_run.run_id}", params={"state": "failed"}).text
    assert "cell succeeded" not in filtered and filtered.count("cell failed") == 2


def test_a_failed_target_page_shows_its_error(client: TestClient, finished_run: FinishedRun) -> None:
    target = _failed_target(client, finished_run.run_id)
    page = client.get(f"/runs/{finished_run.run_id}/targets/{target['id']}").text
    assert target["error_code"] in page and "error-message" in page


def test_an_output_page_highlights_the_yaml(client: TestClient, finished_run: FinishedRun) -> None:
    target = client.get(
        f"/api/runs/{finished_run.run_id}/targets", params={"application": "app-0", "cluster": "cluster-a"}
    ).json()[0]
    page = client.get(f"/outputs/{target['output_digest']}").text
    assert "Deployment" in page and 'class="highlight"' in page


def test_unknown_pages_are_404_and_static_files_and_metrics_are_served(client: TestClient) -> None:
    assert client.get("/runs/nope", headers={"accept": "text/html"}).status_code == 404
    assert client.get("/outputs/sha256:" + "0" * 64).status_code == 404
    assert "fetch(" in client.get("/static/farm.js").text
    metrics = client.get("/metrics/")
    assert metrics.status_code == 200
    assert "farm_queue_depth" in metrics.text and 'farm_jobs{state="succeeded"}' in metrics.text


def test_a_page_address_with_an_invalid_parameter_is_a_422_error_page_as_its_other_errors_are(
    client: TestClient,
) -> None:
    for path in (
        "/qualification/abc",
        "/qualification/0",
        "/runs/a.b",
        "/outputs/a.b",
        "/snapshots/x/diff/a.b",
    ):
        page = client.get(path, headers={"accept": "text/html"})
        assert page.status_code == 422, path
        assert page.headers["content-type"].startswith("text/html") and "<h1>422</h1>" in page.text, path
    api = client.get("/api/qualification/abc", headers={"accept": "text/html"})
    assert api.status_code == 422 and api.json()["error"]["detail"][0]["loc"] == ["path", "subject_id"]


def _plan_a_live_run(finished_run: FinishedRun) -> PlannedRun:
    """A new image for app-0, planned and not executed: a run with 4 of 6 targets done."""
    make_catalog(finished_run.catalog_root, apps=0, clusters=()).write_app(
        "app-0", image="ghcr.io/example/app:v3"
    )
    return plan_catalog(finished_run.env.storage, finished_run.catalog_root)[1]


def test_the_runs_page_follows_a_running_run_and_keeps_a_finished_runs_counts(
    client: TestClient, finished_run: FinishedRun
) -> None:
    planned = _plan_a_live_run(finished_run)
    running = client.get("/").text
    assert f'<tr data-run="{planned.run_id}">' in running
    assert running.count('max="6" value="4"') == 1 and running.count('max="6" value="6"') == 1
    run_local(finished_run.env.settings, planned.queued, processes=1)
    finished = client.get("/").text
    assert finished.count('max="6" value="6"') == 2 and finished == client.get("/").text


def test_the_run_page_shows_the_runs_whole_progress_live_and_when_its_grid_is_filtered(
    client: TestClient, finished_run: FinishedRun
) -> None:
    planned = _plan_a_live_run(finished_run)
    api = client.get(f"/api/runs/{planned.run_id}").json()
    assert (api["done"], api["total"], api["failed"]) == (4, 6, 2)
    progress = '<progress data-field="progress" max="6" value="4">'
    for params in ({}, {"state": "failed"}, {"application": "app-1"}):
        page = client.get(f"/runs/{planned.run_id}", params=params).text
        assert progress in page and '<span data-field="failed">2</span>' in page


def test_a_target_fixed_after_a_failure_is_diffed_against_its_last_rendered_output_shown_first(
    example_client: TestClient, example_fleet: ExampleFleet
) -> None:
    storage = example_fleet.env.storage
    app_yaml = example_fleet.root / "applications" / "storefront" / "app.yaml"
    good = app_yaml.read_text()
    app_yaml.write_text(good.replace("cpu: 250m", "cpu: lots"))
    _, broken = plan_catalog(storage, example_fleet.root)
    run_local(example_fleet.env.settings, broken.queued, processes=1)
    app_yaml.write_text(good.replace("cpu: 250m", "cpu: 300m"))
    _, fixed = plan_catalog(storage, example_fleet.root)
    run_local(example_fleet.env.settings, fixed.queued, processes=1)
    target = example_client.get(
        f"/api/runs/{fixed.run_id}/targets", params={"application": "storefront", "state": "succeeded"}
    ).json()[0]
    page = example_client.get(f"/runs/{fixed.run_id}/targets/{target['id']}").text
    diff = page[page.index('<section class="diff">') : page.index('<section class="output">')]
    assert f'<a href="/runs/{example_fleet.run_id}">' in diff  # the good run, not the failed one
    assert "250m" in diff and "300m" in diff
    assert "lots" not in diff and diff.count("\n+") < 10  # a change of one value, not a whole output added
