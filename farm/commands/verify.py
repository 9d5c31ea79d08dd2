"""``farm verify``: check stored outputs against their blobs and signed provenance.

For each output: its blob hashes to its digest, an envelope signed by a trusted key vouches for it,
and the statement's subject is that digest. Every failure is printed as
``FAIL <code>: <what>: <why>``; the exit status is 1 if there is any.
"""

from __future__ import annotations

import typer

from farm.commands._support import fail, reported_errors, resolve_run, storage
from farm.evidence.keys import load_configured_trust
from farm.evidence.verify import Failure
from farm.store import audit
from farm.store.audit_records import verify_audit_records
from farm.store.db import Session
from farm.store.repository import sync_signer_trust


def verify_command(
    run: str | None = typer.Option(
        None, "--run", help="verify every output of this run (an id, a unique prefix of one, or latest)"
    ),
    output: str | None = typer.Option(None, "--output", help="verify this output digest"),
    all_outputs: bool = typer.Option(False, "--all", help="verify every stored output"),
) -> None:
    """Verify outputs: blob digest, trusted signature, statement subject. Exit 1 on any failure."""
    if sum([run is not None, output is not None, all_outputs]) != 1:
        raise fail("give exactly one of --run RUN_ID, --output DIGEST or --all")
    with reported_errors(), storage(existing=True) as opened, opened.sessions() as session:
        trusted = load_configured_trust(opened.settings)
        sync_signer_trust(session, trusted)
        session.commit()
        if run is not None:
            run = resolve_run(opened, run, "--run")
        digests, failures = _select(session, run, output)
        failures += audit.verify_outputs(session, opened.objects, trusted, digests)
        audits = qualified = 0
        if all_outputs:
            from farm.qualification.audit import verify_qualifications

            failures += audit.check_target_rows(session)
            audits, audit_failures = verify_audit_records(session, opened.objects, trusted)
            failures += audit_failures
            qualified, found = verify_qualifications(session, opened.objects, trusted)
            failures += found
            from farm.publish.verify import verify_publishes

            publishes, found = verify_publishes(session, opened.objects, trusted)
            failures += found
            typer.echo(f"{publishes} publish record(s) checked")
    if all_outputs:
        typer.echo(f"{qualified} qualification statement(s) checked")
    if audits:
        typer.echo(f"{audits} audit record(s) checked")
    _report(digests, failures)


def _select(session: Session, run: str | None, output: str | None) -> tuple[list[str], list[Failure]]:
    if run is not None:
        return audit.outputs_of_run(session, run)
    if output is not None:
        return [output.removeprefix("sha256:")], []
    return audit.all_outputs(session), []


def _report(digests: list[str], failures: list[Failure]) -> None:
    for failure in failures:
        typer.echo(f"FAIL {failure}")
    for digest in digests:
        if not any(f.target.startswith(f"output {digest}") for f in failures):
            typer.echo(f"ok   output {digest}")
    typer.echo(f"{len(digests)} output(s) checked, {len(failures)} failure(s)")
    if failures:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("verify")(verify_command)
