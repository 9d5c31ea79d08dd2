"""The farm's Prometheus metrics, on prometheus_client's default registry.

- ``farm_jobs{state}`` and ``farm_queue_depth``: gauges read from the database at scrape time by a
  custom collector (``register_collector``), so every process that serves metrics reports the same
  truth however many workers there are; the SQL lives in ``farm/store``.
- ``farm_render_seconds`` (one target's render) and ``farm_job_seconds`` (one job, claim to record):
  histograms observed in ``farm/fleet/jobs.py``.
- ``farm_cache_lookups_total{result="hit"|"miss"}``: counted at planning; the hit ratio is
  ``rate(...{result="hit"}) / rate(...)``.
- ``farm_http_request_seconds{method,route,status}``: a histogram of the API's requests, by route
  template (``/api/runs/{run_id}``, never the id itself: the label set stays small), observed in
  ``farm/api/access_log.py``; its ``_count`` is the request counter.

The API mounts ``prometheus_client.make_asgi_app()``; ``farm worker --metrics-port N`` serves the
same from a worker (its pool processes write to a multiprocess folder the server reads).
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from farm.store.context import Storage
from farm.store.db import session_scope
from farm.store.models import JobState
from farm.store.runs import job_counts_by_state

RENDER_SECONDS = Histogram(
    "farm_render_seconds",
    "Seconds one target's render took (core.render, without signing or storing).",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
JOB_SECONDS = Histogram(
    "farm_job_seconds",
    "Seconds one job (a batch of targets) took, from its claim to its recorded results.",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)
CACHE_LOOKUPS = Counter(
    "farm_cache_lookups",
    "Targets whose action key was looked up at planning, by result (hit: output or failure cached).",
    ["result"],
)


HTTP_SECONDS = Histogram(
    "farm_http_request_seconds",
    "Seconds the API took to answer a request, by method, route template and status code.",
    ["method", "route", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)


class DatabaseCollector(Collector):
    """Jobs by state and the queue depth, counted in SQL at every scrape."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with session_scope(self.storage.sessions) as session:
            counts = job_counts_by_state(session)
        jobs = GaugeMetricFamily("farm_jobs", "Jobs of every run by state.", labels=["state"])
        for state in JobState:
            jobs.add_metric([state.value], counts.get(state.value, 0))
        yield jobs
        yield GaugeMetricFamily(
            "farm_queue_depth", "Jobs queued and not yet claimed by a worker.", value=counts.get("queued", 0)
        )


def register_collector(storage: Storage, registry: CollectorRegistry = REGISTRY) -> DatabaseCollector:
    """Add the database gauges of ``storage`` to ``registry`` (the default one unless given)."""
    collector = DatabaseCollector(storage)
    registry.register(collector)
    return collector


class _ProcessMetrics:
    """The default registry's metrics (this process's histograms and counters), as one collector."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


def metrics_registry(storage: Storage) -> CollectorRegistry:
    """A registry for one server: this process's metrics plus the database gauges of ``storage``
    (its own registry, so several apps in one process never register a collector twice)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_ProcessMetrics())
    register_collector(storage, registry)
    return registry


def count_cache_lookups(hits: int, misses: int) -> None:
    CACHE_LOOKUPS.labels(result="hit").inc(hits)
    CACHE_LOOKUPS.labels(result="miss").inc(misses)
