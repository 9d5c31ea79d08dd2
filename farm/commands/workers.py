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
    concurrency: int = typer.Option(0, "--concurrency", "-c", help="worker processes (default: every core)"),
    loglevel: str = typer.Option("INFO", "--loglevel"),
) -> None:
    """Start a Celery worker that renders jobs from FARM_CELERY_QUEUE (broker: FARM_BROKER_URL)."""
    _require_broker()
    from workers.celery_app import app as celery_app

    queue = celery_app.conf.task_default_queue
    argv = ["worker", f"--loglevel={loglevel}", "-Q", queue, "--without-gossip", "--without-mingle"]
    if concurrency:
        argv.append(f"--concurrency={concurrency}")
    celery_app.worker_main(argv)


def beat_command(loglevel: str = typer.Option("INFO", "--loglevel")) -> None:
    """Start Celery beat: it runs the reconciler every minute."""
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

    from farm.scheduler.executors import CeleryQueue
    from farm.scheduler.reconcile import reconcile
    from farm.scheduler.service import prepare_database
    from farm.store.context import open_storage

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
