"""``farm verify --all`` for qualification statements: every stored one, against its record."""

from __future__ import annotations

from functools import lru_cache

from farm.build.profile_gate import catalog_inputs
from farm.catalog import CatalogError, CatalogSnapshot
from farm.evidence.keys import TrustedSigners
from farm.evidence.qualification import verify_qualification_evidence
from farm.evidence.verify import Failure
from farm.profiles import ProfileError
from farm.profiles.gate import check_resolved_profile, selection_of
from farm.store import qualification as records
from farm.store.context import Storage
from farm.store.db import Session
from farm.store.models import QualificationEvidence, QualificationSubject
from farm.store.objects import BlobCorruptError, BlobMissingError, ObjectStore, ObjectStoreError
from farm.store.runs import run_by_id


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
        failures += found + _gate(session, objects, evidence, subject, target)
        if parsed is not None and (parsed.cluster, parsed.selection, parsed.run_id) != (
            subject.cluster_profile,
            subject.selection,
            evidence.run_id,
        ):
            failures.append(
                Failure("qualification.record_mismatch", target, "the statement names another subject or run")
            )
    return len(rows), failures


def _gate(
    session: Session,
    objects: ObjectStore,
    evidence: QualificationEvidence,
    subject: QualificationSubject,
    target: str,
) -> list[Failure]:
    """The resolved ClusterProfile a profiled statement names, through the profile gate: stored, and exactly what
    the snapshot of the statement's fleet run resolves the subject's selection to."""
    if not subject.selection:
        return []
    run = run_by_id(session, evidence.run_id)
    if run is None:
        return [Failure("qualification.run_unknown", target, f"fleet run {evidence.run_id} is not recorded")]
    try:
        base, declaration = catalog_inputs(objects, run.snapshot_digest, subject.cluster_profile)
        resolved = objects.get(evidence.subject_digest)
        check_resolved_profile(
            resolved,
            base,
            f"{subject.cluster_profile}.yaml",
            declaration,
            expected_digest=evidence.subject_digest,
        )
    except ProfileError as error:
        return [Failure(error.code, target, error.message)]
    except (BlobMissingError, BlobCorruptError) as error:
        return [Failure("qualification.resolved_unreadable", target, str(error))]
    if selection_of(resolved) != subject.selection:
        return [
            Failure(
                "profile.resolved_forged",
                target,
                "the resolved ClusterProfile selects another value than the subject",
            )
        ]
    return []


def check_subject_states(
    storage: Storage, session: Session, trusted: TrustedSigners
) -> tuple[int, list[Failure]]:
    """(subjects recomputed, failures): each qualification subject's stored state and reason
    recomputed from its records (``derive_state``) at the time it took that state, against the
    catalog of its latest qualification run and of the newest run (the beat refreshes states with
    the newest); ``qualification.state_mismatch`` when neither gives the stored row. A subject
    with no run to take a catalog from is not counted (docs/trust.md)."""
    from farm.fleet.service import stored_catalog
    from farm.qualification.service import max_age, today_for

    @lru_cache(maxsize=2)  # a stored catalog is as large as its fleet: hold at most two
    def catalog(digest: str) -> CatalogSnapshot | None:
        try:
            return stored_catalog(storage, digest)
        except (LookupError, CatalogError, ObjectStoreError, ValueError):
            return None  # an unreadable snapshot is reported by the blob checks

    newest = records.newest_snapshot(session)
    checked, failures = 0, []
    for subject in records.subjects(session):
        digests = [d for d in (records.latest_qualified_snapshot(session, subject), newest) if d is not None]
        candidates = [snapshot for d in dict.fromkeys(digests) if (snapshot := catalog(d)) is not None]
        if not candidates:
            continue
        checked += 1
        derived = [
            records.recompute(
                session,
                subject,
                today_for(snapshot, subject.cluster_profile),
                frozenset(trusted),
                records.aware(subject.since),
                max_age(storage),
            )[0]
            for snapshot in candidates
        ]
        if all((d.state, d.reason) != (subject.state, subject.reason) for d in derived):
            failures.append(
                Failure(
                    "qualification.state_mismatch",
                    f"qualification subject {subject.cluster_profile}:{subject.selection or 'none'} ({subject.id})",
                    f"the row says {subject.state!r} {subject.reason!r}; recomputed from its records it is "
                    + " or ".join(f"{d.state!r} {d.reason!r}" for d in derived),
                )
            )
    return checked, failures
