"""``farm verify``: check stored outputs against their blobs and signed provenance.

For each output: its blob hashes to its digest, an envelope signed by a trusted key vouches for it,
and the statement's subject is that digest. Every failure is printed as
``FAIL <code>: <what>: <why>``; the exit status is 1 if there is any.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from farm.commands._support import fail, reported_errors, storage
from farm.evidence.keys import load_configured_trust
from farm.evidence.verify import Failure
from farm.settings import load_settings
from farm.store import audit
from farm.store.audit_records import verify_audit_records
from farm.store.db import Session
from farm.store.repository import sync_signer_trust


def verify_command(
    run: str | None = typer.Option(None, "--run", help="verify every output of this fleet run"),
    output: str | None = typer.Option(None, "--output", help="verify this output digest"),
    all_outputs: bool = typer.Option(False, "--all", help="verify every stored output"),
) -> None:
    """Verify outputs: blob digest, trusted signature, statement subject. Exit 1 on any failure."""
    if sum([run is not None, output is not None, all_outputs]) != 1:
        raise fail("give exactly one of --run RUN_ID, --output DIGEST or --all")
    with reported_errors(), _damage_reported(), storage() as opened, opened.sessions() as session:
        trusted = load_configured_trust(opened.settings)
        sync_signer_trust(session, trusted)
        session.commit()
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
    if all_outputs:
        failures += _damage(opened.settings.database_url)
        typer.echo(f"{qualified} qualification statement(s) checked")
    if audits:
        typer.echo(f"{audits} audit record(s) checked")
    _report(digests, failures)


@contextmanager
def _damage_reported() -> Iterator[None]:
    """A damaged SQLite database: before its ``Error:`` line, what of it still reads back (which
    runs are affected), from ``farm.store.damage``."""
    try:
        yield
    except Exception as error:
        from farm.store.damage import damage_report, is_damage

        settings = load_settings()
        if is_damage(error) and settings.database_url.startswith("sqlite:///"):
            for line in damage_report(Path(settings.database_url.removeprefix("sqlite:///"))):
                typer.echo(f"DAMAGE {line}")
        raise


def _damage(database_url: str) -> list[Failure]:
    """``--all`` on SQLite: the file's integrity check; a damaged file is one failure, with what
    of it reads back (pages the outputs' checks did not read may be the damaged ones)."""
    from farm.store.damage import RECOVERY, damage_report, integrity_problems

    if not database_url.startswith("sqlite:///"):
        return []
    database = Path(database_url.removeprefix("sqlite:///"))
    problems = integrity_problems(database)
    if not problems:
        return []
    for line in damage_report(database):
        typer.echo(f"DAMAGE {line}")
    why = f"{'; '.join(problems[:3])}: restore it from a backup ({RECOVERY})"
    return [Failure("database.damaged", f"database {database}", why)]


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
