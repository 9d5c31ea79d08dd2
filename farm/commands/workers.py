"""``farm worker`` and ``farm beat``: the Celery worker and the reconciler's scheduler."""

from __future__ import annotations

import typer


def worker_command(
    concurrency: int = typer.Option(0, "--concurrency", "-c", help="worker processes (default: every core)"),
    loglevel: str = typer.Option("INFO", "--loglevel"),
) -> None:
    """Start a Celery worker that renders jobs (broker: FARM_BROKER_URL)."""
    from workers.celery_app import app as celery_app

    argv = ["worker", f"--loglevel={loglevel}", "--without-gossip", "--without-mingle"]
    if concurrency:
        argv.append(f"--concurrency={concurrency}")
    celery_app.worker_main(argv)


def beat_command(loglevel: str = typer.Option("INFO", "--loglevel")) -> None:
    """Start Celery beat: it runs the reconciler every minute."""
    from workers.celery_app import app as celery_app

    celery_app.start(["beat", f"--loglevel={loglevel}"])


def register(app: typer.Typer) -> None:
    app.command("worker")(worker_command)
    app.command("beat")(beat_command)
