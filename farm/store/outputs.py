"""Persisting signed outputs: the one write path for render results.

Order: ``put_signed`` makes a batch's manifests durable in object storage (one ``put_many``),
then ``record_outputs`` writes the rows (outputs, signer, evidence records, action-cache entries)
in the caller's transaction, the same one that records the batch's targets. A crash between the
two leaves blobs without rows, never a row without its blob; ``farm gc`` sweeps such blobs.

A batch's outputs share one signed statement: its envelope is written once, in
``evidence_envelopes``, and each output's evidence record names it and its subject's position
(``evidence_envelope`` reads it back), in the same transaction, rather than as a file or an
object-store PUT. Rows written before revision 0018 hold their own envelope in the row, and rows
written before revision 0010 name an envelope blob; both are still read.

Idempotent: an output already stored keeps its row; an action key already in the cache keeps its
entry. The same action key producing *different* bytes is a determinism violation, reported per
target as ``NondeterministicOutputError`` (nothing is recorded for that target's output).
Signing is not done here: ``farm.evidence.signing`` produces the ``SignedOutput``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Insert, Table, delete, select, text
from sqlalchemy.orm import Session, object_session

from farm.evidence.failure import SignedFailure
from farm.evidence.keys import Signer
from farm.evidence.provenance import PROVENANCE_PREDICATE_TYPE
from farm.evidence.signing import SignedOutput
from farm.identity.canonical import sha256_hex
from farm.store.models import (
    ActionCacheEntry,
    EvidenceEnvelope,
    EvidenceRecord,
    FailedAction,
    RenderOutput,
    utcnow,
)
from farm.store.objects import BlobCorruptError, BlobMissingError, ObjectStore
from farm.store.repository import ensure_signer, insert_ignoring
from farm.store.runs import KEY_CHUNK, among, cached_outputs, chunks


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


def put_signed(objects: ObjectStore, outputs: Sequence[SignedOutput]) -> None:
    """Every manifest of ``outputs`` durable in object storage; touches no database (the envelopes
    go into their evidence rows)."""
    put_manifests(objects, [output.manifests for output in outputs])


def put_manifests(objects: ObjectStore, manifests: Sequence[bytes]) -> None:
    """Rendered manifests durable in object storage, before they are signed or recorded (a blob
    no row names is swept by ``farm gc``)."""
    if manifests:
        objects.put_many(manifests)


def batch_envelopes(session: Session, records: Sequence[EvidenceRecord]) -> dict[str, bytes]:
    """The batch envelopes ``records`` name, by digest (one query per chunk of digests)."""
    wanted = sorted({record.batch_envelope for record in records if record.batch_envelope is not None})
    return _by_key(session, EvidenceEnvelope.digest, EvidenceEnvelope.envelope, wanted)


def _by_key(session: Session, key: Any, value: Any, keys: Sequence[str]) -> dict[Any, Any]:
    """``key → value`` for the rows whose ``key`` is one of ``keys`` (one query per chunk)."""
    found: dict[Any, Any] = {}
    for chunk in chunks(keys, KEY_CHUNK):
        found.update(
            dict(session.execute(select(key, value).where(among(session, key, chunk))).tuples().all())
        )
    return found


def evidence_envelope(
    objects: ObjectStore, record: EvidenceRecord, batches: Mapping[str, bytes] | None = None
) -> bytes:
    """The DSSE envelope vouching for ``record``, checked against its digest: the batch envelope
    it names (from ``batches``, else read through the record's session), the bytes held in the
    row, or for a row written before revision 0010, the blob it names. Raises
    ``BlobCorruptError`` when the bytes do not hash to the digest, ``BlobMissingError`` when the
    envelope is gone."""
    if record.batch_envelope is not None:
        return _batch_envelope(record, batches)
    if record.envelope is None:
        return objects.get(record.envelope_digest)
    actual = sha256_hex(record.envelope)
    if actual != record.envelope_digest:
        raise BlobCorruptError(
            record.envelope_digest, actual, len(record.envelope), f"the row of evidence record {record.id}"
        )
    return record.envelope


def _batch_envelope(record: EvidenceRecord, batches: Mapping[str, bytes] | None) -> bytes:
    digest = record.batch_envelope
    assert digest is not None
    if batches is None:
        session = object_session(record)
        batches = batch_envelopes(session, [record]) if session is not None else {}
    envelope = batches.get(digest)
    where = f"evidence_envelopes (named by evidence record {record.id})"
    if envelope is None:
        raise BlobMissingError(digest, where)
    actual = sha256_hex(envelope)
    if actual != digest:
        raise BlobCorruptError(digest, actual, len(envelope), where)
    return envelope


def _insert_ignoring(session: Session, table: Table) -> Insert:
    return insert_ignoring(session.get_bind().dialect.name, table)


def _evidence_ids(session: Session, envelopes: list[str]) -> dict[str, int]:
    return _by_key(session, EvidenceRecord.envelope_digest, EvidenceRecord.id, envelopes)


def record_outputs(
    session: Session, signer: Signer, outputs: Sequence[SignedOutput], *, now: datetime | None = None
) -> dict[str, NondeterministicOutputError]:
    """``record_outputs_once``, returning only the outputs refused as nondeterministic."""
    return record_outputs_once(session, signer, outputs, now=now).refused


@dataclass(frozen=True)
class Recorded:
    """What ``record_outputs_once`` did not record: outputs refused as nondeterministic, and the
    action keys another render had already recorded with the same output (a key is recorded
    once, whoever renders it first; the target still succeeded, with those bytes)."""

    refused: dict[str, NondeterministicOutputError] = field(default_factory=dict)
    already: frozenset[str] = frozenset()


def record_outputs_once(
    session: Session, signer: Signer, outputs: Sequence[SignedOutput], *, now: datetime | None = None
) -> Recorded:
    """Rows for outputs whose blobs ``put_signed`` stored; the caller commits.

    An action key is recorded once: an output whose key the cache already holds adds no evidence
    record (two runs of one catalog at once both render a target, and only the first to record it
    vouches for it). The keys are locked first (SQLite: the transaction's write lock, taken at its
    BEGIN; PostgreSQL: a transaction advisory lock per key), so the look-up sees any concurrent
    recording of them. Bulk statements: a batch costs a handful of round trips, not a few per
    target.
    """
    if not outputs:
        return Recorded()
    now = now or utcnow()
    _lock_action_keys(session, [output.action_key for output in outputs])
    existing = cached_outputs(session, [output.action_key for output in outputs])
    refused = {
        output.action_key: NondeterministicOutputError(
            output.action_key, existing[output.action_key], output.output_digest
        )
        for output in outputs
        if output.action_key in existing and existing[output.action_key] != output.output_digest
    }
    already = frozenset(output.action_key for output in outputs if output.action_key in existing) - set(
        refused
    )
    kept = [output for output in outputs if output.action_key not in existing]
    if not kept:
        return Recorded(refused, already)
    ensure_signer(session, signer.keyid, signer.public_key_pem)
    envelopes = {o.envelope_digest: o for o in kept if o.subject_index is not None}
    if envelopes:
        session.execute(
            _insert_ignoring(session, EvidenceEnvelope.__table__),
            [
                {"digest": d, "envelope": o.envelope, "signer_keyid": o.signer_keyid, "created_at": now}
                for d, o in envelopes.items()
            ],
        )
    session.execute(
        _insert_ignoring(session, RenderOutput.__table__),
        [{"digest": o.output_digest, "size_bytes": len(o.manifests), "created_at": now} for o in kept],
    )
    session.execute(
        _insert_ignoring(session, EvidenceRecord.__table__),
        [_evidence_row(output, now) for output in kept],
    )
    evidence = _evidence_ids(session, [output.record_key for output in kept])
    new_entries = [
        {
            "action_key": output.action_key,
            "output_digest": output.output_digest,
            "evidence_id": evidence[output.record_key],
            "created_at": now,
        }
        for output in kept
    ]
    session.execute(_insert_ignoring(session, ActionCacheEntry.__table__), new_entries)
    return Recorded(refused, already)


_ADVISORY_LOCKS = text(
    "SELECT pg_advisory_xact_lock(hashtextextended(key, 0)) FROM unnest(CAST(:keys AS text[])) AS key"
    " ORDER BY key"  # one order for every transaction: two recorders never wait on each other in a cycle
)


def _lock_action_keys(session: Session, keys: Sequence[str]) -> None:
    """On PostgreSQL, a transaction advisory lock on each key until the commit; on SQLite the
    transaction already holds the database's write lock (``BEGIN IMMEDIATE``)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(_ADVISORY_LOCKS, {"keys": sorted(set(keys))})


def _evidence_row(output: SignedOutput, now: datetime) -> dict[str, object]:
    provenance = output.provenance
    batch = output.subject_index is not None
    return {
        "envelope_digest": output.record_key,
        "envelope": None if batch else output.envelope,
        "batch_envelope": output.envelope_digest if batch else None,
        "subject_index": output.subject_index,
        "statement_digest": output.statement_digest,
        "subject_name": provenance.subject_name,
        "subject_digest": output.output_digest,
        "predicate_type": PROVENANCE_PREDICATE_TYPE,
        "signer_keyid": output.signer_keyid,
        "action_key": provenance.action_key,
        "target_id": provenance.target_id or None,
        "cluster_profile": provenance.cluster_profile,
        "selection": provenance.inputs.selection,
        "created_at": now,
    }


def record_failures(
    session: Session, failures: Sequence[SignedFailure], *, now: datetime | None = None
) -> None:
    """Cache deterministic core failures with their signed statements; the caller commits.

    A row already there for the key is replaced: a row that is served was verified and would have
    spared this render, so the one found here is unsigned, forged or signed by a key no longer
    trusted (the same failure signed again gives the same row)."""
    if failures:
        now = now or utcnow()
        keys = [failure.action_key for failure in failures]
        for chunk in chunks(keys):
            session.execute(delete(FailedAction).where(FailedAction.action_key.in_(chunk)))
        session.execute(
            _insert_ignoring(session, FailedAction.__table__),
            [
                {
                    "action_key": failure.action_key,
                    "error_code": failure.error_code,
                    "error_message": failure.error_message,
                    "envelope_digest": failure.envelope_digest,
                    "signer_keyid": failure.signer_keyid,
                    "envelope": failure.envelope,
                    "created_at": now,
                }
                for failure in failures
            ],
        )


def first_evidence_of(session: Session, digest: str) -> EvidenceRecord | None:
    """The first evidence record whose statement is about output ``digest``."""
    return session.scalar(
        select(EvidenceRecord)
        .where(EvidenceRecord.subject_digest == digest)
        .order_by(EvidenceRecord.id)
        .limit(1)
    )
