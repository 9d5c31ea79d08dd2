"""``farm run``, ``farm runs``, ``farm status``, ``farm diff`` and ``farm output``."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from farm.commands._progress import PLAIN_EVERY_SECONDS, RunProgressDisplay
from farm.commands._support import (
    chosen_executor,
    load_catalog_or_exit,
    open_existing_storage,
    reported_errors,
    resolve_run,
)
from farm.fleet.diff import RunDiff, diff_runs, unified_output_diff
from farm.fleet.interrupts import stop_if_requested
from farm.fleet.progress import (
    RunSummary,
    finalize_run_if_done,
    has_open_jobs,
    jobs_taken,
    run_progress,
    run_summary,
)
from farm.fleet.queries import latest_output, recent_runs
from farm.logs import configure_json_logging_if_asked
from farm.settings import FarmSettings, load_settings
from farm.store.context import Storage, open_storage
from farm.store.migrate import prepare_database
from farm.store.runs import CACHED_FAILURE

if TYPE_CHECKING:
    from rich.console import Console

    from farm.store.models import FleetRun as FleetRunRow


def _err() -> Console:
    """The console for messages and progress on this command's stderr (rich is imported when one
    is shown). Made for each use: in the farm daemon, each command has a stderr of its own."""
    from rich.console import Console

    return Console(stderr=True, markup=False)  # messages quote user text: '[/]' is not markup


def _open(existing: bool = False) -> Storage:
    """The storage, migrated; ``existing``: a command that only reads refuses where no farm is."""
    storage = open_existing_storage() if existing else open_storage(load_settings())
    prepare_database(storage)
    return storage


class _KeptStorage:
    """The storage of the last ``farm run`` of this process, where it keeps one (the farm daemon,
    ``keep_run_storage``): the next run with the same settings from the same folder reuses it.
    Its engine keeps the statements it compiled (a fresh engine compiles each of a run's statements
    again, a sixth of a no-change re-run's CPU at 2,000 targets); its pooled connections are
    closed after each command all the same (``farm.store.db.close_sqlite_engines``)."""

    def __init__(self) -> None:
        self.key: tuple[FarmSettings, str] | None = None
        self.storage: Storage | None = None

    def open(self, settings: FarmSettings) -> Storage:
        key = (settings, os.getcwd())
        if self.storage is None or self.key != key:
            if self.storage is not None:
                self.storage.close()
            self.storage, self.key = open_storage(settings), key
        return self.storage


_kept_storage: _KeptStorage | None = None


def keep_run_storage() -> None:
    """Make ``farm run`` in this process reuse its storage from one run to the next while its
    settings and working folder are the same (the farm daemon)."""
    global _kept_storage
    _kept_storage = _KeptStorage()


def _run_storage(settings: FarmSettings) -> Storage:
    """``farm run``'s storage for ``settings``, migrated (kept from the last run where this
    process keeps it)."""
    storage = open_storage(settings) if _kept_storage is None else _kept_storage.open(settings)
    prepare_database(storage)
    return storage


def _print_summary(
    summary: RunSummary, storage: Storage, as_json: bool, publishes: list[dict] | None = None
) -> None:
    """The run's summary; ``publishes`` (``FARM_PUBLISH_TO``): what its publish did, too."""
    if as_json:
        shown = summary.as_json() if publishes is None else {**summary.as_json(), "publishes": publishes}
        typer.echo(json.dumps(shown, sort_keys=True))
        return
    counts = summary.counts
    echo = typer.echo
    echo(f"run {summary.run_id}: {summary.state}")
    cached_failures = counts.get(CACHED_FAILURE, 0)
    echo(
        f"  rendered {counts.get('succeeded', 0)}, cached {counts.get('cached', 0) + cached_failures}"
        f"{f' ({cached_failures} cached failures)' if cached_failures else ''}, "
        f"failed {summary.failed}, open {summary.total - summary.done} of {summary.total} targets"
    )
    for code, failures in sorted(summary.failures.items()):
        echo(f"  failed with {code}: {len(failures)}")
        for failure in failures[:5]:
            cached = " (cached)" if failure.get("cached") == "true" else ""
            echo(f"    {failure['application']}/{failure['cluster']}{cached}: {failure['message']}")
        if len(failures) > 5:
            echo(f"    … and {len(failures) - 5} more (farm status {summary.run_id} --json)")
    echo(f"  outputs in {storage.objects.describe()} (farm output APP/CLUSTER prints one)")
    for publish in publishes or []:
        _print_publish(publish)


def _print_publish(publish: dict) -> None:
    """One publish of the run: its commits or digests and each cluster published or skipped, or
    why it failed and how to resume it."""
    echo = typer.echo
    where = f"{publish['kind']} {publish['destination']}"
    if publish["state"] == "failed":
        echo(f"  publish to {where}: failed: {publish['error']}; farm publish --retry resumes it")
        return
    if publish["state"] != "done":
        echo(f"  publish to {where}: {publish['state']} (the process that finishes the run attempts it)")
        return
    references = ", ".join(f"{name} {ref}" for name, ref in sorted(publish["reference"].items()))
    changed = "published" if publish["changed"] else "unchanged, nothing written"
    echo(f"  publish to {where}: {changed} ({references or 'no reference'})")
    for cluster in publish["clusters"]:
        if cluster["published"]:
            echo(f"    published {cluster['cluster']}: {len(cluster['outputs'])} output(s)")
        else:
            echo(f"    skipped   {cluster['cluster']}: {cluster['reason']}")


NO_WORKER_WARNING_SECONDS = 10.0


def _stuck(summary: RunSummary, waited: float) -> str:
    queued = summary.total - summary.done
    return (
        f"run {summary.run_id}: {queued} of {summary.total} targets still queued after {waited:g} s; "
        f"their jobs stay queued: start or check a worker (farm worker), then follow the run with "
        f"farm status {summary.run_id}"
    )


def _wait_with_progress(
    storage: Storage,
    run_id: str,
    progress: str,
    timeout: float | None = None,
    poll: float = 0.05,
    every: float = PLAIN_EVERY_SECONDS,
) -> RunSummary:
    """Wait until every target is done; past ``timeout`` seconds raise TimeoutError (the message
    says how many are still queued). Says once when no worker has taken a job for a while.

    Every ``poll`` seconds one indexed probe asks whether a job of the run is still open, so the
    command returns within ``poll`` of the last job; the progress (``progress``: terminal, plain
    or off) reads the counts less often (``farm/commands/_progress.py``)."""
    started = time.monotonic()
    warned = False
    with RunProgressDisplay(storage, run_id, progress, sys.stderr, every) as display:
        while has_open_jobs(storage, run_id):
            waited = time.monotonic() - started
            if timeout is not None and waited >= timeout:
                raise TimeoutError(_stuck(run_progress(storage, run_id), round(waited)))
            if not warned and waited >= NO_WORKER_WARNING_SECONDS and not jobs_taken(storage, run_id):
                warned = True
                typer.echo(
                    f"warning: no worker has taken a job of run {run_id} in {NO_WORKER_WARNING_SECONDS:g} s: "
                    + _who_consumes(storage.settings),
                    err=True,
                )
            time.sleep(poll)
            stop_if_requested()
            display.update()
    return _final_summary(storage, run_id)


def _progress_mode(as_json: bool) -> str:
    """A bar on a terminal, plain lines otherwise; none with --json (stdout is for the object)."""
    if as_json:
        return "off"
    return "terminal" if sys.stderr.isatty() else "plain"


def _who_consumes(settings: FarmSettings) -> str:
    """What the broker says of the run's queue: nobody consumes it, or who does (busy workers)."""
    from farm.execution.celery import CeleryQueue

    client = CeleryQueue(settings)
    queue = client.queue_for()
    consumers = client.consumers(queue)
    if consumers is None:
        return f"is a farm worker running for queue {queue}?"
    if not consumers:
        return f"no worker consumes queue {queue}: start one (farm worker) for this core's queue"
    shown = ", ".join(consumers[:5]) + (" …" if len(consumers) > 5 else "")
    return f"{len(consumers)} worker(s) consume queue {queue} ({shown}) but none has taken a job: busy?"


def _publishes(storage: Storage, run_id: str) -> list[dict] | None:
    """What the run's publishes did (``FARM_PUBLISH_TO``); None when the farm publishes nothing."""
    if not storage.settings.publish_to:
        return None
    from farm.publish.service import publish_results_of_run

    return publish_results_of_run(storage, run_id)


def _final_summary(storage: Storage, run_id: str) -> RunSummary:
    finalize_run_if_done(storage, run_id)  # the last worker may not have finished the run row yet
    return run_summary(storage, run_id)


def run_command(
    catalog: Path = typer.Argument(..., help="catalog folder holding fleet.yaml"),
    executor: str = typer.Option(
        None, "--executor", help="local (process pool) or celery; default from FARM_EXECUTOR"
    ),
    wait: bool = typer.Option(True, "--wait/--no-wait", help="wait for every job to finish"),
    as_json: bool = typer.Option(False, "--json", help="print the summary as one JSON object"),
    processes: int | None = typer.Option(
        None, "--processes", min=1, help="local executor: worker processes (default: every core)"
    ),
    timeout: float = typer.Option(
        None,
        "--timeout",
        min=0,
        help="Celery executor: stop waiting after SECONDS, exit 1 naming the targets still queued",
    ),
    strict: bool = typer.Option(
        False, "--strict", help="catalog warnings (a target rule matching nothing …) are errors: plan nothing"
    ),
    progress_every: float = typer.Option(
        PLAIN_EVERY_SECONDS,
        "--progress-every",
        min=0.1,
        help="when stderr is not a terminal (a CI log): a progress line every SECONDS (no --json)",
    ),
) -> None:
    """Render every target of a catalog: cache hits are recorded, the rest executed."""
    settings = load_settings()
    configure_json_logging_if_asked(settings.log_format)
    chosen = chosen_executor(settings, executor)
    snapshot = load_catalog_or_exit(catalog, settings)  # a bad catalog leaves no farm behind
    storage = _run_storage(settings)
    warnings = [*snapshot.warnings, *(problem.message for problem in snapshot.problems)]
    if strict and warnings:
        for warning in warnings:
            typer.echo(f"Error: {warning} (--strict: nothing was planned)", err=True)
        raise typer.Exit(1)
    for warning in warnings:
        typer.echo(f"warning: {warning}", err=True)
    from farm.execution.executors import executor_for
    from farm.fleet.service import Trigger, begin_fleet_run, finish_fleet_run, finish_interrupted_runs

    executor = executor_for(settings, chosen, processes)
    progress = _progress_mode(as_json)
    with reported_errors():  # a missing or untrusted signing key: refused before anything is recorded
        for interrupted in finish_interrupted_runs(storage, executor):
            typer.echo(
                f"warning: run {interrupted} was interrupted (its process ended): its remaining jobs "
                "were run first (docs/reliability.md)",
                err=True,
            )
        planned = begin_fleet_run(
            storage, snapshot, trigger=Trigger.CLI, source=str(catalog.resolve()), executor=executor
        )
        # No job queued: the plan answered every target and finished the run in its transaction,
        # so there is no progress to show nor anything to wait for (a no-change re-run).
        answered = not planned.queued
        if executor.blocking:  # the local pool: the progress is drawn as its jobs finish
            shown = "off" if answered else progress
            with RunProgressDisplay(storage, planned.run_id, shown, sys.stderr, progress_every) as display:
                watched = replace(executor, on_progress=display.update)
                finish_fleet_run(storage, snapshot, planned, watched, trigger=Trigger.CLI)
        else:
            finish_fleet_run(storage, snapshot, planned, executor, trigger=Trigger.CLI)
    stop_if_requested()
    if chosen == "celery" and not wait:
        _print_summary(
            run_summary(storage, planned.run_id), storage, as_json, _publishes(storage, planned.run_id)
        )
        return
    try:
        summary = (
            run_summary(storage, planned.run_id)
            if answered
            else _wait_with_progress(
                storage,
                planned.run_id,
                progress,
                timeout if chosen == "celery" else None,
                every=progress_every,
            )
        )
    except TimeoutError as stuck:
        typer.echo(f"Error: {stuck}", err=True)
        raise typer.Exit(1) from None
    _print_summary(summary, storage, as_json, _publishes(storage, planned.run_id))
    if summary.failed:
        raise typer.Exit(1)


def _duration(run: FleetRunRow) -> float | None:
    if run.finished_at is None:
        return None
    return round((run.finished_at - (run.started_at or run.created_at)).total_seconds(), 3)


def _run_json(run: FleetRunRow) -> dict[str, object]:
    return {
        "id": run.id,
        "kind": run.kind,
        "trigger": run.trigger,
        "fleet": run.fleet,
        "state": run.state,
        "snapshot": run.snapshot_digest,
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "duration_seconds": _duration(run),
    }


def runs_command(
    limit: int = typer.Option(20, "--limit", help="how many runs, newest first"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object per run, one a line"),
) -> None:
    """List the most recent runs: kind, trigger, fleet, state, duration."""
    if limit < 1:
        _err().print(f"Error: --limit: must be at least 1, got {limit}")
        raise typer.Exit(1)
    storage = _open(existing=True)
    # a limit past what the database's LIMIT holds (--limit 99999999999999999999: "all of them")
    # raised an OverflowError traceback; no farm holds that many runs
    for run in recent_runs(storage, min(limit, 2**31 - 1)):
        if as_json:
            typer.echo(json.dumps(_run_json(run), sort_keys=True))
            continue
        created = run.created_at.isoformat(timespec="seconds")
        took = _duration(run)
        shown = f"{took:.1f}s" if took is not None else "-"
        typer.echo(
            f"{run.id}  {created}  {run.kind:13} {run.trigger:8} {run.fleet or '-':16} "
            f"{run.state:24} {shown:>8}  snapshot {run.snapshot_digest[:12]}"
        )


RUN_ID_HELP = "a run id, a unique prefix of one, or latest"


def status_command(
    run_id: str = typer.Argument(..., help=RUN_ID_HELP), as_json: bool = typer.Option(False, "--json")
) -> None:
    """Show one run: counts by job state and failures by error code."""
    storage = _open(existing=True)
    try:
        summary = run_summary(storage, resolve_run(storage, run_id))
    except LookupError as exc:
        _err().print(f"Error: {exc}")
        raise typer.Exit(1) from None
    _print_summary(summary, storage, as_json)


def _diff_json(diff: RunDiff) -> dict[str, object]:
    def names(targets: list[tuple[str, str]]) -> list[str]:
        return [f"{application}/{cluster}" for application, cluster in targets]

    return {
        "added": names(diff.added),
        "removed": names(diff.removed),
        "changed": names(diff.changed),
        "fixed": names(diff.fixed),
        "failed": [failure.as_json() for failure in diff.failed],
        "unchanged": diff.unchanged,
    }


def _print_diff(diff: RunDiff) -> None:
    for label, targets in (
        ("added", diff.added),
        ("removed", diff.removed),
        ("changed", diff.changed),
        ("fixed", diff.fixed),
    ):
        for app, cluster in targets:
            typer.echo(f"{label:8} {app}/{cluster}")
    for failure in diff.failed:
        was = f"failed with {failure.before_code}" if failure.before == "failed" else failure.before
        typer.echo(
            f"{'failed':8} {failure.target[0]}/{failure.target[1]} ({was} before): "
            f"{failure.error_code}: {failure.message}"
        )
    typer.echo(f"{diff.unchanged} unchanged")


def diff_command(
    run_a: str = typer.Argument(..., help=RUN_ID_HELP),
    run_b: str = typer.Argument(..., help=RUN_ID_HELP),
    unified: bool = typer.Option(False, "--unified", "-u", help="print a unified diff of changed outputs"),
    as_json: bool = typer.Option(False, "--json"),
    exit_code: bool = typer.Option(
        False,
        "--exit-code",
        help="exit 1 when a target was added, removed, changed, fixed or failed, 0 when nothing "
        "differs (like git diff --exit-code). An error (an unknown run) also exits 1 but prints "
        "one 'Error:' line on stderr and nothing on stdout.",
    ),
) -> None:
    """Targets added, removed, changed, fixed and failed between two runs.

    A target that failed in RUN_B is listed as failed, with its error code and message.

    A target that failed in RUN_A and rendered in RUN_B is listed as fixed.
    """
    storage = _open(existing=True)
    run_a, run_b = resolve_run(storage, run_a), resolve_run(storage, run_b)
    try:
        diff = diff_runs(storage, run_a, run_b)
    except LookupError as exc:
        _err().print(f"Error: {exc}")
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(_diff_json(diff), sort_keys=True))
    else:
        _print_diff(diff)
        if unified:
            for target in diff.changed:
                typer.echo(unified_output_diff(storage, run_a, run_b, target), nl=False)
    if exit_code and diff.differs:
        raise typer.Exit(1)


def output_command(
    target: str = typer.Argument(..., help="APPLICATION/CLUSTER"),
) -> None:
    """Print the latest output of one target."""
    application, sep, cluster = target.partition("/")
    if not sep or not application or not cluster:
        _err().print(f"Error: target: expected APPLICATION/CLUSTER, got {target!r}")
        raise typer.Exit(2)
    storage = _open(existing=True)
    try:
        sys.stdout.buffer.write(latest_output(storage, application, cluster))
    except LookupError as exc:
        _err().print(f"Error: {exc}")
        raise typer.Exit(1) from None


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("runs")(runs_command)
    app.command("status")(status_command)
    app.command("diff")(diff_command)
    app.command("output")(output_command)
