"""``farm verify --all`` for qualification statements: every stored one, against its record."""

from __future__ import annotations

from functools import lru_cache

from farm.build.profile_gate import catalog_inputs
from farm.catalog import CatalogError, CatalogSnapshot
from farm.catalog.stored import load_stored_profiles
from farm.evidence.keys import TrustedSigners
from farm.evidence.qualification import TargetOutput, verify_qualification_evidence
from farm.evidence.verify import EnvelopeCache, Failure
from farm.profiles import ProfileError
from farm.profiles.gate import check_resolved_profile, selection_of
from farm.qualification import recorded
from farm.store import qualification as records
from farm.store.audit import signed_core_versions
from farm.store.context import Storage
from farm.store.db import Session
from farm.store.models import QualificationEvidence, QualificationSubject
from farm.store.objects import BlobCorruptError, BlobMissingError, ObjectStore, ObjectStoreError
from farm.store.runs import run_by_id, snapshot_manifest_digest


def verify_qualifications(
    session: Session, objects: ObjectStore, trusted: TrustedSigners
) -> tuple[int, list[Failure]]:
    """(statements checked, failures): blob present, signature trusted, statement matches its row."""
    failures: list[Failure] = []
    rows = records.all_evidence(session)
    cache = EnvelopeCache()  # the outputs' batch envelopes, verified once for every record naming them
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
            expected_signer=evidence.signer_keyid,
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
        if parsed is not None:
            failures += _core_version_differs(
                session, objects, trusted, evidence, parsed.outputs, target, cache
            )
        if parsed is not None and parsed.descriptor_identity != evidence.descriptor_identity:
            # the state is derived from the row's identity: a forged one makes drifted evidence current
            failures.append(
                Failure(
                    "qualification.record_mismatch",
                    target,
                    f"the row's descriptor identity {evidence.descriptor_identity} is not the signed"
                    f" {parsed.descriptor_identity}",
                )
            )
    return len(rows), failures


def _core_version_differs(
    session: Session,
    objects: ObjectStore,
    trusted: TrustedSigners,
    evidence: QualificationEvidence,
    outputs: tuple[TargetOutput, ...],
    target: str,
    cache: EnvelopeCache,
) -> list[Failure]:
    """The statement names no core version, and the subject's state is derived from the row's (a
    forged one makes an older core's evidence current): it must be one the first output the
    statement names was signed on (an action key names its core, so a qualification's outputs
    are its core's renders). An output with no readable statement fails on its own."""
    if not outputs:
        return []
    digest = outputs[0].output_digest
    signed = signed_core_versions(session, objects, trusted, digest, cache)
    if not signed or evidence.core_version in signed:
        return []
    return [
        Failure(
            "qualification.record_mismatch",
            target,
            f"the row's core version {evidence.core_version!r} is not one its output {digest} was signed"
            f" on ({', '.join(sorted(signed))})",
        )
    ]


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
    ClusterProfiles and declarations of the snapshot that transition was derived from (its event
    names it); ``qualification.state_mismatch`` when the recomputation differs. A transition
    recorded before snapshots were (or a subject that never left ``unqualified``) is recomputed
    against the snapshot of its latest qualification run and of the newest run, and passes when
    either gives the row. A subject with no snapshot to read is not counted (docs/trust.md).

    Only what a state is derived from is read of a snapshot (``load_stored_profiles``), never its
    targets, so memory stays bounded by the clusters however large the fleet."""
    from farm.qualification.service import max_age, today_for

    @lru_cache(maxsize=8)  # each as large as its ClusterProfiles and declarations, not its fleet
    def profiles(digest: str) -> CatalogSnapshot | None:
        manifest = snapshot_manifest_digest(session, digest)
        if manifest is None:
            return None
        try:
            return load_stored_profiles(storage.objects.get, digest, manifest)
        except (CatalogError, ObjectStoreError, ValueError, KeyError, TypeError):
            return None  # an unreadable snapshot is reported by the blob checks

    newest = records.newest_snapshot(session)
    checked, failures = 0, []
    for subject in records.subjects(session):
        state_snapshot = records.state_snapshot(session, subject)
        if state_snapshot is not None:
            digests = [state_snapshot]
        else:
            latest = records.latest_qualified_snapshot(session, subject)
            digests = [d for d in dict.fromkeys((latest, newest)) if d is not None]
        candidates = [snapshot for d in digests if (snapshot := profiles(d)) is not None]
        if not candidates:
            continue
        checked += 1
        derived = [
            recorded.recompute(
                session,
                subject,
                today_for(snapshot, subject.cluster_profile),
                frozenset(trusted),
                records.aware(subject.since),
                max_age(storage),
            )
            for snapshot in candidates
        ]
        # the current evidence too: the board and the API serve it as what vouches for the state
        row = (subject.state, subject.reason, subject.current_evidence_id)
        if all((d.state, d.reason, current) != row for d, current in derived):
            same_state = [str(current) for d, current in derived if (d.state, d.reason) == row[:2]]
            if same_state:
                why = (
                    f"the row names current evidence {subject.current_evidence_id}; recomputed from its"
                    f" records it is {' or '.join(same_state)}"
                )
            else:
                why = (
                    f"the row says {subject.state!r} {subject.reason!r}; recomputed from its records it is "
                    + " or ".join(f"{d.state!r} {d.reason!r}" for d, _ in derived)
                )
            where = f"qualification subject {subject.cluster_profile}:{subject.selection or 'none'} ({subject.id})"
            failures.append(Failure("qualification.state_mismatch", where, why))
    return checked, failures
