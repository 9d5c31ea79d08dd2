"""The API's JSON and the pages show every moment in UTC with its offset, on both databases."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from .conftest import FinishedRun

UTC_MOMENT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)$")


def test_the_runs_api_gives_each_moment_in_utc_with_its_offset(
    client: TestClient, finished_run: FinishedRun
) -> None:
    listed = client.get("/api/runs").json()
    runs = listed["runs"] if isinstance(listed, dict) else listed
    moments = [run["created_at"] for run in runs]
    one = client.get(f"/api/runs/{finished_run.run_id}").json()
    moments += [value for key, value in one.items() if key.endswith("_at") and value is not None]
    assert moments and all(UTC_MOMENT.match(moment) for moment in moments), moments


def test_the_runs_page_shows_when_a_run_was_made_in_utc_with_its_offset(client: TestClient) -> None:
    page = client.get("/").text
    assert re.search(r"<td>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00</td>", page), page[:2000]
