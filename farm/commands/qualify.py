"""``farm qualify`` and ``farm qualification``."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from farm.commands._support import chosen_executor, load_catalog_or_exit, open_existing_storage
from farm.execution.executors import executor_for
from farm.fleet.service import Trigger, qualify
from farm.qualification import service
from farm.qualification.subjects import SubjectSyntaxError, format_subject, parse_subject
from farm.settings import load_settings
from farm.store import qualification as records
from farm.store.context import Storage, open_storage
from farm.store.db import read_scope
from farm.store.migrate import prepare_database

err = Console(stderr=True, markup=False)


def _open(existing: bool = False) -> Storage:
    """The storage, migrated; ``existing``: a command that only reads refuses where no farm is."""
    storage = open_existing_storage() if existing else open_storage(load_settings())
    prepare_database(storage)
    return storage


def _parse_subject(text: str) -> tuple[str, str]:
    try:
        return parse_subject(text)
    except SubjectSyntaxError as error:
        raise typer.BadParameter(str(error)) from None


def qualify_command(
    catalog: Path = typer.Argument(..., help="catalog folder holding fleet.yaml"),
    subjects: list[str] = typer.Argument(None, help="CLUSTER[:PROFILE=VALUE]; default: every subject"),
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
                f"Error: subject {format_subject(*subject)} is not in catalog {catalog} (farm qualification lists them)"
            )
            raise typer.Exit(2)

    results = qualify(
        storage,
        snapshot,
        wanted,
        executor=executor_for(settings, chosen),
        trigger=Trigger.CLI,
        source=str(catalog.resolve()),
    )
    if as_json:
        typer.echo(json.dumps([r.__dict__ for r in results], sort_keys=True))
    else:
        for r in results:
            typer.echo(
                f"{format_subject(r.cluster, r.selection)}: {r.state}{f' ({r.reason})' if r.reason else ''} run {r.run_id}"
            )
    if any(r.state != "qualified" for r in results):
        raise typer.Exit(1)


def qualification_command(
    as_json: bool = typer.Option(False, "--json", help="print the board as JSON"),
) -> None:
    """The qualification board: subject, state, reason, since, current evidence."""
    storage = _open(existing=True)
    with read_scope(storage.sessions) as session:
        rows = [
            {
                "subject": format_subject(s.cluster_profile, s.selection),
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
            f"{format_subject(row['cluster'], row['selection'])}  {row['state']}  {row['reason'] or '-'}  "
            f"since {row['since']}  evidence {evidence}"
        )


def register(app: typer.Typer) -> None:
    app.command("qualify")(qualify_command)
    app.command("qualification")(qualification_command)
