"""``farm publish RUN --to git URL | --to oci REGISTRY/REPO`` and ``farm publish --retry``."""

from __future__ import annotations

import json

import typer

from farm.commands._support import fail, reported_errors, storage
from farm.settings import load_settings


def _print(outcome: object, as_json: bool) -> None:
    from farm.publish.service import PublishOutcome

    assert isinstance(outcome, PublishOutcome)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "publish": outcome.publish_id,
                    "state": outcome.state,
                    "reference": outcome.reference,
                    "changed": outcome.changed,
                    "clusters": [d.entry() for d in outcome.clusters],
                    "error": outcome.error,
                },
                sort_keys=True,
            )
        )
        return
    if outcome.error:
        typer.echo(f"publish {outcome.publish_id}: {outcome.state}: {outcome.error}")
        return
    refs = ", ".join(f"{name} {ref}" for name, ref in sorted(outcome.reference.items())) or "nothing written"
    typer.echo(f"publish {outcome.publish_id}: {'published' if outcome.changed else 'unchanged'} ({refs})")
    for decision in outcome.clusters:
        if decision.published:
            typer.echo(f"  published {decision.cluster}: {len(decision.outputs)} output(s)")
        else:
            typer.echo(f"  skipped   {decision.cluster}: {decision.reason}")


def publish_command(
    run: str = typer.Argument(None, help="the fleet run whose outputs to publish"),
    to: tuple[str, str] | None = typer.Option(
        None, "--to", help="git URL (a path, file://, ssh or https) or oci REGISTRY/REPO"
    ),
    require: str = typer.Option(
        None, "--require", help="qualified: skip clusters not qualified with current evidence"
    ),
    layout: str = typer.Option(None, "--layout", help="folders (default) or branches"),
    branch: str = typer.Option(None, "--branch", help="the branch (or branch prefix) to write"),
    retry: bool = typer.Option(False, "--retry", help="attempt every publish still pending or failed"),
    as_json: bool = typer.Option(False, "--json", help="one JSON object per publish"),
) -> None:
    """Publish a run's signed outputs to a git repository or an OCI registry, or resume failed ones.

    Defaults come from FARM_PUBLISH_TO, FARM_PUBLISH_REQUIRE, FARM_PUBLISH_LAYOUT and
    FARM_PUBLISH_BRANCH. Exit 1 when a publish is left failed.
    """
    from farm.evidence.keys import load_configured_signer
    from farm.publish.errors import PublishError
    from farm.publish.service import checked_destination, publish_run, retry_unfinished
    from farm.store.migrate import prepare_database

    settings = load_settings()
    if retry == (run is not None):
        raise fail("give a RUN to publish, or --retry to resume the publishes left failed")
    kind, address = to if to is not None else (None, None)
    if kind is None and settings.publish_to:
        kind, _, address = settings.publish_to.strip().partition(" ")
    with reported_errors(), storage() as opened:
        prepare_database(opened)
        signer = load_configured_signer(opened.settings)
        try:
            if retry:
                outcomes = retry_unfinished(opened, signer)
            else:
                if kind is None:
                    raise fail("--to git URL or --to oci REGISTRY/REPO (or FARM_PUBLISH_TO) is required")
                destination = checked_destination(
                    kind,
                    (address or "").strip(),
                    layout=layout or settings.publish_layout,
                    branch=branch or settings.publish_branch,
                    require=require or settings.publish_require,
                )
                outcomes = [publish_run(opened, signer, run, destination)]
        except PublishError as error:
            raise fail(error.message) from None
    for outcome in outcomes:
        _print(outcome, as_json)
    if any(outcome.error for outcome in outcomes):
        failed = [o for o in outcomes if o.error]
        typer.echo(
            f"Error: {len(failed)} publish(es) failed and stay recorded; resume with farm publish --retry",
            err=True,
        )
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("publish")(publish_command)
