"""The check kinds ``registry.CHECKS`` runs; each streams one finding per thing it checked."""

from __future__ import annotations

from collections.abc import Iterator

from farm.evidence.verify import Failure
from farm.store import audit, fsck
from farm.store.audit_records import verify_audit_records
from farm.verification.findings import Context, Finding


def outputs(context: Context) -> Iterator[Finding]:
    """Each output: blob intact and of its recorded size, signed by a trusted key, every target row
    that rendered it and cache row pointing at it bound to a statement about it
    (``farm.store.audit.check_output``'s checks, a keyset page of outputs at a time)."""
    for digest, failures in audit.check_every_output(
        context.session, context.storage.objects, context.trusted
    ):
        yield from _each("output", failures, passed=f"output {digest}")


def targets(context: Context) -> Iterator[Finding]:
    """Each target row's state and error against what backs them; each cache hit bound to its output."""
    for failure in audit.target_row_findings(context.session, context.storage.objects, context.trusted):
        yield Finding("target row", failure)


def runs(context: Context) -> Iterator[Finding]:
    """Each finished run's state against its targets."""
    for failure in fsck.check_run_states(context.session):
        yield Finding("run", failure)


def evidence_envelopes(context: Context) -> Iterator[Finding]:
    """Each batch envelope row: intact, and signed by the signer it names."""
    for _, failure in fsck.check_envelope_rows(context.session):
        yield Finding("evidence envelope", failure)


def failure_cache(context: Context) -> Iterator[Finding]:
    """Each failure cache row against its signed statement."""
    for _, failures in fsck.check_failure_rows(context.session, context.trusted):
        yield from _each("failure cache row", failures)


def audit_records(context: Context) -> Iterator[Finding]:
    count, failures = verify_audit_records(context.session, context.storage.objects, context.trusted)
    yield from _counted("audit record", count, failures)


def qualification(context: Context) -> Iterator[Finding]:
    """Each qualification statement against its record, and each subject's state recomputed."""
    from farm.qualification.audit import check_subject_states, verify_qualifications

    count, failures = verify_qualifications(context.session, context.storage.objects, context.trusted)
    yield from _counted("qualification statement", count, failures)
    count, failures = check_subject_states(context.storage, context.session, context.trusted)
    yield from _counted("qualification state", count, failures)


def blobs(context: Context) -> Iterator[Finding]:
    """Every blob a row or a snapshot manifest names (outputs apart: ``outputs`` reads them)."""
    for finding in fsck.check_named_blobs(context.session, context.storage.objects):
        yield Finding(f"blob: {finding.kind}", finding.failure)


def references(context: Context) -> Iterator[Finding]:
    for _, failure in fsck.dangling_references(context.session):
        yield Finding("reference", failure)


def orphans(context: Context) -> Iterator[Finding]:
    """Blobs nothing names: a warning (``farm gc`` removes them), not a failure: a crash between a
    blob and its row leaves one, and so does a run still writing."""
    for digest in fsck.orphan_blobs(context.session, context.storage.objects):
        yield Finding(
            "orphan blob",
            warning=Failure(
                "blob.orphan", f"blob {digest}", "no row and no snapshot names it (farm gc removes it)"
            ),
        )


def _each(kind: str, failures: list[Failure], passed: str = "") -> Iterator[Finding]:
    """One finding for one thing checked: its first failure counts it, the rest follow uncounted."""
    if not failures:
        yield Finding(kind, passed=passed)
    for index, failure in enumerate(failures):
        yield Finding(kind if index == 0 else "", failure)


def _counted(kind: str, count: int, failures: list[Failure]) -> Iterator[Finding]:
    """``count`` things checked with ``failures`` among them."""
    for failure in failures:
        yield Finding("", failure)
    for _ in range(count):
        yield Finding(kind)
