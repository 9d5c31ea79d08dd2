"""Storing a rendered output with its signed provenance: the one write path for render results.

Order: the manifests blob, then the envelope blob, then the rows (output, signer, evidence record,
action-cache entry) in the caller's transaction. A crash after the blobs and before the commit
leaves blobs without rows, never a row without its blob; ``farm gc`` sweeps such blobs.

Idempotent: storing the same action key again returns the first record and writes no new row (a
lost or damaged output blob is put back, since the bytes are at hand).
If the same action key produces *different* bytes, that is a determinism violation and
``NondeterministicOutputError`` is raised (the caller rolls back).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from farm.evidence.canonical import sha256_hex
from farm.evidence.dsse import sign_envelope
from farm.evidence.keys import Signer
from farm.evidence.provenance import PROVENANCE_PREDICATE_TYPE, RenderProvenance, build_render_provenance
from farm.store.models import ActionCacheEntry, EvidenceRecord, RenderOutput, utcnow
from farm.store.objects import ObjectStore
from farm.store.repository import cached_output, ensure_signer, insert_ignoring_conflict


class NondeterministicOutputError(RuntimeError):
    """One action key, two different outputs: the render is not deterministic."""

    def __init__(self, action_key: str, stored: str, new: str) -> None:
        super().__init__(
            f"action key {action_key} already produced output {stored}, but this render produced {new}: "
            "the render is not deterministic"
        )
        self.action_key = action_key
        self.stored_digest = stored
        self.new_digest = new


@dataclass(frozen=True)
class OutputRecord:
    output_digest: str
    envelope_digest: str
    action_key: str
    evidence_id: int
    reused: bool


def store_output(
    session: Session,
    objects: ObjectStore,
    signer: Signer,
    *,
    manifests: bytes,
    action_key: str,
    provenance: RenderProvenance,
) -> OutputRecord:
    """Store ``manifests`` and their signed provenance; the caller commits the session.

    ``action_key`` is the key the job was planned with; it must equal the action key of
    ``provenance.inputs`` or nothing is written.
    """
    if provenance.action_key != action_key:
        raise ValueError(
            f"action_key: the job's action key {action_key} is not the key of its inputs ({provenance.action_key})"
        )
    output_digest = sha256_hex(manifests)
    existing = cached_output(session, action_key)
    if existing is not None:
        record = _reuse(session, existing, output_digest)
        objects.put(manifests)  # no-op when the blob is intact; restores it if it was lost
        return record
    objects.put(manifests)
    statement = build_render_provenance(output_digest, provenance)
    envelope_bytes = sign_envelope(statement.to_bytes(), signer).to_bytes()
    envelope_digest = objects.put(envelope_bytes)
    evidence_id = _write_rows(
        session, signer, manifests, output_digest, envelope_digest, statement.to_bytes(), provenance
    )
    insert_ignoring_conflict(
        session,
        ActionCacheEntry,
        {
            "action_key": action_key,
            "output_digest": output_digest,
            "evidence_id": evidence_id,
            "created_at": utcnow(),
        },
    )
    entry = _reload_cache_entry(session, action_key)  # a concurrent twin may have won the insert
    if entry.output_digest != output_digest:
        raise NondeterministicOutputError(action_key, entry.output_digest, output_digest)
    session.flush()
    return OutputRecord(output_digest, envelope_digest, action_key, entry.evidence_id, reused=False)


def _reuse(session: Session, entry: ActionCacheEntry, output_digest: str) -> OutputRecord:
    if entry.output_digest != output_digest:
        raise NondeterministicOutputError(entry.action_key, entry.output_digest, output_digest)
    record = session.get(EvidenceRecord, entry.evidence_id)
    envelope_digest = record.envelope_digest if record is not None else ""
    return OutputRecord(
        entry.output_digest, envelope_digest, entry.action_key, entry.evidence_id, reused=True
    )


def _write_rows(
    session: Session,
    signer: Signer,
    manifests: bytes,
    output_digest: str,
    envelope_digest: str,
    statement_bytes: bytes,
    provenance: RenderProvenance,
) -> int:
    now = utcnow()
    insert_ignoring_conflict(
        session, RenderOutput, {"digest": output_digest, "size_bytes": len(manifests), "created_at": now}
    )
    ensure_signer(session, signer.keyid, signer.public_key_pem)
    insert_ignoring_conflict(
        session,
        EvidenceRecord,
        {
            "envelope_digest": envelope_digest,
            "statement_digest": sha256_hex(statement_bytes),
            "subject_name": provenance.subject_name,
            "subject_digest": output_digest,
            "predicate_type": PROVENANCE_PREDICATE_TYPE,
            "signer_keyid": signer.keyid,
            "action_key": provenance.action_key,
            "job_id": provenance.job_id or None,
            "cluster_profile": provenance.cluster_profile,
            "selection": provenance.inputs.selection,
            "created_at": now,
        },
    )
    evidence_id = session.scalar(
        select(EvidenceRecord.id).where(EvidenceRecord.envelope_digest == envelope_digest)
    )
    if evidence_id is None:  # pragma: no cover - the insert above or a committed twin guarantees a row
        raise RuntimeError(f"evidence record for envelope {envelope_digest} vanished")
    return evidence_id


def _reload_cache_entry(session: Session, action_key: str) -> ActionCacheEntry:
    entry = session.scalar(
        select(ActionCacheEntry)
        .where(ActionCacheEntry.action_key == action_key)
        .execution_options(populate_existing=True)
    )
    if entry is None:  # pragma: no cover - the insert above or a committed twin guarantees a row
        raise RuntimeError(f"action cache entry {action_key} vanished")
    return entry
