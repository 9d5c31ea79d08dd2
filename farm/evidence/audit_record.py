"""The signed audit record: an in-toto Statement about re-rendered outputs, in a DSSE envelope."""

from __future__ import annotations

from typing import Any

from farm.evidence.dsse import sign_envelope
from farm.evidence.keys import Signer, TrustedSigners
from farm.evidence.statement import Subject, build_statement
from farm.evidence.verify import Failure, check_envelope

AUDIT_PREDICATE_TYPE = "https://farm.dev/audit/v1"


def sign_audit_record(
    signer: Signer,
    *,
    run_id: str,
    seed: int | None,
    core_version: str,
    audited_at: str,
    entries: list[dict[str, Any]],
) -> bytes:
    """The envelope bytes of an audit record; its subjects are the audited (expected) outputs."""
    subjects = [Subject(f"target {e['target_id']}", e["expected"]) for e in entries]
    predicate = {
        "run": run_id,
        "seed": seed,
        "coreVersion": core_version,
        "auditedAt": audited_at,
        "targets": entries,
    }
    statement = build_statement(subjects, AUDIT_PREDICATE_TYPE, predicate)
    return sign_envelope(statement.to_bytes(), signer).to_bytes()


def verify_audit_envelope(
    envelope_bytes: bytes, trusted: TrustedSigners, *, target: str, row: dict[str, Any] | None = None
) -> tuple[list[str], list[Failure]]:
    """Every check of one audit record envelope: the output digests it refers to, and failures.

    Codes beyond ``check_envelope``'s: ``audit.predicate_type`` (not an audit record),
    ``audit.malformed`` (a predicate whose targets do not match its subjects) and, given the
    ``row`` that restates it (run, seed, audited, nondeterministic, drifted, and the signer),
    ``audit.record_mismatch`` naming each field the row states otherwise.
    """
    check = check_envelope(envelope_bytes, trusted, target)
    failures = list(check.failures)
    statement = check.statement
    if statement is None:
        return [], failures
    if statement.predicate_type != AUDIT_PREDICATE_TYPE:
        failures.append(
            Failure(
                "audit.predicate_type",
                target,
                f"predicateType is {statement.predicate_type!r}, not {AUDIT_PREDICATE_TYPE}",
            )
        )
        return [], failures
    subjects = [s.sha256 for s in statement.subjects]
    entries = statement.predicate.get("targets")
    expected = (
        [e.get("expected") for e in entries if isinstance(e, dict)] if isinstance(entries, list) else None
    )
    if expected != subjects or not isinstance(statement.predicate.get("run"), str):
        failures.append(
            Failure("audit.malformed", target, "the predicate's run and targets do not match its subjects")
        )
    elif row is not None:
        failures += _row_differences(statement.predicate, row, check.trusted_keyids, target)
    return subjects, failures


def _row_differences(
    predicate: dict[str, Any], row: dict[str, Any], signers: tuple[str, ...], target: str
) -> list[Failure]:
    verdicts = [entry.get("verdict") for entry in predicate["targets"]]
    signed = {
        "run": predicate["run"],
        "seed": predicate.get("seed"),
        "audited": len(verdicts),
        "nondeterministic": verdicts.count("nondeterminism"),
        "drifted": verdicts.count("drift"),
    }
    differing = [
        f"{name} (row {row[name]!r}, signed {signed[name]!r})" for name in signed if row[name] != signed[name]
    ]
    # the signer: one whose trusted signature verifies (none verifying fails on its own)
    if "signer" in row and signers and row["signer"] not in signers:
        differing.append(f"signer (row {row['signer']!r}, signed {', '.join(signers)!r})")
    if not differing:
        return []
    return [
        Failure(
            "audit.record_mismatch",
            target,
            "the row restates the signed record otherwise: " + ", ".join(differing),
        )
    ]
