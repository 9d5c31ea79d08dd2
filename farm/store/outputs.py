"""Storing a rendered output with its signed provenance: the one write path for render results.

Order: the manifests and envelope blobs (both durable), then the rows (output, signer, evidence
record, action-cache entry) in the caller's transaction. A worker signs and writes the blobs
(``sign_and_put``) before that transaction begins, so the database is not locked meanwhile. A crash after the blobs and before the commit
leaves blobs without rows, never a row without its blob; ``farm gc`` sweeps such blobs.

Idempotent: storing the same action key again returns the first record and writes no new row (a
lost or damaged output blob is put back, since the bytes are at hand).
If the same action key produces *different* bytes, that is a determinism violation and
``NondeterministicOutputError`` is raised (the caller rolls back).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from farm.evidence.canonical import sha256_hex
from farm.evidence.dsse import sign_envelope
from farm.evidence.keys import Signer
from farm.evidence.provenance import PROVENANCE_PREDICATE_TYPE, RenderProvenance, build_render_provenance
from farm.store.models import ActionCacheEntry, EvidenceRecord, RenderOutput, utcnow
from farm.store.objects import ObjectStore
from farm.store.repository import ensure_signer, insert_ignoring_conflict, insert_ignoring_conflict_returning


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


@dataclass(frozen=True)
class SignedOutput:
    """Manifests and their signed provenance statement, both blobs already durable in storage."""

    output_digest: str
    size_bytes: int
    envelope_digest: str
    statement_digest: str
    provenance: RenderProvenance  # what the signed statement says


def sign_and_put(
    objects: ObjectStore, signer: Signer, *, manifests: bytes, provenance: RenderProvenance
) -> SignedOutput:
    """Sign the provenance of ``manifests`` and store both blobs durably; touches no database.

    A worker calls this before its recording transaction, so the database's write lock is not
    held while it signs and waits for the blobs to reach the disk.
    """
    output_digest = sha256_hex(manifests)
    statement_bytes = build_render_provenance(output_digest, provenance).to_bytes()
    envelope_bytes = sign_envelope(statement_bytes, signer).to_bytes()
    _, envelope_digest = objects.put_many([manifests, envelope_bytes])  # both durable before any row
    return SignedOutput(
        output_digest, len(manifests), envelope_digest, sha256_hex(statement_bytes), provenance
    )


def store_output(
    session: Session,
    objects: ObjectStore,
    signer: Signer,
    *,
    manifests: bytes,
    action_key: str,
    provenance: RenderProvenance,
    signed: SignedOutput | None = None,
) -> OutputRecord:
    """Store ``manifests`` and their signed provenance; the caller commits the session.

    ``action_key`` is the key the job was planned with; it must equal the action key of
    ``provenance.inputs`` or nothing is written. ``signed`` is what ``sign_and_put`` returned for
    these manifests and this provenance, if the caller wrote the blobs beforehand (having found
    no cache entry for the key); otherwise they are signed and written here, once the action cache
    says they are needed.
    """
    if provenance.action_key != action_key:
        raise ValueError(
            f"action_key: the job's action key {action_key} is not the key of its inputs ({provenance.action_key})"
        )
    output_digest = sha256_hex(manifests)
    if signed is not None and (signed.output_digest, signed.provenance) != (output_digest, provenance):
        raise ValueError(f"signed: it was made for other manifests or provenance than output {output_digest}")
    if signed is None:
        existing = session.execute(_CACHE_ENTRY, {"action_key": action_key}).first()
        if existing is not None:
            record = _reuse(session, action_key, existing.output_digest, existing.evidence_id, output_digest)
            objects.put(manifests)  # no-op when the blob is intact; restores it if it was lost
            return record
        signed = sign_and_put(objects, signer, manifests=manifests, provenance=provenance)
    # With ``signed`` given the caller found no cache entry before signing; one that appeared since
    # (a twin) makes the cache insert below find a conflict, and this ends up reusing it all the same.
    now = utcnow()
    insert_ignoring_conflict(
        session, RenderOutput, {"digest": output_digest, "size_bytes": signed.size_bytes, "created_at": now}
    )
    ensure_signer(session, signer.keyid, signer.public_key_pem)
    # A savepoint, so that a twin of this action key that commits its entry first (two workers on
    # PostgreSQL) costs this transaction its evidence record too: one evidence record per key.
    with session.begin_nested() as savepoint:
        evidence_id = _insert_evidence(session, signer, signed, provenance, now)
        inserted = insert_ignoring_conflict_returning(
            session,
            ActionCacheEntry,
            {
                "action_key": action_key,
                "output_digest": output_digest,
                "evidence_id": evidence_id,
                "created_at": now,
            },
        )
        if inserted is None:
            savepoint.rollback()
    if inserted is not None:
        return OutputRecord(output_digest, signed.envelope_digest, action_key, evidence_id, reused=False)
    winner = session.execute(_CACHE_ENTRY, {"action_key": action_key}).first()
    if winner is None:  # pragma: no cover - the insert above or a committed twin guarantees a row
        raise RuntimeError(f"action cache entry {action_key} vanished")
    return _reuse(session, action_key, winner.output_digest, winner.evidence_id, output_digest)


_CACHE_ENTRY = select(ActionCacheEntry.output_digest, ActionCacheEntry.evidence_id).where(
    ActionCacheEntry.action_key == bindparam("action_key")
)
_EVIDENCE_ID = select(EvidenceRecord.id).where(EvidenceRecord.envelope_digest == bindparam("envelope_digest"))
_ENVELOPE_DIGEST = select(EvidenceRecord.envelope_digest).where(EvidenceRecord.id == bindparam("id"))


def _reuse(
    session: Session, action_key: str, stored_digest: str, evidence_id: int, output_digest: str
) -> OutputRecord:
    if stored_digest != output_digest:
        raise NondeterministicOutputError(action_key, stored_digest, output_digest)
    envelope_digest = session.scalar(_ENVELOPE_DIGEST, {"id": evidence_id}) or ""
    return OutputRecord(stored_digest, envelope_digest, action_key, evidence_id, reused=True)


def _insert_evidence(
    session: Session, signer: Signer, signed: SignedOutput, provenance: RenderProvenance, now: datetime
) -> int:
    inserted = insert_ignoring_conflict_returning(
        session,
        EvidenceRecord,
        {
            "envelope_digest": signed.envelope_digest,
            "statement_digest": signed.statement_digest,
            "subject_name": provenance.subject_name,
            "subject_digest": signed.output_digest,
            "predicate_type": PROVENANCE_PREDICATE_TYPE,
            "signer_keyid": signer.keyid,
            "action_key": provenance.action_key,
            "job_id": provenance.job_id or None,
            "cluster_profile": provenance.cluster_profile,
            "selection": provenance.inputs.selection,
            "created_at": now,
        },
        "id",
    )
    if inserted is not None:
        return inserted.id
    # The same envelope is already recorded (a committed twin signed the same statement).
    evidence_id = session.scalar(_EVIDENCE_ID, {"envelope_digest": signed.envelope_digest})
    if evidence_id is None:  # pragma: no cover - the insert above or a committed twin guarantees a row
        raise RuntimeError(f"evidence record for envelope {signed.envelope_digest} vanished")
    return evidence_id
