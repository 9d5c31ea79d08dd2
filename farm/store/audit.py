"""Checks of what is stored: ``farm verify`` (outputs and their evidence) and ``farm gc`` (orphans).

Verification of one output checks, and names as a ``Failure`` when wrong:

- the output row exists (``output.unknown``) and its blob is there (``blob.missing``) and hashes to
  its digest (``blob.corrupt``, which also catches truncation);
- at least one evidence record vouches for it (``evidence.missing``), and every action-cache
  entry for it points at one of those records (``evidence.not_linked``);
- each evidence record's envelope (held in its row, or an older row's blob) is there and intact
  (``envelope.missing``, ``envelope.corrupt``) and passes
  ``farm.evidence.verify.verify_render_evidence``: a signature by a trusted key, a statement whose
  subject is the output digest, a coherent provenance whose action key is the recorded one;
- every target and action-cache entry pointing at the output is bound to it by the signed action
  key (``binding.target_mismatch``, ``binding.cache_mismatch``): an output re-pointed at another
  target's valid signed output fails.

The sweep lists rows first and blobs second: a blob is always written before its row, so a row
seen by the sweep has its blob in the later listing unless the blob is really gone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from farm.evidence.keys import TrustedSigners
from farm.evidence.provenance import RenderProvenance
from farm.evidence.verify import Failure, verify_render_evidence
from farm.store.models import (
    BLOB_REFERENCES,
    ActionCacheEntry,
    CatalogSnapshot,
    EvidenceRecord,
    FleetRun,
    JobState,
    RenderOutput,
    RenderTarget,
)
from farm.store.objects import BlobCorruptError, BlobInfo, BlobMissingError, ObjectStore
from farm.store.outputs import evidence_envelope
from farm.store.runs import targets_of_run
from farm.store.snapshots import manifest_references

# ---------------------------------------------------------------------------------------------
# Verification
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutputEvidence:
    """What ``farm verify --output`` finds about one output: each evidence record with the
    provenance its envelope states (None when unreadable), and every failure."""

    records: list[tuple[EvidenceRecord, RenderProvenance | None]]
    failures: list[Failure]


def check_output(
    session: Session, objects: ObjectStore, trusted: TrustedSigners, digest: str
) -> OutputEvidence:
    """Every check of one output, with the provenance of each of its evidence records."""
    target = f"output {digest}"
    if session.get(RenderOutput, digest) is None:
        return OutputEvidence([], [Failure("output.unknown", target, "no render output has this digest")])
    failures = _check_blob(objects, digest, target, "blob")
    records = list(
        session.scalars(
            select(EvidenceRecord).where(EvidenceRecord.subject_digest == digest).order_by(EvidenceRecord.id)
        )
    )
    if not records:
        failures.append(Failure("evidence.missing", target, "no evidence record vouches for this output"))
    checked = []
    for record in records:
        provenance, found = _verify_record(objects, trusted, record, digest)
        checked.append((record, provenance))
        failures += found
    failures += _check_cache_links(session, digest, {record.id for record in records}, target)
    failures += _check_bindings(session, digest, records, target)
    return OutputEvidence(checked, failures)


def verify_output(
    session: Session, objects: ObjectStore, trusted: TrustedSigners, digest: str
) -> list[Failure]:
    """Every check of one output; an empty list means it verifies."""
    return check_output(session, objects, trusted, digest).failures


def _check_bindings(
    session: Session, digest: str, records: list[EvidenceRecord], target: str
) -> list[Failure]:
    """Every target and cache entry pointing at this output is one the signed evidence is about.

    A target served from the cache shares another target's evidence, so a target binds through its
    action key (which covers application, cluster, selection and every input), and a cache entry
    through the action key of the evidence record it names.
    """
    signed_keys = {record.action_key for record in records}
    by_id = {record.id: record for record in records}
    failures = []
    targets = session.execute(
        select(
            RenderTarget.id, RenderTarget.application, RenderTarget.cluster_profile, RenderTarget.action_key
        )
        .where(RenderTarget.output_digest == digest)
        .order_by(RenderTarget.id)
    )
    for target_id, application, cluster, key in targets:
        if key not in signed_keys:
            failures.append(
                Failure(
                    "binding.target_mismatch",
                    target,
                    f"target {application}/{cluster} ({target_id}) with action key {key} points at an"
                    " output whose signed evidence is about another action",
                )
            )
    entries = session.scalars(select(ActionCacheEntry).where(ActionCacheEntry.output_digest == digest))
    for entry in entries:
        record = by_id.get(entry.evidence_id)
        if record is not None and record.action_key != entry.action_key:
            failures.append(
                Failure(
                    "binding.cache_mismatch",
                    target,
                    f"action cache entry {entry.action_key} points at evidence {record.id}, signed for"
                    f" action key {record.action_key}",
                )
            )
    return failures


def _check_blob(objects: ObjectStore, digest: str, target: str, kind: str) -> list[Failure]:
    try:
        objects.get(digest)
    except BlobMissingError as error:
        return [Failure(f"{kind}.missing", target, str(error))]
    except BlobCorruptError as error:
        return [Failure(f"{kind}.corrupt", target, str(error))]
    return []


def _verify_record(
    objects: ObjectStore, trusted: TrustedSigners, record: EvidenceRecord, digest: str
) -> tuple[RenderProvenance | None, list[Failure]]:
    target = f"output {digest}, evidence {record.id} (envelope {record.envelope_digest})"
    try:
        envelope_bytes = evidence_envelope(objects, record)
    except BlobMissingError as error:
        return None, [Failure("envelope.missing", target, str(error))]
    except BlobCorruptError as error:
        return None, [Failure("envelope.corrupt", target, str(error))]
    return verify_render_evidence(
        digest, envelope_bytes, trusted, target=target, expected_action_key=record.action_key
    )


def _check_cache_links(session: Session, digest: str, record_ids: set[int], target: str) -> list[Failure]:
    entries = session.scalars(select(ActionCacheEntry).where(ActionCacheEntry.output_digest == digest))
    return [
        Failure(
            "evidence.not_linked",
            target,
            f"action key {entry.action_key} points at evidence {entry.evidence_id}, which is not about this output",
        )
        for entry in entries
        if entry.evidence_id not in record_ids
    ]


def outputs_of_run(session: Session, run_id: str) -> tuple[list[str], list[Failure]]:
    """The output digests of a run's targets, and failures for targets that should have one."""
    if session.get(FleetRun, run_id) is None:
        return [], [Failure("run.unknown", f"run {run_id}", "no fleet run has this id")]
    digests: list[str] = []
    failures: list[Failure] = []
    for target in targets_of_run(session, run_id):
        if target.state not in (JobState.SUCCEEDED.value, JobState.CACHED.value) or target.error_code:
            continue
        if target.output_digest is None:
            failures.append(
                Failure(
                    "target.output_missing",
                    f"target {target.application}/{target.cluster_profile} ({target.target_id})",
                    f"{target.state} target has no output digest",
                )
            )
        elif target.output_digest not in digests:
            digests.append(target.output_digest)
    return digests, failures


def all_outputs(session: Session) -> list[str]:
    return list(session.scalars(select(RenderOutput.digest).order_by(RenderOutput.digest)))


def verify_outputs(
    session: Session, objects: ObjectStore, trusted: TrustedSigners, digests: Iterable[str]
) -> list[Failure]:
    failures: list[Failure] = []
    for digest in digests:
        failures += verify_output(session, objects, trusted, digest)
    return failures


# ---------------------------------------------------------------------------------------------
# Orphan sweep
# ---------------------------------------------------------------------------------------------


@dataclass
class SweepReport:
    unreferenced: list[BlobInfo] = field(default_factory=list)
    missing: dict[str, list[str]] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    kept_in_grace: list[str] = field(default_factory=list)


SNAPSHOT_MANIFEST = "catalog snapshot manifest"


def referenced_blobs(session: Session, objects: ObjectStore | None = None) -> dict[str, list[str]]:
    """digest → the ``table.column`` names whose rows point at that blob."""
    references: dict[str, list[str]] = {}
    for column, names_a_blob in BLOB_REFERENCES:
        name = f"{column.class_.__tablename__}.{column.key}"
        for digest in session.scalars(select(column).where(names_a_blob).distinct()):
            references.setdefault(digest, []).append(name)
    if objects is not None:
        _add_snapshot_documents(session, objects, references)
    return references


def _add_snapshot_documents(session: Session, objects: ObjectStore, references: dict[str, list[str]]) -> None:
    """Every document and request pack a stored snapshot manifest names is live with its snapshot."""
    manifests = select(CatalogSnapshot.blob_digest).where(CatalogSnapshot.blob_digest.is_not(None))
    for manifest in session.scalars(manifests):
        try:
            named = manifest_references(objects.get(manifest))
        except (BlobMissingError, BlobCorruptError):
            continue  # reported as a missing (or corrupt) blob by its own column
        for digest in named:
            names = references.setdefault(digest, [])
            if SNAPSHOT_MANIFEST not in names:
                names.append(SNAPSHOT_MANIFEST)


def sweep(
    session: Session,
    objects: ObjectStore,
    *,
    dry_run: bool,
    grace: timedelta,
    now: datetime | None = None,
) -> SweepReport:
    """Find orphans both ways; unless ``dry_run``, delete unreferenced blobs older than ``grace``.

    Rows pointing at a missing blob are only reported: the bytes cannot be recreated here.
    """
    now = now or datetime.now(UTC)
    references = referenced_blobs(session, objects)
    stored = {blob.digest: blob for blob in objects.list_blobs()}
    report = SweepReport(
        unreferenced=[blob for digest, blob in sorted(stored.items()) if digest not in references],
        missing={digest: columns for digest, columns in sorted(references.items()) if digest not in stored},
    )
    for blob in report.unreferenced:
        if now - blob.modified < grace:
            report.kept_in_grace.append(blob.digest)
        elif not dry_run and not _referenced_now(session, blob.digest):
            objects.delete(blob.digest)
            report.removed.append(blob.digest)
    return report


def _referenced_now(session: Session, digest: str) -> bool:
    # A writer may have committed a row for this blob since the sweep read the references.
    session.rollback()
    # (A new snapshot naming an old blob refreshed its age when it was stored: the grace period keeps it.)
    return any(
        session.scalar(select(column).where(names_a_blob, column == digest).limit(1))
        for column, names_a_blob in BLOB_REFERENCES
    )
