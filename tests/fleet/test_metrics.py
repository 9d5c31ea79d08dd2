"""The farm's metrics on SQLite and PostgreSQL: cache look-ups counted at planning, and the
database gauges served on a real HTTP endpoint (prometheus_client's server) at scrape time."""

from __future__ import annotations

import socket
import urllib.request

from prometheus_client import REGISTRY, CollectorRegistry, start_http_server
from prometheus_client.parser import text_string_to_metric_families

from farm.execution.local import run_local
from farm.fleet.service import plan_catalog
from farm.metrics import register_collector

from .conftest import Catalog, FleetEnv


def _lookups(result: str) -> float:
    return REGISTRY.get_sample_value("farm_cache_lookups_total", {"result": result}) or 0.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _scrape(port: int) -> dict[tuple[str, tuple], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_planning_counts_cache_hits_and_misses(fleet_env: FleetEnv, catalog: Catalog) -> None:
    hits, misses = _lookups("hit"), _lookups("miss")
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    assert (_lookups("hit") - hits, _lookups("miss") - misses) == (0, 11)
    run_local(fleet_env.settings, planned.queued, processes=1)
    plan_catalog(fleet_env.storage, catalog.root)
    assert (_lookups("hit") - hits, _lookups("miss") - misses) == (11, 11)


def test_jobs_by_state_and_queue_depth_are_read_from_the_database_at_scrape_time(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    registry = CollectorRegistry()
    register_collector(fleet_env.storage, registry)
    port = _free_port()
    server, thread = start_http_server(port, addr="127.0.0.1", registry=registry)
    try:
        assert _scrape(port)[("farm_queue_depth", ())] == 0
        _, planned = plan_catalog(fleet_env.storage, catalog.root)
        samples = _scrape(port)
        assert samples[("farm_jobs", (("state", "queued"),))] == 4
        assert samples[("farm_queue_depth", ())] == 4
        run_local(fleet_env.settings, planned.queued, processes=1)
        samples = _scrape(port)
        assert samples[("farm_jobs", (("state", "succeeded"),))] == 4
        assert samples[("farm_jobs", (("state", "queued"),))] == 0
        assert samples[("farm_queue_depth", ())] == 0
    finally:
        server.shutdown()
        thread.join(timeout=10)
