"""``farm worker``, ``farm beat`` and ``farm reconcile``: the Celery side of fleet runs."""

from __future__ import annotations

import typer

from farm.commands._support import fail, reported_errors
from farm.settings import BROKER_REQUIRED, load_settings


def _require_broker() -> None:
    """Refuse, before Celery starts, when no broker is configured (or the settings are bad)."""
    with reported_errors():
        configured = load_settings().broker_url
    if not configured:
        raise fail(BROKER_REQUIRED)


def worker_command(
    concurrency: int | None = typer.Option(
        None, "--concurrency", "-c", min=1, help="worker processes (default: every core)"
    ),
    loglevel: str = typer.Option("INFO", "--loglevel"),
    metrics_port: int | None = typer.Option(
        None, "--metrics-port", min=1, max=65535, help="serve Prometheus metrics on this port (default: none)"
    ),
) -> None:
    """Start a Celery worker that renders jobs from <FARM_CELERY_QUEUE>.<core version> (broker:
    FARM_BROKER_URL)."""
    _require_broker()
    if metrics_port:
        _serve_worker_metrics(metrics_port)
    from workers.celery_app import app as celery_app

    queue = celery_app.conf.task_default_queue
    argv = ["worker", f"--loglevel={loglevel}", "-Q", queue, "--without-gossip", "--without-mingle"]
    if concurrency:
        argv.append(f"--concurrency={concurrency}")
    celery_app.worker_main(argv)


def _serve_worker_metrics(port: int) -> None:
    """Serve the worker's metrics on ``port``: the pool processes (which render) write their
    histograms to a multiprocess folder this process reads, plus the database gauges."""
    import os
    import tempfile

    # Must be set before prometheus_client is first imported, here and in the pool processes.
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="farm-metrics-")
    from prometheus_client import CollectorRegistry, multiprocess, start_http_server

    from farm.metrics import register_collector
    from farm.store.context import open_storage

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    with reported_errors():
        register_collector(open_storage(), registry)
        start_http_server(port, registry=registry)


def beat_command(loglevel: str = typer.Option("INFO", "--loglevel")) -> None:
    """Start Celery beat (exactly one per farm). It schedules, in UTC:

    reconcile-stale-jobs (farm.reconcile): re-send the jobs stuck in queued or running; FARM_RECONCILE_SCHEDULE, crontab, default every minute (* * * * *).

    qualification-find-due (farm.qualification.find_due): refresh every qualification state against FARM_QUALIFICATION_CATALOG, then send each stale, expired, failed or unqualified subject to a worker, claimed for FARM_QUALIFICATION_CLAIM_LEASE_SECONDS (default 3600); FARM_QUALIFICATION_SCHEDULE, crontab, default every 5 minutes (*/5 * * * *).

    audit-sample (farm.audit), only when FARM_AUDIT_SAMPLE is above 0: a sampled farm audit of the latest run, every FARM_AUDIT_INTERVAL seconds (default 86400).
    """
    _require_broker()
    from workers.celery_app import app as celery_app

    celery_app.start(["beat", f"--loglevel={loglevel}"])


def reconcile_command(
    timeout: float = typer.Option(
        300.0,
        "--timeout",
        min=0,
        help="seconds a job may sit in queued or running before it is sent again (0: every open job)",
    ),
) -> None:
    """Run the reconciler once: re-send, via Celery, the jobs stuck in queued or running."""
    _require_broker()
    from datetime import timedelta

    from farm.execution.celery import CeleryQueue
    from farm.fleet.reconcile import reconcile
    from farm.store.context import open_storage
    from farm.store.migrate import prepare_database

    storage = open_storage()
    try:
        prepare_database(storage)
        sent = reconcile(storage, CeleryQueue(storage.settings), timedelta(seconds=timeout))
    finally:
        storage.close()
    typer.echo(f"re-sent {sent} job{'s' if sent != 1 else ''}")


def register(app: typer.Typer) -> None:
    app.command("worker")(worker_command)
    app.command("beat")(beat_command)
    app.command("reconcile")(reconcile_command)
