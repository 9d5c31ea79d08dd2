"""``farm gc``: prune old runs' rows, find orphans both ways and sweep unreferenced blobs.

With ``--keep-runs N`` and/or ``--older-than DURATION`` it first prunes the runs retention does not
keep (``farm.store.retention``: their jobs and the target rows no evidence names, never an output,
a record, the caches, a qualification's or an audit's runs, nor a fleet's latest complete run).
Then it reports blobs that no row points at, and rows that point at a missing blob. Without
``--dry-run`` it deletes unreferenced blobs older than the grace period, and none while a
snapshot's manifest cannot be read (what it names is unknown); the grace period covers
writers that have put a blob and not yet committed its row. Rows with a missing blob are never
"fixed": they make the exit status 1, like ``farm verify``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import typer

from farm.commands._support import reported_errors, storage
from farm.core.durations import DurationError, parse_duration
from farm.store.audit import SweepReport, sweep
from farm.store.retention import PruneReport, Retention, prune_runs

DEFAULT_GRACE_SECONDS = 3600


def gc_command(
    dry_run: bool = typer.Option(False, "--dry-run", help="report only; delete nothing"),
    grace_seconds: int = typer.Option(
        DEFAULT_GRACE_SECONDS,
        "--grace-seconds",
        min=0,
        max=timedelta.max.days * 86400,  # timedelta holds no more
        help="keep unreferenced blobs younger than this",
    ),
    keep_runs: int | None = typer.Option(
        None, "--keep-runs", min=1, help="prune the runs of each fleet older than its N newest finished runs"
    ),
    older_than: str | None = typer.Option(
        None, "--older-than", help="prune the runs created longer ago than this (e.g. 720h, 30d)"
    ),
) -> None:
    """Prune old runs' rows (with --keep-runs/--older-than); report orphan blobs and rows pointing
    at missing blobs; remove old orphan blobs."""
    retention = Retention(keep_runs, _duration(older_than))
    with reported_errors(), storage(existing=True) as opened, opened.sessions() as session:
        if retention.prunes:
            pruned = prune_runs(session, retention, dry_run=dry_run)
            session.commit()
            _print_pruned(pruned, dry_run)
        report = sweep(session, opened.objects, dry_run=dry_run, grace=timedelta(seconds=grace_seconds))
    _print(report, dry_run)
    if report.missing or report.unreadable:
        raise typer.Exit(1)


def _duration(text: str | None) -> timedelta | None:
    """``--older-than``: a Go duration (``90m``, ``720h``) or a number of days (``30d``)."""
    if text is None:
        return None
    try:
        # days are no Go duration unit: "-1d" said 'unknown unit "d"', though 30d is accepted
        if text.endswith("d") and text[:-1].removeprefix("-").isdigit():
            duration = timedelta(days=int(text[:-1]))
        else:
            duration = timedelta(microseconds=parse_duration(text) // 1000)
        if duration >= timedelta(0):
            datetime.now(UTC) - duration  # the runs are compared with this date: it must be one
    except DurationError as error:
        raise typer.BadParameter(
            f"{error} (expected e.g. 30d, 720h or 90m)", param_hint="--older-than"
        ) from None
    except OverflowError:
        raise typer.BadParameter(
            f"{text!r} reaches back before the year 1 (expected e.g. 30d, 720h or 90m)",
            param_hint="--older-than",
        ) from None
    if duration < timedelta(0):
        raise typer.BadParameter(f"{text!r} is negative", param_hint="--older-than")
    return duration


def _print_pruned(report: PruneReport, dry_run: bool) -> None:
    verb = "would prune" if dry_run else "pruned"
    removed = "would remove" if dry_run else "removed"
    typer.echo(
        f"{verb} {len(report.runs)} run(s): {removed} {report.targets} target row(s) no evidence names, "
        f"{report.jobs} job row(s), {report.run_rows} run row(s) left without targets"
    )


def _print(report: SweepReport, dry_run: bool) -> None:
    for blob in report.unreferenced:
        if blob.digest in report.removed:
            action = "removed"
        elif blob.digest in report.kept_in_grace:
            action = "kept (younger than the grace period)"
        elif report.unreadable:
            action = "kept (a snapshot manifest cannot be read)"
        else:
            action = "would remove" if dry_run else "kept (referenced again)"
        typer.echo(f"orphan blob sha256/{blob.digest} ({blob.size} bytes, no row points at it): {action}")
    for digest, columns in report.missing.items():
        typer.echo(f"missing blob sha256/{digest}: referenced by {', '.join(columns)}")
    for snapshot, why in report.unreadable.items():
        typer.echo(
            f"unreadable snapshot {snapshot}: {why}; nothing is removed until it is restored (or its"
            " catalog runs again, which stores it again): what it names is unknown"
        )
    typer.echo(
        f"{len(report.unreferenced)} orphan blob(s), {len(report.missing)} row reference(s) to missing blobs, "
        f"{len(report.removed)} removed"
    )


def register(app: typer.Typer) -> None:
    app.command("gc")(gc_command)
