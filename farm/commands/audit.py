"""``farm audit``: re-render cached targets on the current core and compare with the signed digests.

Exit 1 on nondeterminism (same core version, other bytes: an error, with its unified diff), on a
re-render stopped by a render bound (time, memory) or on any error; drift (another core version,
other bytes) is reported and exits 0 unless ``--fail-on-drift``. Every audit writes a signed
record that ``farm verify --all`` checks.
"""

from __future__ import annotations

import json

import typer

from farm.audit.service import (
    DRIFT,
    MATCH,
    NONDETERMINISM,
    REFUSED,
    STOPPED,
    AuditError,
    AuditReport,
    latest_run,
    run_audit,
)
from farm.commands._support import fail, reported_errors, resolve_run, storage
from farm.evidence.keys import load_configured_signer
from farm.store.context import Storage
from farm.store.migrate import prepare_database


def audit_command(
    run: str | None = typer.Option(
        None,
        "--run",
        help="the run to audit: an id, a unique prefix of one, or latest (default: the latest run)",
    ),
    sample_size: int | None = typer.Option(None, "--sample", min=1, help="audit N targets chosen by --seed"),
    all_targets: bool = typer.Option(False, "--all", help="audit every cached target of the run"),
    seed: int = typer.Option(
        0,
        "--seed",
        min=-(2**31),
        max=2**31 - 1,  # the audit record's column: a 32-bit integer
        help="the sampling seed (the same seed picks the same targets)",
    ),
    fail_on_drift: bool = typer.Option(False, "--fail-on-drift", help="exit 1 on drift too"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Re-render cached targets and compare digests; sign an audit record."""
    if sample_size is not None and all_targets:
        raise fail("give at most one of --sample N and --all")
    with reported_errors(), storage(existing=True) as opened:  # no farm: nothing to audit, nothing made
        prepare_database(opened)
        run_id = resolve_run(opened, run, "--run") if run is not None else _latest_run(opened)
        signer = load_configured_signer(opened.settings)
        report = run_audit(opened, signer, run_id, size=sample_size, seed=seed)
    _print(report, as_json)
    failed = report.count(NONDETERMINISM) + report.count(REFUSED) + report.count(STOPPED)
    if failed or (fail_on_drift and report.count(DRIFT)):
        raise typer.Exit(1)


def _latest_run(opened: Storage) -> str:
    run_id = latest_run(opened)
    if run_id is None:
        raise AuditError("no run is recorded yet; run `farm run CATALOG` first")
    return run_id


def _print(report: AuditReport, as_json: bool) -> None:
    counts = {verdict: report.count(verdict) for verdict in (MATCH, DRIFT, NONDETERMINISM, REFUSED, STOPPED)}
    if as_json:
        body = {
            "run": report.run_id,
            "seed": report.seed,
            "record": report.envelope_digest,
            "counts": counts,
            "targets": [{**t.entry(), "diff": t.diff} for t in report.targets],
        }
        typer.echo(json.dumps(body, indent=2, sort_keys=True))
        return
    for target in report.targets:
        where = f"{target.application}@{target.cluster_profile}"
        if target.verdict == NONDETERMINISM:
            typer.echo(
                f"Error: nondeterminism in {where}: signed {target.expected[:12]}, rendered "
                f"{target.observed[:12]} on the same core {target.signed_core}; a handler is not deterministic",
                err=True,
            )
            typer.echo(target.diff)
        elif target.verdict == REFUSED:
            typer.echo(f"Error: {where}: the stored request cannot be audited: {target.diff}", err=True)
        elif target.verdict == STOPPED:
            typer.echo(f"Error: {where}: the re-render was stopped: {target.diff}", err=True)
        elif target.verdict == DRIFT:
            typer.echo(
                f"drift {where}: signed {target.expected[:12]} on core {target.signed_core}, "
                f"now {target.observed[:12]}"
            )
    typer.echo(
        f"audited {len(report.targets)} target(s) of run {report.run_id}: {counts[MATCH]} match, "
        f"{counts[DRIFT]} drift, {counts[NONDETERMINISM]} nondeterministic, {counts[REFUSED]} refused, "
        f"{counts[STOPPED]} stopped; record {report.envelope_digest}"
    )


def register(app: typer.Typer) -> None:
    app.command("audit")(audit_command)
