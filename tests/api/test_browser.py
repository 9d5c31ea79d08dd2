"""The dashboard in headless Debian Chromium, driven by Playwright, over a real `farm serve`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from fleet.conftest import FleetEnv

from api.conftest import ExampleFleet, FinishedRun

if TYPE_CHECKING:
    from playwright.sync_api import Page

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / ".farm-artifacts" / "browser"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def _farm_serve(env: FleetEnv, catalog_root: Path) -> Iterator[str]:
    port = _free_port()
    farm = Path(sys.executable).parent / "farm"
    process = subprocess.Popen(
        [str(farm), "serve", "--port", str(port), "--catalog", str(catalog_root)],
        env=os.environ | env.environ(),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                httpx.get(f"{base}/api/runs", timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None, "farm serve exited"
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def served(finished_run: FinishedRun) -> Iterator[str]:
    with _farm_serve(finished_run.env, finished_run.catalog_root) as base:
        yield base


@pytest.fixture
def served_example(example_fleet: ExampleFleet) -> Iterator[str]:
    with _farm_serve(example_fleet.env, example_fleet.root) as base:
        yield base


@contextmanager
def _browser(profile: Path) -> Iterator[Page]:
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing: apt-get install -y chromium (.ci/run does it)")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    print(f"screenshots in {ARTIFACTS}")
    with sync_playwright() as driver:
        browser = driver.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), args=ARGS, headless=True
        )
        try:
            yield browser.new_page()
        finally:
            browser.close()


@pytest.mark.timeout(120)
def test_a_person_clicks_from_the_runs_list_to_a_failed_target_and_an_output(
    served: str, finished_run: FinishedRun, tmp_path: Path
) -> None:
    with _browser(tmp_path / "chromium-profile") as page:
        page.goto(served + "/")
        assert page.locator("progress").first.get_attribute("value") == "6"
        page.screenshot(path=str(ARTIFACTS / "1-runs.png"), full_page=True)

        page.click(f"a.run-link:text('{finished_run.run_id}')")
        page.wait_for_url(f"**/runs/{finished_run.run_id}")
        assert page.locator("a.cell.failed").count() == 2
        assert page.locator("a.cell.succeeded").count() == 4
        page.screenshot(path=str(ARTIFACTS / "2-run.png"), full_page=True)

        page.locator("a.cell.failed").first.click()
        page.wait_for_url("**/targets/**")
        assert "app-2" in page.locator("h1").inner_text()
        assert page.locator("pre.error-message").inner_text().strip()
        page.screenshot(path=str(ARTIFACTS / "3-failed-target.png"), full_page=True)

        page.goto(served + f"/runs/{finished_run.run_id}?application=app-0&cluster=cluster-a")
        page.locator("a.cell.succeeded").click()
        page.wait_for_url("**/targets/**")
        page.click("a.output-link")
        page.wait_for_url("**/outputs/**")
        assert "kind: Deployment" in page.locator(".highlight").inner_text()
        page.screenshot(path=str(ARTIFACTS / "4-output.png"), full_page=True)


@pytest.mark.timeout(180)
def test_a_person_browses_the_example_fleet_from_a_run_to_an_output_and_the_qualification_board(
    served_example: str, example_fleet: ExampleFleet, tmp_path: Path
) -> None:
    with _browser(tmp_path / "chromium-profile") as page:
        page.goto(served_example + "/")
        assert page.locator("a.run-link").count() == 2  # the fleet run and the qualification's run
        page.screenshot(path=str(ARTIFACTS / "example-1-runs.png"), full_page=True)

        page.click(f"a.run-link:text('{example_fleet.run_id}')")
        page.wait_for_url(f"**/runs/{example_fleet.run_id}")
        assert page.locator("a.cell.succeeded").count() == 31 and page.locator("a.cell.failed").count() == 0
        assert "storefront" in page.locator("table.grid").inner_text()
        page.screenshot(path=str(ARTIFACTS / "example-2-run.png"), full_page=True)

        page.fill("input[name=application]", "storefront")
        page.fill("input[name=cluster]", "prod-nginx")
        page.click("form.filters button")
        page.wait_for_url("**application=storefront**")
        page.locator("a.cell.succeeded").click()
        page.wait_for_url("**/targets/**")
        assert page.locator("h1").inner_text() == "storefront / prod-nginx"
        page.screenshot(path=str(ARTIFACTS / "example-3-target.png"), full_page=True)

        page.click("a.output-link")
        page.wait_for_url("**/outputs/**")
        assert page.locator("b.signature").inner_text() == "valid"
        assert "storefront" in page.locator("table.provenance").inner_text()
        assert "kind:" in page.locator(".highlight").inner_text()
        page.screenshot(path=str(ARTIFACTS / "example-4-output.png"), full_page=True)

        page.click("nav.main a:text('qualification')")
        page.wait_for_url("**/qualification")
        board = page.locator("section[data-state=qualified]")
        assert "prod-nginx" in board.inner_text() and "ingress-class=public" in board.inner_text()
        page.screenshot(path=str(ARTIFACTS / "example-5-qualification.png"), full_page=True)

        board.locator("a.subject-link").first.click()
        page.wait_for_url("**/qualification/*")
        assert page.locator("b.state").inner_text() == "qualified"
        assert page.locator("tr.entry.evidence.current").count() == 1
        page.screenshot(path=str(ARTIFACTS / "example-6-subject.png"), full_page=True)

        page.click("nav.main a:text('snapshots')")
        page.wait_for_url("**/snapshots")
        assert "example" in page.locator("table.snapshots").inner_text()
        page.screenshot(path=str(ARTIFACTS / "example-7-snapshots.png"), full_page=True)


@pytest.mark.timeout(180)
def test_a_person_finds_why_a_target_of_the_example_fleet_failed_after_a_bad_change(
    example_fleet: ExampleFleet, tmp_path: Path
) -> None:
    """examples/fleet is run, then run again after a change that breaks storefront's cpu request:
    from the runs list to that run, to a failed storefront target (its error), and on to the
    output of the previous, good render of the same target."""
    from farm.execution.local import run_local
    from farm.fleet.service import plan_catalog

    app_yaml = example_fleet.root / "applications" / "storefront" / "app.yaml"
    app_yaml.write_text(app_yaml.read_text().replace("cpu: 250m", "cpu: lots"))
    storage = example_fleet.env.storage
    _, planned = plan_catalog(storage, example_fleet.root)
    run_local(example_fleet.env.settings, planned.queued, processes=1)
    with _farm_serve(example_fleet.env, example_fleet.root) as base, _browser(tmp_path / "profile") as page:
        page.goto(base + "/")
        page.click(f"a.run-link:text('{planned.run_id}')")
        page.wait_for_url(f"**/runs/{planned.run_id}")
        failed = page.locator("a.cell.failed")
        assert failed.count() == 3  # storefront on each of its three clusters
        assert page.locator("a.cell.cached").count() + page.locator("a.cell.succeeded").count() == 28
        page.screenshot(path=str(ARTIFACTS / "example-failed-1-run.png"), full_page=True)

        failed.first.click()
        page.wait_for_url("**/targets/**")
        assert page.locator("h1").inner_text().startswith("storefront / ")
        error = page.locator("pre.error-message").inner_text()
        assert "resources.requests.cpu: invalid quantity 'lots'" in error
        assert "nothing to compare" in page.locator("p.no-output").inner_text()  # not a deleted manifest
        page.screenshot(path=str(ARTIFACTS / "example-failed-2-target.png"), full_page=True)

        cluster = page.locator("h1").inner_text().split(" / ")[1]
        page.click(f"section h2 a:text('{example_fleet.run_id}')")  # the run it is compared with
        page.wait_for_url(f"**/runs/{example_fleet.run_id}")
        page.goto(base + f"/runs/{example_fleet.run_id}?application=storefront&cluster={cluster}")
        page.locator("a.cell.succeeded").click()
        page.wait_for_url("**/targets/**")
        page.click("a.output-link")  # the last good render of the target that now fails
        page.wait_for_url("**/outputs/**")
        assert "cpu: 250m" in page.locator(".highlight").inner_text()
        page.screenshot(path=str(ARTIFACTS / "example-failed-3-previous-output.png"), full_page=True)


LONG_APP = "an-application-whose-name-is-long-enough-to-widen-any-table"
LONG_CLUSTER = "a-cluster-profile-whose-name-is-long-enough-to-widen-a-grid"


def _background(page: Page, selector: str) -> tuple[int, ...]:
    colour = page.locator(selector).first.evaluate("e => getComputedStyle(e).backgroundColor")
    return tuple(int(part) for part in colour[colour.index("(") + 1 : colour.index(")")].split(",")[:3])


@pytest.mark.timeout(180)
def test_the_runs_list_shows_counts_rendered_and_cached_differ_long_names_wrap_and_the_diff_comes_first(
    fleet_env: FleetEnv, tmp_path: Path
) -> None:
    from fleet.conftest import make_catalog

    from farm.execution.local import run_local
    from farm.fleet.service import plan_catalog

    catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a", LONG_CLUSTER))
    catalog.write_app(LONG_APP)
    for _ in range(2):  # the second run renders app-0 again and serves the long-named app from the cache
        _, planned = plan_catalog(fleet_env.storage, catalog.root)
        run_local(fleet_env.settings, planned.queued, processes=1)
        catalog.write_app("app-0", image="ghcr.io/example/app:v2.0.0")
    with _farm_serve(fleet_env, catalog.root) as base, _browser(tmp_path / "profile") as page:
        page.set_viewport_size({"width": 480, "height": 800})  # a phone: nothing may widen the page
        page.goto(base + "/")
        row = page.locator(f"tr[data-run='{planned.run_id}']")
        fields = {
            name: row.locator(f"[data-field={name}]").inner_text() for name in ("fleet", "kind", "trigger")
        }
        assert fields == {"fleet": "test-fleet", "kind": "fleet", "trigger": "cli"}
        assert row.locator("[data-field=duration]").inner_text().endswith(" s")
        assert row.locator("[data-count=succeeded]").inner_text() == "2"
        assert row.locator("[data-count=cached]").inner_text() == "2"
        assert row.locator("[data-field=failed]").inner_text() == "0"
        page.screenshot(path=str(ARTIFACTS / "counts-1-runs.png"), full_page=True)

        page.click(f"a.run-link:text('{planned.run_id}')")
        page.wait_for_url(f"**/runs/{planned.run_id}")
        rendered, cached = _background(page, "a.cell.succeeded"), _background(page, "a.cell.cached")
        assert sum((a - b) ** 2 for a, b in zip(rendered, cached, strict=True)) ** 0.5 > 150
        assert page.evaluate("document.documentElement.scrollWidth") <= 480  # long names and ids wrap
        page.screenshot(path=str(ARTIFACTS / "counts-2-run-rendered-and-cached.png"), full_page=True)

        page.goto(base + f"/runs/{planned.run_id}?application=app-0&cluster=cluster-a")
        page.locator("a.cell.succeeded").click()
        page.wait_for_url("**/targets/**")
        diff, output = page.locator("section.diff"), page.locator("section.output")
        assert "v2.0.0" in diff.inner_text()
        assert diff.bounding_box()["y"] < output.bounding_box()["y"]
        page.screenshot(path=str(ARTIFACTS / "counts-3-target-diff-first.png"), full_page=True)

        page.goto(base + "/snapshots")
        page.locator("a.diff-link").first.click()  # the second run's catalog against the first's
        page.wait_for_url("**/diff/**")
        document = page.locator("details.document[data-path='applications/app-0/app.yaml']")
        assert "ghcr.io/example/app:v2.0.0" in document.locator("tr.key.changed").inner_text()
        page.screenshot(path=str(ARTIFACTS / "counts-4-snapshot-diff-keys.png"), full_page=True)


@pytest.mark.timeout(120)
def test_docs_renders_every_operation_with_the_network_to_other_hosts_blocked(
    served: str, tmp_path: Path
) -> None:
    own_host = served.removeprefix("http://")
    refused: list[str] = []

    def only_own_host(route, request) -> None:  # noqa: ANN001 (playwright's types)
        if request.url.split("/")[2] == own_host:
            route.continue_()
        else:
            refused.append(request.url)
            route.abort()

    with _browser(tmp_path / "profile") as page:
        page.route("**/*", only_own_host)
        page.goto(served + "/docs")
        page.locator(".opblock").first.wait_for(timeout=30_000)
        paths = page.locator(".opblock-summary-path").all_inner_texts()
        assert "/api/runs" in [p.replace("\u200b", "") for p in paths]
        operations = httpx.get(served + "/openapi.json").json()["paths"].values()
        assert len(paths) == sum(len(methods) for methods in operations)
        page.screenshot(path=str(ARTIFACTS / "docs-offline.png"), full_page=True)
    assert refused == []
