"""``farm verify``: check stored outputs against their blobs and signed provenance.

For each output: its blob hashes to its digest, an envelope signed by a trusted key vouches for it,
and the statement's subject is that digest. ``--run`` also binds each of the run's cache hits to a
statement about the output it names (the rows that rendered an output are bound by its checks).
Every failure is printed as ``FAIL <code>: <what>: <why>``; the exit status is 1 if there is any.

``--all`` runs every check kind of ``farm.verification.registry.CHECKS`` over the whole store (an
fsck: outputs, target rows, the failure cache, audit and qualification records, every named blob,
every reference, orphan blobs as warnings), printing failures as they are found and a summary by
kind; ``--json`` prints the same as one JSON object.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import typer

from farm.commands._support import fail, reported_errors, resolve_run, storage
from farm.evidence.keys import load_configured_trust
from farm.evidence.verify import Failure
from farm.settings import load_settings
from farm.store import audit, fsck
from farm.store.db import Session
from farm.store.repository import sync_signer_trust
from farm.verification.registry import CHECKS, Context


def verify_command(
    run: str | None = typer.Option(
        None, "--run", help="verify every output of this run (an id, a unique prefix of one, or latest)"
    ),
    output: str | None = typer.Option(None, "--output", help="verify this output digest"),
    all_outputs: bool = typer.Option(False, "--all", help="check the whole store (an fsck)"),
    as_json: bool = typer.Option(False, "--json", help="with --all: print one JSON object"),
) -> None:
    """Verify outputs: blob digest, trusted signature, statement subject. Exit 1 on any failure."""
    if sum([run is not None, output is not None, all_outputs]) != 1:
        raise fail("give exactly one of --run RUN_ID, --output DIGEST or --all")
    if as_json and not all_outputs:
        raise fail("--json goes with --all")
    with (
        reported_errors(),
        _damage_reported(),
        storage(existing=True) as opened,
        opened.sessions() as session,
    ):
        trusted = load_configured_trust(opened.settings)
        sync_signer_trust(session, trusted)
        session.commit()
        if all_outputs:
            # the file first: the other checks read every table, and a damaged one would stop them
            damaged = _damage(opened.settings.database_url)
            summary = (
                Summary() if damaged else run_checks(Context(opened, session, trusted), echo=not as_json)
            )
            if opened.settings.database_url.startswith("sqlite"):  # PRAGMA quick_check: SQLite only
                summary.checked["database file"] += 1
            for failure in damaged:
                summary.failures.append(failure)
                summary.failed[failure.code] += 1
                if not as_json:
                    typer.echo(f"FAIL {failure}")
        else:
            if run is not None:
                run = resolve_run(opened, run, "--run")
            digests, failures = _select(session, run, output)
            failures += audit.verify_outputs(session, opened.objects, trusted, digests)
            if run is not None:  # the rows that rendered an output are its own checks'; the hits too
                hits = audit.cache_hits_of_run(session, run)
                for _, found in audit.cache_hit_findings(session, opened.objects, trusted, hits):
                    failures += found
                # each row's state and error, and the run's state, as --all checks them
                failures += audit.row_state_failures_of_run(session, run)
                failures += [found for found in fsck.check_run_states(session, run) if found is not None]
    if all_outputs:
        _report_all(summary, as_json)
    else:
        _report(digests, failures)


@dataclass
class Summary:
    """What ``--all`` found: things checked by kind, failures and warnings."""

    checked: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    warnings: list[Failure] = field(default_factory=list)


def run_checks(context: Context, *, echo: bool) -> Summary:
    """Every registered check kind, each failure printed as it is found (with ``echo``)."""
    summary = Summary()
    for check in CHECKS:
        for finding in check.run(context):
            if finding.kind:
                summary.checked[finding.kind] += 1
            if finding.passed and finding.failure is None and echo:
                typer.echo(f"ok   {finding.passed}")
            if finding.failure is not None:
                summary.failures.append(finding.failure)
                summary.failed[finding.failure.code] += 1
                if echo:
                    typer.echo(f"FAIL {finding.failure}")
            if finding.warning is not None:
                summary.warnings.append(finding.warning)
                if echo:
                    typer.echo(f"WARN {finding.warning}")
    return summary


def _report_all(summary: Summary, as_json: bool) -> None:
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "checked": dict(sorted(summary.checked.items())),
                    "failures": [_as_json(failure) for failure in summary.failures],
                    "warnings": [_as_json(warning) for warning in summary.warnings],
                    "ok": not summary.failures,
                },
                indent=2,
            )
        )
    else:
        for kind, count in sorted(summary.checked.items()):
            typer.echo(f"{count:>9} {kind}(s) checked")
        if summary.warnings:
            typer.echo(f"{len(summary.warnings)} warning(s)")
        typer.echo(f"{summary.checked['output']} output(s) checked, {len(summary.failures)} failure(s)")
    if summary.failures:
        raise typer.Exit(1)


def _as_json(failure: Failure) -> dict[str, str]:
    return {"code": failure.code, "target": failure.target, "message": failure.message}


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
