"""``farm plan``: the targets a catalog change would render, grouped by cause; nothing is rendered.

Exit 0 when nothing would render or fail, 2 when something would (a CI gate on a pull request:
targets to render, or targets whose application or ClusterProfile the catalog loader refuses),
1 on an error.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from farm.catalog import CatalogError, CatalogSnapshot
from farm.catalog.reuse import load_catalog_reusing
from farm.commands._support import fail, no_farm_here, reported_errors, resolve_run
from farm.fleet.preview import (
    Baseline,
    Plan,
    catalog_baseline,
    latest_run_of_fleet,
    preview,
    preview_without_farm,
    run_baseline,
)
from farm.settings import FarmSettings, load_settings
from farm.store.context import Storage, missing_database_file, open_storage
from farm.store.migrate import prepare_database

SHOWN_PER_CAUSE = 20


def _load(catalog: Path, option: str) -> CatalogSnapshot:
    try:
        return load_catalog_reusing(catalog, max_file_bytes=load_settings().catalog_max_file_bytes)
    except CatalogError as exc:
        for problem in exc.problems[:-1]:
            typer.echo(f"Error: {option}{problem}", err=True)
        raise fail(f"{option}{exc.problems[-1]}") from None


def _baseline(
    storage: Storage, fleet: str, against: str | None, against_catalog: Path | None
) -> Baseline | None:
    if against is not None:
        return run_baseline(storage, resolve_run(storage, against, "--against"))
    if against_catalog is not None:
        other = _load(against_catalog, "--against-catalog: ")
        return catalog_baseline(other, f"catalog {against_catalog}")
    run_id = latest_run_of_fleet(storage, fleet)
    return run_baseline(storage, run_id) if run_id is not None else None


def _print_documents(plan: Plan) -> None:
    """Each changed input document and the keys that changed in it (``farm plan -v``)."""
    if plan.against == "nothing":  # every target is added: there is nothing to compare a document with
        return
    typer.echo(f"  input documents changed: {len(plan.documents)}")
    for document in plan.documents:
        typer.echo(f"    {document.path} ({document.kind})")
        for key in document.keys[:SHOWN_PER_CAUSE]:
            typer.echo(f"      {key}")
        if len(document.keys) > SHOWN_PER_CAUSE:
            typer.echo(
                f"      … and {len(document.keys) - SHOWN_PER_CAUSE} more (farm plan --json lists them all)"
            )


def _print(plan: Plan, verbose: bool = False) -> None:
    echo = typer.echo
    echo(f"plan of fleet {plan.fleet} (snapshot {plan.snapshot_digest[:12]}) against {plan.against}")
    cached = plan.cached_outputs + plan.cached_failures
    failures = f" ({plan.cached_failures} cached failures)" if plan.cached_failures else ""
    echo(f"  would render {len(plan.render)} of {plan.total} targets; {cached} stay cached{failures}")
    for kind, targets in plan.by_cause().items():
        echo(f"  {kind}: {len(targets)}")
        for target in targets[:SHOWN_PER_CAUSE]:
            files = sorted({f for c in target.causes if c.kind == kind for f in c.files})
            shown = f"  ({', '.join(files)})" if files else ""
            echo(f"    {target.application}/{target.cluster}{shown}")
        if len(targets) > SHOWN_PER_CAUSE:
            echo(f"    … and {len(targets) - SHOWN_PER_CAUSE} more (farm plan --json lists them all)")
    if plan.refused:
        echo(f"  would fail, refused by the catalog loader: {len(plan.refused)}")
        for refused in plan.refused[:SHOWN_PER_CAUSE]:
            echo(f"    {refused.application}/{refused.cluster}: {refused.code}: {refused.message}")
        if len(plan.refused) > SHOWN_PER_CAUSE:
            echo(f"    … and {len(plan.refused) - SHOWN_PER_CAUSE} more (farm plan --json lists them all)")
    if verbose:
        _print_documents(plan)


def plan_command(
    catalog: Path = typer.Argument(..., help="catalog folder holding fleet.yaml"),
    against: str = typer.Option(
        None,
        "--against",
        help="compare with this run: an id, a unique prefix of one, or latest (default: the fleet's latest)",
    ),
    against_catalog: Path = typer.Option(
        None, "--against-catalog", help="compare with another catalog folder"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the plan as one JSON object"),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="also list each changed input document and the keys that changed"
    ),
) -> None:
    """Preview a catalog change: which targets would render and why. Renders nothing.

    Exit 0 when nothing would render or fail, 2 when something would, 1 on an error.
    """
    if against is not None and against_catalog is not None:
        raise fail("--against and --against-catalog: give one of them, not both")
    snapshot = _load(catalog, "")
    settings = load_settings()
    with reported_errors():
        missing = missing_database_file(settings)
    if missing is not None:  # a preview creates no farm: against nothing, or another catalog
        plan = _plan_without_farm(snapshot, against, against_catalog, settings)
    else:
        plan = _plan_in_farm(settings, catalog, snapshot, against, against_catalog)
    if as_json:
        typer.echo(json.dumps(plan.as_json(), sort_keys=True))
    else:
        _print(plan, verbose)
    if plan.reports_something:
        raise typer.Exit(2)


def _plan_without_farm(
    snapshot: CatalogSnapshot, against: str | None, against_catalog: Path | None, settings: FarmSettings
) -> Plan:
    """The plan where no farm is: ``--against RUN`` is refused (there are no runs), any other plan
    compares with nothing (every target would render) or with ``--against-catalog``."""
    if against is not None:
        raise fail(f"--against: {no_farm_here(settings)}")
    if against_catalog is None:
        typer.echo(
            f"note: no farm here ({missing_database_file(settings)} does not exist): planned against nothing, so every target would render "
            "(nothing was created; `farm run CATALOG` makes the farm)",
            err=True,
        )
        return preview_without_farm(snapshot, None)
    other = _load(against_catalog, "--against-catalog: ")
    return preview_without_farm(snapshot, catalog_baseline(other, f"catalog {against_catalog}"))


def _plan_in_farm(
    settings: FarmSettings,
    catalog: Path,
    snapshot: CatalogSnapshot,
    against: str | None,
    against_catalog: Path | None,
) -> Plan:
    with reported_errors():
        storage = open_storage(settings)
        try:
            prepare_database(storage)
            baseline = _baseline(storage, snapshot.name, against, against_catalog)
            plan = preview(storage, snapshot, baseline, source=str(catalog.resolve()))
        except LookupError as exc:
            raise fail(str(exc).strip("'\"")) from None
        finally:
            storage.close()
    return plan


def register(app: typer.Typer) -> None:
    app.command("plan")(plan_command)
