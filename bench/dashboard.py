#!/usr/bin/env python3
"""Latency of the dashboard's main requests over a large history, through the HTTP API.

Creates a PostgreSQL database (dropped at the end), migrates it, fills it with 50 runs of 2,000
target results each (100 applications x 20 clusters, 5% failed) with the store's bulk insert, starts
a real uvicorn server on a free loopback port and measures p50/p95 of, with httpx:

- the runs list (``GET /api/runs``) and its page (``GET /``, 20 runs with progress bars);
- a run's grid (``GET /api/runs/{id}/grid``, 100 x 20 cells) and the run page drawing it
  (``GET /runs/{id}``);
- a live run's progress (``GET /api/runs/{id}``, counted on every request: the page polls it) and
  its page (``GET /runs/{id}``); the other 49 runs are finished, their counts kept in the server;
- every target of a run with its details (``GET /api/runs/{id}/targets``, 2,000 rows);
- the failed targets of a run (``GET /api/runs/{id}/targets?state=failed``);
- a target's history (``GET /api/targets/{app}/{cluster}/history``, 50 runs);
- the qualification board (``GET /api/qualification``, 60 subjects).

Target: p95 <= 50 ms each. Prints the figures, then one line holding them as a JSON object.

    .venv/bin/python bench/dashboard.py [--requests N] [--server postgresql://127.0.0.1:5432]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import psycopg  # noqa: E402
import uvicorn  # noqa: E402

from farm.api import create_app  # noqa: E402
from farm.settings import load_settings  # noqa: E402
from farm.store import models  # noqa: E402
from farm.store.context import open_storage  # noqa: E402
from farm.store.db import session_scope  # noqa: E402
from farm.store.migrate import upgrade  # noqa: E402
from farm.store.runs import insert_run  # noqa: E402

RUNS, APPS, CLUSTERS = 50, 100, 20


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def fill(storage) -> list[str]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    snapshot = _digest("snapshot")
    outputs = [_digest(f"out-{i}") for i in range(APPS * CLUSTERS)]
    with session_scope(storage.sessions) as session:
        session.add(models.CatalogSnapshot(digest=snapshot, source="bench"))
        session.add_all(models.RenderOutput(digest=d, size_bytes=100) for d in outputs)
    run_ids = []
    for r in range(RUNS):
        run_id = uuid.uuid4().hex
        created = start + timedelta(hours=r)
        run = {
            "id": run_id,
            "snapshot_digest": snapshot,
            "core_version": "bench",
            "state": "running" if r == RUNS - 2 else "completed",  # one run still live
            "created_at": created,
            "finished_at": created,
        }
        targets = []
        for a in range(APPS):
            for c in range(CLUSTERS):
                i = a * CLUSTERS + c
                failed = (i + r) % 20 == 0
                targets.append(
                    {
                        "id": uuid.uuid4().hex,
                        "run_id": run_id,
                        "application": f"app-{a:03}",
                        "cluster_profile": f"cluster-{c:02}",
                        "selection": "",
                        "action_key": _digest(f"{r}-{i}"),
                        "state": "failed" if failed else "succeeded",
                        "error_code": "property.invalid" if failed else None,
                        "error_message": "spec.image: no tag" if failed else None,
                        "output_digest": None if failed else outputs[i],
                        "created_at": created,
                        "finished_at": created,
                    }
                )
        with session_scope(storage.sessions) as session:
            insert_run(session, run, [], targets)
        run_ids.append(run_id)
    with session_scope(storage.sessions) as session:
        session.add_all(
            models.QualificationSubject(
                cluster_profile=f"cluster-{c:02}",
                selection=f"ingress=v{v}",
                state="qualified" if (c + v) % 7 else "stale",
                reason="" if (c + v) % 7 else "digest_drift",
                since=start,
            )
            for c in range(CLUSTERS)
            for v in range(3)
        )
    return run_ids


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def measure(client: httpx.Client, path: str, params: dict, n: int) -> dict[str, float]:
    client.get(path, params=params).raise_for_status()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        client.get(path, params=params).raise_for_status()
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {"p50_ms": round(statistics.median(times), 1), "p95_ms": round(times[int(0.95 * (n - 1))], 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--server", default="postgresql://127.0.0.1:5432")
    args = parser.parse_args()
    name = f"farm_bench_dashboard_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{args.server}/test", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = f"{args.server.replace('postgresql://', 'postgresql+psycopg://')}/{name}"
    try:
        upgrade(url)
        storage = open_storage(load_settings(database_url=url, home=Path("/tmp") / name))
        t0 = time.perf_counter()
        run_ids = fill(storage)
        fill_s = time.perf_counter() - t0
        port = _free_port()
        server = uvicorn.Server(uvicorn.Config(create_app(storage), port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        run = run_ids[-1]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            figures = {
                "runs_list": measure(client, "/api/runs", {}, args.requests),
                "runs_page": measure(client, "/", {}, args.requests),
                "run_grid": measure(client, f"/api/runs/{run}/grid", {}, args.requests),
                "run_page": measure(client, f"/runs/{run}", {}, args.requests),
                "live_run": measure(client, f"/api/runs/{run_ids[-2]}", {}, args.requests),
                "live_run_page": measure(client, f"/runs/{run_ids[-2]}", {}, args.requests),
                "all_targets": measure(client, f"/api/runs/{run}/targets", {}, args.requests),
                "failed_targets": measure(
                    client, f"/api/runs/{run}/targets", {"state": "failed"}, args.requests
                ),
                "target_history": measure(
                    client, "/api/targets/app-042/cluster-07/history", {}, args.requests
                ),
                "qualification_board": measure(client, "/api/qualification", {}, args.requests),
            }
        server.should_exit = True
        thread.join(timeout=10)
        storage.close()
    finally:
        with psycopg.connect(f"{args.server}/test", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(f"filled {RUNS} runs x {APPS * CLUSTERS} targets in {fill_s:.1f} s")
    for label, figure in figures.items():
        ok = "ok" if figure["p95_ms"] <= 50 else "OVER 50 ms"
        print(f"{label:20} p50 {figure['p50_ms']:7.1f} ms  p95 {figure['p95_ms']:7.1f} ms  {ok}")
    print(json.dumps({"targets": RUNS * APPS * CLUSTERS, "runs": RUNS, "fill_s": round(fill_s, 1)} | figures))


if __name__ == "__main__":
    main()
