"""Rows of signed audit records (``farm audit``); the envelope is a blob written first."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from farm.evidence.audit_record import verify_audit_envelope
from farm.evidence.keys import TrustedSigners
from farm.evidence.verify import Failure
from farm.store.models import AuditRecord, RenderOutput
from farm.store.objects import BlobCorruptError, BlobMissingError, ObjectStore


def record_audit(
    session: Session,
    *,
    envelope_digest: str,
    run_id: str,
    signer_keyid: str,
    seed: int | None,
    audited: int,
    nondeterministic: int,
    drifted: int,
) -> int:
    row = AuditRecord(
        envelope_digest=envelope_digest,
        run_id=run_id,
        signer_keyid=signer_keyid,
        seed=seed,
        audited=audited,
        nondeterministic=nondeterministic,
        drifted=drifted,
    )
    session.add(row)
    session.flush()
    return row.id


def all_audit_records(session: Session) -> list[AuditRecord]:
    return list(session.scalars(select(AuditRecord).order_by(AuditRecord.id)))


def existing_outputs(session: Session, digests: list[str]) -> set[str]:
    if not digests:
        return set()
    return set(session.scalars(select(RenderOutput.digest).where(RenderOutput.digest.in_(digests))))


def verify_audit_records(
    session: Session, objects: ObjectStore, trusted: TrustedSigners
) -> tuple[int, list[Failure]]:
    """Check every stored audit record: blob intact, envelope signed by a trusted key, an audit
    predicate, and every output it refers to still recorded (``audit.output_missing``)."""
    records = all_audit_records(session)
    failures: list[Failure] = []
    for record in records:
        target = f"audit {record.id} (envelope {record.envelope_digest})"
        try:
            envelope = objects.get(record.envelope_digest)
        except BlobMissingError as error:
            failures.append(Failure("audit.missing", target, str(error)))
            continue
        except BlobCorruptError as error:
            failures.append(Failure("audit.corrupt", target, str(error)))
            continue
        facts = {
            "run": record.run_id,
            "seed": record.seed,
            "audited": record.audited,
            "nondeterministic": record.nondeterministic,
            "drifted": record.drifted,
            "signer": record.signer_keyid,
        }
        digests, found = verify_audit_envelope(envelope, trusted, target=target, row=facts)
        failures += found
        present = existing_outputs(session, digests)
        failures += [
            Failure("audit.output_missing", target, f"output {digest} is not recorded")
            for digest in digests
            if digest not in present
        ]
    return len(records), failures
