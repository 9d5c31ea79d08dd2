"""``farm qualify`` and ``farm qualification``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from farm.commands._support import chosen_executor, load_catalog_or_exit
from farm.qualification import service
from farm.scheduler.executors import CeleryQueue, run_local
from farm.scheduler.service import prepare_database
from farm.settings import load_settings
from farm.store import qualification as records
from farm.store.context import Storage, open_storage
from farm.store.db import read_scope

err = Console(stderr=True, markup=False)


def _open() -> Storage:
    storage = open_storage(load_settings())
    prepare_database(storage)
    return storage


def _parse_subject(text: str) -> tuple[str, str]:
    cluster, _, rest = text.partition(":")
    if not rest:
        return cluster, ""
    if not rest.startswith("profile="):
        raise typer.BadParameter(f"{text!r}: expected CLUSTER or CLUSTER:profile=name=value")
    return cluster, rest.removeprefix("profile=")


def qualify_command(
    catalog: Path = typer.Argument(..., help="catalog folder holding fleet.yaml"),
    subjects: list[str] = typer.Argument(None, help="CLUSTER[:profile=name=value]; default: every subject"),
    executor: str = typer.Option(None, "--executor", help="local or celery; default from FARM_EXECUTOR"),
    as_json: bool = typer.Option(False, "--json", help="print the results as JSON"),
) -> None:
    """Render every target of each subject and record signed qualification evidence."""
    settings = load_settings()
    chosen = chosen_executor(settings, executor)
    storage = _open()
    snapshot = load_catalog_or_exit(catalog, settings)
    known = service.subjects_of(snapshot)
    wanted = [_parse_subject(text) for text in subjects] if subjects else known
    for subject in wanted:
        if subject not in known:
            err.print(
                f"Error: subject {subject[0]}:{subject[1] or 'none'} is not in catalog {catalog} (farm qualification lists them)"
            )
            raise typer.Exit(2)

    def execute(queued) -> None:
        if chosen == "local":
            run_local(settings, queued)
        else:
            CeleryQueue(settings)(queued)

    results = service.qualify_subjects(
        storage, snapshot, wanted, execute=execute, source=str(catalog.resolve())
    )
    if as_json:
        typer.echo(json.dumps([r.__dict__ for r in results], sort_keys=True))
    else:
        for r in results:
            typer.echo(
                f"{r.cluster}:{r.selection or 'none'}: {r.state}{f' ({r.reason})' if r.reason else ''} run {r.run_id}"
            )
    if any(r.state != "qualified" for r in results):
        raise typer.Exit(1)


def qualification_command(
    as_json: bool = typer.Option(False, "--json", help="print the board as JSON"),
) -> None:
    """The qualification board: subject, state, reason, since, current evidence."""
    storage = _open()
    with read_scope(storage.sessions) as session:
        rows = [
            {
                "cluster": s.cluster_profile,
                "selection": s.selection,
                "state": s.state,
                "reason": s.reason,
                "since": s.since.isoformat(),
                "current_evidence": s.current_evidence_id,
            }
            for s in records.subjects(session)
        ]
    if as_json:
        typer.echo(json.dumps(rows, sort_keys=True))
        return
    for row in rows:
        evidence = row["current_evidence"] if row["current_evidence"] is not None else "-"
        typer.echo(
            f"{row['cluster']}:{row['selection'] or 'none'}  {row['state']}  {row['reason'] or '-'}  "
            f"since {row['since']}  evidence {evidence}"
        )


def register(app: typer.Typer) -> None:
    app.command("qualify")(qualify_command)
    app.command("qualification")(qualification_command)
