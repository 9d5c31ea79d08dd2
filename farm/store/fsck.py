"""The store-wide checks of ``farm verify --all`` that are not about one output: every blob a row
names, every reference between rows, the failure cache's signed statements, orphan blobs.

Everything streams: rows are read in keyset pages or with ``yield_per``, blobs are listed lazily
and looked up in chunks, so memory is bounded by a page, not by the number of targets or outputs.
The one set kept whole is the digests that snapshot manifests name (documents and request packs),
bounded by the number of distinct catalog documents ever stored, not by runs or targets.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session, aliased

from farm.evidence.dsse import parse_envelope
from farm.evidence.errors import EvidenceError
from farm.evidence.failure import check_failure
from farm.evidence.keys import TrustedSigners
from farm.evidence.verify import Failure
from farm.identity.canonical import sha256_hex
from farm.store.models import (
    BLOB_REFERENCES,
    ActionCacheEntry,
    Application,
    AuditRecord,
    CatalogSnapshot,
    ClusterProfile,
    EvidenceEnvelope,
    EvidenceRecord,
    FailedAction,
    FleetRun,
    JobState,
    ProfileDeclaration,
    ProfileValue,
    Publish,
    QualificationEvent,
    QualificationEvidence,
    QualificationRun,
    QualificationState,
    QualificationSubject,
    RenderJob,
    RenderOutput,
    RenderTarget,
    RunState,
    Signer,
)
from farm.store.objects import BlobCorruptError, BlobMissingError, ObjectStore
from farm.store.runs import CHUNK
from farm.store.snapshots import manifest_references

PAGE = 1000

# The kind a blob column's digests are reported under in the summary.
BLOB_KINDS: dict[str, str] = {
    "catalog_snapshots.blob_digest": "snapshot",
    "applications.blob_digest": "document",
    "cluster_profiles.blob_digest": "document",
    "render_outputs.digest": "output",
    "evidence_records.envelope_digest": "envelope",
    "render_targets.request_pack": "request pack",
    "render_targets.request_digest": "request",
    "audit_records.envelope_digest": "audit record",
    "qualification_evidence.envelope_digest": "qualification record",
    "publishes.envelope_digest": "publish record",
}
MANIFEST_KIND = "document"  # what a snapshot manifest names: documents, packs, resolved profiles


def column_name(column: InstrumentedAttribute) -> str:
    return f"{column.class_.__tablename__}.{column.key}"


def _distinct(
    session: Session, column: InstrumentedAttribute, condition: ColumnElement[bool]
) -> Iterator[str]:
    yield from session.scalars(select(column).where(condition).distinct().execution_options(yield_per=PAGE))


@dataclass(frozen=True)
class BlobFinding:
    kind: str
    failure: Failure | None  # None: present and intact


def check_blob(objects: ObjectStore, digest: str, kind: str, where: str) -> Failure | None:
    """The blob is there and hashes to its name (``blob.missing``, ``blob.corrupt``)."""
    try:
        objects.get(digest)
    except BlobMissingError as error:
        return Failure("blob.missing", f"{kind} {digest}", f"named by {where}: {error}")
    except BlobCorruptError as error:
        return Failure("blob.corrupt", f"{kind} {digest}", f"named by {where}: {error}")
    return None


def check_named_blobs(
    session: Session, objects: ObjectStore, *, skip_outputs: bool = True
) -> Iterator[BlobFinding]:
    """Every blob any row names (outputs apart when ``skip_outputs``: the output check reads them),
    and every document and request pack a stored snapshot manifest names, each checked once per
    column (manifest-named and document blobs once in all)."""
    seen: set[str] = set()  # documents and packs: bounded by distinct catalog documents
    for column, names_a_blob in BLOB_REFERENCES:
        name = column_name(column)
        kind = BLOB_KINDS[name]
        if skip_outputs and kind == "output":
            continue
        for digest in _distinct(session, column, names_a_blob):
            if kind in ("document", "request pack"):
                if digest in seen:
                    continue
                seen.add(digest)
            yield BlobFinding(kind, check_blob(objects, digest, kind, name))
    manifests = select(CatalogSnapshot.digest, CatalogSnapshot.blob_digest).where(
        CatalogSnapshot.blob_digest.is_not(None)
    )
    rows = session.execute(manifests).all()
    snapshots = set(session.scalars(select(CatalogSnapshot.digest)))
    named_by = Counter(manifest for _, manifest in rows)
    for snapshot, manifest in rows:
        if manifest != snapshot and (manifest in snapshots or named_by[manifest] > 1):
            # a manifest hashes to its snapshot's digest (a home older than revision 0004 wrote
            # manifests of other bytes, but never one for two snapshots)
            whose = f"the manifest of snapshot {manifest}" if manifest in snapshots else "another row's too"
            yield BlobFinding(
                "snapshot",
                Failure(
                    "snapshot.manifest_mismatch",
                    f"snapshot {snapshot}",
                    f"the row names manifest {manifest}, {whose}, not its own",
                ),
            )
            continue
        try:
            named = manifest_references(objects.get(manifest))
        except (BlobMissingError, BlobCorruptError):
            continue  # reported as the snapshot's own blob
        except (ValueError, KeyError, TypeError) as error:
            yield BlobFinding(
                "snapshot",
                Failure(
                    "snapshot.malformed",
                    f"snapshot {snapshot}",
                    f"manifest {manifest} cannot be read: {error}",
                ),
            )
            continue
        for digest in sorted(named - seen):
            seen.add(digest)
            yield BlobFinding(
                MANIFEST_KIND,
                check_blob(objects, digest, MANIFEST_KIND, f"the manifest of snapshot {snapshot}"),
            )


def manifest_named(session: Session, objects: ObjectStore) -> set[str]:
    """Every digest a readable stored snapshot manifest names, and each snapshot's own digest (its
    manifest, even when a row was re-pointed at another: ``farm gc`` must not sweep it)."""
    named: set[str] = set(session.scalars(select(CatalogSnapshot.digest)))
    manifests = select(CatalogSnapshot.blob_digest).where(CatalogSnapshot.blob_digest.is_not(None))
    for manifest in session.scalars(manifests).all():
        try:
            named |= manifest_references(objects.get(manifest))
        except (BlobMissingError, BlobCorruptError, ValueError, KeyError, TypeError):
            continue
    return named


def orphan_blobs(session: Session, objects: ObjectStore) -> Iterator[str]:
    """Blobs no row and no snapshot manifest names, listed lazily and looked up ``CHUNK`` at a time
    (``farm gc`` removes them after its grace period)."""
    named = manifest_named(session, objects)
    chunk: list[str] = []
    for blob in objects.list_blobs():
        chunk.append(blob.digest)
        if len(chunk) == CHUNK:
            yield from _unreferenced(session, chunk, named)
            chunk = []
    yield from _unreferenced(session, chunk, named)


def _unreferenced(session: Session, digests: list[str], named: set[str]) -> list[str]:
    left = {digest for digest in digests if digest not in named}
    for column, names_a_blob in BLOB_REFERENCES:
        if not left:
            break
        left -= set(session.scalars(select(column).where(names_a_blob, column.in_(sorted(left)))))
    return sorted(left)


# Every reference between rows: (the referring column, the key it names, how a row is named). Every
# foreign key of the models is one (SQLite enforces them only when asked, and a copy of the file
# edited by hand asks nothing); so are the references revision 0025 left without one.
_REFERENCES: tuple[tuple[InstrumentedAttribute, InstrumentedAttribute, InstrumentedAttribute], ...] = (
    (Application.snapshot_digest, CatalogSnapshot.digest, Application.id),
    (ClusterProfile.snapshot_digest, CatalogSnapshot.digest, ClusterProfile.id),
    (CatalogSnapshot.parent_digest, CatalogSnapshot.digest, CatalogSnapshot.digest),
    (FleetRun.snapshot_digest, CatalogSnapshot.digest, FleetRun.id),
    (RenderJob.run_id, FleetRun.id, RenderJob.id),
    (RenderTarget.run_id, FleetRun.id, RenderTarget.id),
    (RenderTarget.job_id, RenderJob.id, RenderTarget.id),
    (RenderTarget.output_digest, RenderOutput.digest, RenderTarget.id),
    (ActionCacheEntry.output_digest, RenderOutput.digest, ActionCacheEntry.action_key),
    (ActionCacheEntry.evidence_id, EvidenceRecord.id, ActionCacheEntry.action_key),
    (EvidenceRecord.subject_digest, RenderOutput.digest, EvidenceRecord.id),
    (EvidenceRecord.target_id, RenderTarget.id, EvidenceRecord.id),
    (EvidenceRecord.signer_keyid, Signer.keyid, EvidenceRecord.id),
    (EvidenceRecord.batch_envelope, EvidenceEnvelope.digest, EvidenceRecord.id),
    (AuditRecord.run_id, FleetRun.id, AuditRecord.id),
    (QualificationEvidence.subject_id, QualificationSubject.id, QualificationEvidence.id),
    (QualificationRun.subject_id, QualificationSubject.id, QualificationRun.id),
    (QualificationSubject.current_evidence_id, QualificationEvidence.id, QualificationSubject.id),
    (QualificationRun.fleet_run_id, FleetRun.id, QualificationRun.id),
    (QualificationEvent.subject_id, QualificationSubject.id, QualificationEvent.id),
    (EvidenceEnvelope.signer_keyid, Signer.keyid, EvidenceEnvelope.digest),
    (Publish.run_id, FleetRun.id, Publish.id),
    (ProfileDeclaration.cluster_profile_id, ClusterProfile.id, ProfileDeclaration.id),
    (ProfileValue.declaration_id, ProfileDeclaration.id, ProfileValue.id),
    (QualificationState.snapshot_digest, CatalogSnapshot.digest, QualificationState.id),
    (QualificationState.current_evidence_id, EvidenceRecord.id, QualificationState.id),
    (QualificationState.last_passing_evidence_id, EvidenceRecord.id, QualificationState.id),
)


def dangling_references(session: Session) -> Iterator[tuple[str, Failure | None]]:
    """(reference, failure) per reference kind checked: one anti-join each, every row whose
    reference names no row (``reference.dangling``)."""
    for column, key, row_id in _REFERENCES:
        referred = aliased(key.class_)
        referred_key = getattr(referred, key.key)
        rows = session.execute(
            select(row_id, column)
            .outerjoin(referred, referred_key == column)
            .where(column.is_not(None), referred_key.is_(None))
            .execution_options(yield_per=PAGE)
        )
        name = f"{column_name(column)} → {column_name(key)}"
        found = False
        for row, value in rows:
            found = True
            yield (
                name,
                Failure(
                    "reference.dangling",
                    f"{column.class_.__tablename__} row {row}",
                    f"{column.key} {value} names no {key.class_.__tablename__} row",
                ),
            )
        if not found:
            yield name, None


def check_envelope_rows(session: Session) -> Iterator[tuple[str, Failure | None]]:
    """Every batch envelope row: its bytes hash to its digest (``envelope.corrupt``; its records'
    outputs fail on it too, but an envelope no record names would not) and the signer it names
    is one whose signature it holds (``envelope.signer_mismatch``; the signature itself is checked
    with each record)."""
    rows = session.execute(
        select(EvidenceEnvelope.digest, EvidenceEnvelope.envelope, EvidenceEnvelope.signer_keyid)
        .order_by(EvidenceEnvelope.digest)
        .execution_options(yield_per=PAGE)
    )
    for digest, envelope, signer in rows:
        target = f"evidence envelope {digest}"
        if sha256_hex(envelope) != digest:
            yield digest, Failure("envelope.corrupt", target, f"the row's bytes do not hash to {digest}")
            continue
        try:
            keyids = [signature.keyid for signature in parse_envelope(envelope).signatures]
        except EvidenceError:
            yield digest, None  # the records naming it fail on it (envelope.malformed, signature.missing)
            continue
        if signer not in keyids:
            yield (
                digest,
                Failure(
                    "envelope.signer_mismatch",
                    target,
                    f"the row names signer {signer}; the envelope is signed by {', '.join(keyids)}",
                ),
            )
        else:
            yield digest, None


def check_failure_rows(session: Session, trusted: TrustedSigners) -> Iterator[tuple[str, list[Failure]]]:
    """Every failure cache row against its signed statement: (action key, failures)."""
    rows = session.execute(
        select(
            FailedAction.action_key,
            FailedAction.error_code,
            FailedAction.error_message,
            FailedAction.envelope_digest,
            FailedAction.envelope,
            FailedAction.signer_keyid,
        )
        .order_by(FailedAction.action_key)
        .execution_options(yield_per=PAGE)
    )
    for key, code, message, envelope_digest, envelope, signer in rows:
        target = f"failure cache row {key}"
        found = []
        if envelope is not None and sha256_hex(envelope) != envelope_digest:
            found.append(
                Failure(
                    "failure.corrupt", target, f"the envelope in the row does not hash to {envelope_digest}"
                )
            )
        found += check_failure(
            envelope,
            trusted,
            action_key=key,
            error_code=code,
            error_message=message,
            target=target,
            signer_keyid=signer,
        )
        yield key, found


def check_run_states(session: Session, run_id: str | None = None) -> Iterator[Failure | None]:
    """Each finished run's state recomputed from its targets, as ``runs.finalize_run`` derives it:
    ``completed_with_failures`` when a target failed (or is a cached failure), ``completed``
    otherwise, and no target still open (``run.state_mismatch``). Runs still going, or aborted,
    restate nothing and are not counted. ``run_id``: that run's only."""
    failed = or_(
        RenderTarget.state == JobState.FAILED.value,
        (RenderTarget.state == JobState.CACHED.value) & RenderTarget.error_code.is_not(None),
    )
    rows = session.execute(
        select(
            FleetRun.id,
            FleetRun.state,
            func.count(RenderTarget.id).filter(failed),
            func.count(RenderTarget.id).filter(RenderTarget.state == JobState.QUEUED.value),
        )
        .outerjoin(RenderTarget, RenderTarget.run_id == FleetRun.id)
        .where(FleetRun.state.in_(FINISHED), *([FleetRun.id == run_id] if run_id is not None else []))
        .group_by(FleetRun.id, FleetRun.state)
        .order_by(FleetRun.id)
        .execution_options(yield_per=PAGE)
    )
    for run_id, state, failures, still_open in rows:
        derived = RunState.COMPLETED_WITH_FAILURES.value if failures else RunState.COMPLETED.value
        if state != derived or still_open:
            yield Failure(
                "run.state_mismatch",
                f"run {run_id}",
                f"the row says {state!r}; its targets ({failures} failed, {still_open} still open) say"
                + (" it is not finished" if still_open else f" {derived!r}"),
            )
        else:
            yield None


FINISHED = (RunState.COMPLETED.value, RunState.COMPLETED_WITH_FAILURES.value)
