"""``farm gc``: find orphans both ways and sweep unreferenced blobs.

Reports blobs that no row points at, and rows that point at a missing blob. Without
``--dry-run`` it deletes unreferenced blobs older than the grace period; the grace period covers
writers that have put a blob and not yet committed its row. Rows with a missing blob are never
"fixed": they make the exit status 1, like ``farm verify``.
"""

from __future__ import annotations

from datetime import timedelta

import typer

from farm.commands._support import reported_errors, storage
from farm.store.audit import SweepReport, sweep

DEFAULT_GRACE_SECONDS = 3600


def gc_command(
    dry_run: bool = typer.Option(False, "--dry-run", help="report only; delete nothing"),
    grace_seconds: int = typer.Option(
        DEFAULT_GRACE_SECONDS, "--grace-seconds", min=0, help="keep unreferenced blobs younger than this"
    ),
) -> None:
    """Report orphan blobs and rows pointing at missing blobs; remove old orphan blobs."""
    with reported_errors(), storage(existing=True) as opened, opened.sessions() as session:
        report = sweep(session, opened.objects, dry_run=dry_run, grace=timedelta(seconds=grace_seconds))
    _print(report, dry_run)
    if report.missing:
        raise typer.Exit(1)


def _print(report: SweepReport, dry_run: bool) -> None:
    for blob in report.unreferenced:
        if blob.digest in report.removed:
            action = "removed"
        elif blob.digest in report.kept_in_grace:
            action = "kept (younger than the grace period)"
        else:
            action = "would remove" if dry_run else "kept (referenced again)"
        typer.echo(f"orphan blob sha256/{blob.digest} ({blob.size} bytes, no row points at it): {action}")
    for digest, columns in report.missing.items():
        typer.echo(f"missing blob sha256/{digest}: referenced by {', '.join(columns)}")
    typer.echo(
        f"{len(report.unreferenced)} orphan blob(s), {len(report.missing)} row reference(s) to missing blobs, "
        f"{len(report.removed)} removed"
    )


def register(app: typer.Typer) -> None:
    app.command("gc")(gc_command)
