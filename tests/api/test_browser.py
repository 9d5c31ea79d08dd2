"""The dashboard in headless Debian Chromium, driven by Playwright, over a real `farm serve`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fleet.conftest import FleetEnv

from api.conftest import FinishedRun

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


@pytest.fixture
def served(finished_run: FinishedRun) -> Iterator[str]:
    env: FleetEnv = finished_run.env
    port = _free_port()
    farm = Path(sys.executable).parent / "farm"
    process = subprocess.Popen(
        [str(farm), "serve", "--port", str(port), "--catalog", str(finished_run.catalog_root)],
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


@pytest.mark.timeout(120)
def test_a_person_clicks_from_the_runs_list_to_a_failed_target_and_an_output(
    served: str, finished_run: FinishedRun, tmp_path: Path
) -> None:
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is missing: apt-get install -y chromium (.ci/run does it)")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    print(f"screenshots in {ARTIFACTS}")
    with sync_playwright() as driver:
        browser = driver.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM), args=ARGS, headless=True
        )
        page = browser.new_page()
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
        browser.close()
