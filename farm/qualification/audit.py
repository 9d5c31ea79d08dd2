"""``farm verify --all`` for qualification statements: every stored one, against its record."""

from __future__ import annotations

from sqlalchemy.orm import Session

from farm.evidence.keys import TrustedSigners
from farm.evidence.qualification import verify_qualification_evidence
from farm.evidence.verify import Failure
from farm.store import qualification as records
from farm.store.objects import ObjectStore


def verify_qualifications(
    session: Session, objects: ObjectStore, trusted: TrustedSigners
) -> tuple[int, list[Failure]]:
    """(statements checked, failures): blob present, signature trusted, statement matches its row."""
    failures: list[Failure] = []
    rows = records.all_evidence(session)
    for evidence, subject in rows:
        target = f"qualification {subject.cluster_profile}:{subject.selection or 'none'} #{evidence.id}"
        try:
            envelope = objects.get(evidence.envelope_digest)
        except Exception as error:  # a missing or corrupt blob is a finding, not a crash
            failures.append(Failure("qualification.blob_unreadable", target, str(error)))
            continue
        parsed, found = verify_qualification_evidence(
            envelope,
            trusted,
            target=target,
            expected_subject_digest=evidence.subject_digest,
            expect_profiled=subject.selection != "",
        )
        failures += found
        if parsed is not None and (parsed.cluster, parsed.selection, parsed.run_id) != (
            subject.cluster_profile,
            subject.selection,
            evidence.run_id,
        ):
            failures.append(
                Failure("qualification.record_mismatch", target, "the statement names another subject or run")
            )
    return len(rows), failures
