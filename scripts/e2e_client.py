"""The API side of scripts/e2e, with the standard library only: trigger a run of a configured
catalog (bearer token from FARM_API_TOKEN), wait for it through the API, and check the dashboard's
run page shows it. Each failure is one ``e2e:`` line on stderr and exit status 1."""

from __future__ import annotations

import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

WAIT_SECONDS = 240.0


def _call(url: str, *, body: dict | None = None, accept: str = "application/json") -> tuple[int, str]:
    headers = {"Accept": accept}
    if body is not None:
        headers |= {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {os.environ['FARM_API_TOKEN']}",
        }
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if body else "GET")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def _fail(message: str) -> None:
    sys.stderr.write(f"e2e: {message}\n")
    raise SystemExit(1)


def trigger(base: str, catalog: str) -> None:
    """POST /api/runs: print the new run's id."""
    status, text = _call(f"{base}/api/runs", body={"catalog": catalog})
    if status != 202:
        _fail(f"POST /api/runs answered {status}: {text[:500]}")
    print(json.loads(text)["run_id"])


def wait(base: str, run_id: str) -> None:
    """Poll GET /api/runs/{id} until every target is done and the run finished: print its JSON."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        status, text = _call(f"{base}/api/runs/{run_id}")
        if status != 200:
            _fail(f"GET /api/runs/{run_id} answered {status}: {text[:500]}")
        run = json.loads(text)
        if run["done"] == run["total"] and run["state"] != "running":
            print(json.dumps(run, sort_keys=True))
            return
        if time.monotonic() > deadline:
            _fail(f"run {run_id} not finished after {WAIT_SECONDS:.0f}s: {text}")
        time.sleep(0.5)


def dashboard(base: str, run_id: str) -> None:
    """GET /runs/{id} (HTML): the page names the run and shows the API's counts and one cell per target."""
    run = json.loads(_call(f"{base}/api/runs/{run_id}")[1])
    status, page = _call(f"{base}/runs/{run_id}", accept="text/html")
    if status != 200:
        _fail(f"GET /runs/{run_id} answered {status}")
    shown = {
        field: value for field, value in re.findall(r'data-field="(state|done|total|failed)">([^<]*)<', page)
    }
    expected = {field: str(run[field]) for field in ("state", "done", "total", "failed")}
    cells = len(re.findall(r'class="cell (?:succeeded|cached)"', page))
    if f"Run {run_id}" not in page or shown != expected or cells != run["total"] - run["failed"]:
        _fail(
            f"the run page does not show run {run_id} as the API does: {shown} vs {expected}, {cells} cells"
        )
    print(
        f"e2e: dashboard shows run {run_id}: {shown['done']}/{shown['total']} done, {shown['failed']} failed"
    )


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    {"trigger": trigger, "wait": wait, "dashboard": dashboard}[command](*args)
