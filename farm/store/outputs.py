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
from functools import lru_cache
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, object_session

from farm.evidence.failure import SignedFailure
from farm.evidence.keys import Signer
from farm.evidence.provenance import PROVENANCE_PREDICATE_TYPE
from farm.evidence.signing import SignedOutput
from farm.identity.canonical import sha256_hex
from farm.store.models import (
    EvidenceEnvelope,
    EvidenceRecord,
    utcnow,
)
from farm.store.objects import BlobCorruptError, BlobMissingError, ObjectStore
from farm.store.repository import bind_moment, driver_cursor
from farm.store.runs import CACHED_LOOKUP, KEY_CHUNK, among, chunks


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
    put_manifests(
        objects, [output.manifests for output in outputs], [output.output_digest for output in outputs]
    )


def put_manifests(objects: ObjectStore, manifests: Sequence[bytes], digests: Sequence[str]) -> None:
    """Rendered manifests durable in object storage, before they are signed or recorded (a blob
    no row names is swept by ``farm gc``); ``digests``: their sha256, as the worker computed them."""
    if manifests:
        objects.put_many(manifests, digests)


def batch_envelopes(session: Session, records: Sequence[EvidenceRecord]) -> dict[str, bytes]:
    """The batch envelopes ``records`` name, by digest (one query per chunk of digests)."""
    wanted = sorted({record.batch_envelope for record in records if record.batch_envelope is not None})
    return _by_key(session, EvidenceEnvelope.digest, EvidenceEnvelope.envelope, wanted)


def _by_key(session: Session, key: Any, value: Any, keys: Sequence[str]) -> dict[Any, Any]:
    """``key → value`` for the rows whose ``key`` is one of ``keys`` (one query per chunk)."""
    found: dict[Any, Any] = {}
    for chunk in chunks(keys, KEY_CHUNK):
        found.update(dict(session.execute(select(key, value).where(among(session, key, chunk))).all()))
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


def record_outputs(
    session: Session, signer: Signer, outputs: Sequence[SignedOutput], *, now: datetime | None = None
) -> dict[str, NondeterministicOutputError]:
    """``record_outputs_once``, returning only the outputs refused as nondeterministic."""
    return record_outputs_once(session, signer, outputs, now=now).refused


def lock_action_keys(session: Session, keys: Sequence[str]) -> None:
    """On PostgreSQL, take at once, in the one order every recorder uses, the transaction's locks
    that ``record_outputs`` takes on ``keys``: a transaction recording several jobs takes the
    locks of all before recording the first, so two recorders never wait on each other in a cycle
    (a session's advisory locks are re-entrant: ``record_outputs`` takes them again at no cost).
    Nothing on SQLite, whose writers take turns."""
    connection = session.connection()
    if connection.dialect.name != "postgresql" or not keys:
        return
    with driver_cursor(connection) as cursor:
        cursor.execute(_POSTGRESQL_LOCKS, (sorted(set(keys)),))


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
    recording of them.

    A batch costs two statements on PostgreSQL (the locks, then one statement that looks the keys
    up and inserts every row of the keys it did not find) and five or six on SQLite (the look-up,
    then an insert per table), written once per dialect as text and bound as tuples or arrays
    through the driver's cursor (``driver_cursor``): SQLAlchemy's per-row parameter processing
    cost more than the database's own work.
    """
    if not outputs:
        return Recorded()
    session.flush()  # the raw statements below do not flush the session's pending rows
    connection = session.connection()
    dialect = connection.dialect
    moment = bind_moment(dialect, now or utcnow())
    with driver_cursor(connection) as cursor:
        if dialect.name == "postgresql":
            existing = _record_on_postgresql(cursor, signer, outputs, moment)
        else:
            existing = _cached_on_sqlite(cursor, [output.action_key for output in outputs])
            kept = [output for output in outputs if output.action_key not in existing]
            if kept:
                _insert_on_sqlite(cursor, signer, kept, moment)
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
    return Recorded(refused, already)


_CACHED = CACHED_LOOKUP.format("IN ({})")  # ``farm.store.runs.cached_outputs``'s answer
_EVIDENCE_COLUMNS = (
    "envelope_digest, envelope, batch_envelope, subject_index, statement_digest, subject_name,"
    " subject_digest, predicate_type, signer_keyid, action_key, target_id, cluster_profile, selection,"
    " created_at"
)
_SQLITE_SIGNER = (
    "INSERT INTO signers (keyid, public_key_pem, trusted, first_seen_at) VALUES (?, ?, 0, ?)"
    " ON CONFLICT DO NOTHING"
)
_SQLITE_ENVELOPES = (
    "INSERT INTO evidence_envelopes (digest, envelope, signer_keyid, created_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT DO NOTHING"
)
_SQLITE_OUTPUTS = (
    "INSERT INTO render_outputs (digest, size_bytes, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
)
_SQLITE_CACHE = (
    "INSERT INTO action_cache (action_key, output_digest, evidence_id, created_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT DO NOTHING"
)
# the records of ``kept`` already there (recorded by a twin of the batch): a batch's by its
# subjects, a record holding its own envelope by that envelope's digest (revision 0026's indexes)
_SQLITE_BATCH_RECORD_IDS = (
    "SELECT envelope_digest, id FROM evidence_records WHERE batch_envelope = ? AND subject_index IN ({})"
)
_SQLITE_OWN_RECORD_IDS = "SELECT envelope_digest, id FROM evidence_records WHERE envelope_digest IN ({}) AND batch_envelope IS NULL"
_SQLITE_ROWS = 500  # rows per multi-row INSERT: 14 parameters a row, far below SQLite's 32,766


@lru_cache(maxsize=64)
def _listed(template: str, count: int) -> str:
    return template.format(", ".join("?" * count))


@lru_cache(maxsize=64)
def _sqlite_evidence(count: int) -> str:
    row = "(" + ", ".join("?" * 14) + ")"
    return (
        f"INSERT INTO evidence_records ({_EVIDENCE_COLUMNS}) VALUES {', '.join([row] * count)}"
        " ON CONFLICT DO NOTHING RETURNING envelope_digest, id"
    )


def _cached_on_sqlite(cursor: Any, keys: Sequence[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for chunk in chunks(keys):
        cursor.execute(_listed(_CACHED, len(chunk)), chunk)
        found.update(cursor.fetchall())
    return found


def _insert_on_sqlite(cursor: Any, signer: Signer, kept: Sequence[SignedOutput], moment: Any) -> None:
    """The rows of ``kept`` (outputs whose keys the cache lacks) under the transaction's write lock:
    the evidence records' ids come back from their INSERT (RETURNING), and only a record that was
    already there is read back."""
    cursor.execute(_SQLITE_SIGNER, (signer.keyid, signer.public_key_pem, moment))
    envelopes = {o.envelope_digest: o for o in kept if o.subject_index is not None}
    if envelopes:
        cursor.executemany(
            _SQLITE_ENVELOPES, [(d, o.envelope, o.signer_keyid, moment) for d, o in envelopes.items()]
        )
    cursor.executemany(_SQLITE_OUTPUTS, [(o.output_digest, len(o.manifests), moment) for o in kept])
    ids: dict[str, int] = {}
    for chunk in chunks(kept, _SQLITE_ROWS):
        cursor.execute(
            _sqlite_evidence(len(chunk)), [value for o in chunk for value in _evidence_values(o, moment)]
        )
        ids.update(cursor.fetchall())
    ids.update(_existing_record_ids(cursor, [o for o in kept if o.record_key not in ids]))
    cursor.executemany(
        _SQLITE_CACHE, [(o.action_key, o.output_digest, ids[o.record_key], moment) for o in kept]
    )


def _existing_record_ids(cursor: Any, outputs: Sequence[SignedOutput]) -> dict[str, int]:
    """record key → id of the evidence records of ``outputs`` that were already there."""
    subjects: dict[str, list[int]] = {}
    own = []
    for output in outputs:
        if output.subject_index is None:
            own.append(output.record_key)
        else:
            subjects.setdefault(output.envelope_digest, []).append(output.subject_index)
    ids: dict[str, int] = {}
    for batch, indexes in subjects.items():
        for chunk in chunks(indexes):
            cursor.execute(_listed(_SQLITE_BATCH_RECORD_IDS, len(chunk)), [batch, *chunk])
            ids.update(cursor.fetchall())
    for chunk in chunks(own):
        cursor.execute(_listed(_SQLITE_OWN_RECORD_IDS, len(chunk)), chunk)
        ids.update(cursor.fetchall())
    return ids


def _evidence_values(output: SignedOutput, moment: Any) -> tuple[Any, ...]:
    """An evidence record's values in ``_EVIDENCE_COLUMNS`` order."""
    provenance = output.provenance
    batch = output.subject_index is not None
    return (
        output.record_key,
        None if batch else output.envelope,
        output.envelope_digest if batch else None,
        output.subject_index,
        output.statement_digest,
        provenance.subject_name,
        output.output_digest,
        PROVENANCE_PREDICATE_TYPE,
        output.signer_keyid,
        provenance.action_key,
        provenance.target_id or None,
        provenance.cluster_profile,
        provenance.inputs.selection,
        moment,
    )


# PostgreSQL: the advisory locks, then one statement. Its look-up runs after the locks are held
# (a statement of its own reads every commit made before it started, so after the locks); the
# inserts of the keys it did not find are data-modifying parts of the same statement (their
# foreign keys are checked at its end, when every row of it is in). A record already there keeps
# its id (the cache entry names it), found by its subject as ``_existing_record_ids`` finds it;
# the statement returns the look-up's hits.
_POSTGRESQL_LOCKS = (
    "SELECT pg_advisory_xact_lock(hashtextextended(key, 0)) FROM unnest(%b::text[]) AS key"
    " ORDER BY key"  # one order for every transaction: two recorders never wait on each other in a cycle
)
_POSTGRESQL_RECORD = f"""
WITH existing AS (
    {_CACHED.format("SELECT unnest(%(keys)b::text[])")}
), batch AS (
    SELECT * FROM unnest(
        %(keys)b::text[], %(outputs)b::text[], %(sizes)b::int[], %(records)b::text[],
        %(envelopes)b::bytea[], %(batches)b::text[], %(indexes)b::int[], %(statements)b::text[],
        %(names)b::text[], %(signers)b::text[], %(targets)b::text[], %(clusters)b::text[],
        %(selections)b::text[]
    ) WITH ORDINALITY AS v(
        action_key, output_digest, size_bytes, record_key, envelope, batch_envelope, subject_index,
        statement_digest, subject_name, signer_keyid, target_id, cluster_profile, selection, position
    )
), kept AS (
    SELECT * FROM batch WHERE action_key NOT IN (SELECT action_key FROM existing)
), new_signer AS (
    INSERT INTO signers (keyid, public_key_pem, trusted, first_seen_at)
    SELECT %(keyid)s, %(pem)s, false, %(now)s WHERE EXISTS (SELECT FROM kept)
    ON CONFLICT DO NOTHING
), new_envelopes AS (
    INSERT INTO evidence_envelopes (digest, envelope, signer_keyid, created_at)
    SELECT digest, envelope, signer_keyid, %(now)s
    FROM unnest(%(envelope_digests)b::text[], %(envelope_bytes)b::bytea[], %(envelope_signers)b::text[])
        AS e(digest, envelope, signer_keyid)
    WHERE digest IN (SELECT batch_envelope FROM kept)
    ON CONFLICT DO NOTHING
), new_outputs AS (
    INSERT INTO render_outputs (digest, size_bytes, created_at)
    SELECT DISTINCT ON (output_digest) output_digest, size_bytes, %(now)s FROM kept
    ON CONFLICT DO NOTHING
), new_records AS (
    INSERT INTO evidence_records ({_EVIDENCE_COLUMNS})
    SELECT record_key, envelope, batch_envelope, subject_index, statement_digest, subject_name,
        output_digest, %(predicate)s, signer_keyid, action_key, target_id, cluster_profile, selection,
        %(now)s
    FROM kept ORDER BY position
    ON CONFLICT DO NOTHING
    RETURNING envelope_digest, id
), new_entries AS (
    INSERT INTO action_cache (action_key, output_digest, evidence_id, created_at)
    SELECT kept.action_key, kept.output_digest, coalesce(new_records.id, old_subject.id, old_own.id), %(now)s
    FROM kept
    LEFT JOIN new_records ON new_records.envelope_digest = kept.record_key
    LEFT JOIN evidence_records AS old_subject
        ON old_subject.batch_envelope = kept.batch_envelope AND old_subject.subject_index = kept.subject_index
    LEFT JOIN evidence_records AS old_own
        ON kept.batch_envelope IS NULL AND old_own.batch_envelope IS NULL
        AND old_own.envelope_digest = kept.record_key
    ON CONFLICT DO NOTHING
)
SELECT action_key, output_digest FROM existing
"""


def _record_on_postgresql(
    cursor: Any, signer: Signer, outputs: Sequence[SignedOutput], moment: Any
) -> dict[str, str]:
    keys = [output.action_key for output in outputs]
    cursor.execute(_POSTGRESQL_LOCKS, (sorted(set(keys)),))
    envelopes = {o.envelope_digest: o for o in outputs if o.subject_index is not None}
    batch = [o.subject_index is not None for o in outputs]
    cursor.execute(
        _POSTGRESQL_RECORD,
        {
            "keys": keys,
            "outputs": [o.output_digest for o in outputs],
            "sizes": [len(o.manifests) for o in outputs],
            "records": [o.record_key for o in outputs],
            "envelopes": [None if b else o.envelope for o, b in zip(outputs, batch, strict=True)],
            "batches": [o.envelope_digest if b else None for o, b in zip(outputs, batch, strict=True)],
            "indexes": [o.subject_index for o in outputs],
            "statements": [o.statement_digest for o in outputs],
            "names": [o.provenance.subject_name for o in outputs],
            "signers": [o.signer_keyid for o in outputs],
            "targets": [o.provenance.target_id or None for o in outputs],
            "clusters": [o.provenance.cluster_profile for o in outputs],
            "selections": [o.provenance.inputs.selection for o in outputs],
            "keyid": signer.keyid,
            "pem": signer.public_key_pem,
            "now": moment,
            "envelope_digests": list(envelopes),
            "envelope_bytes": [o.envelope for o in envelopes.values()],
            "envelope_signers": [o.signer_keyid for o in envelopes.values()],
            "predicate": PROVENANCE_PREDICATE_TYPE,
        },
    )
    return dict(cursor.fetchall())


_FAILURE_COLUMNS = (
    "action_key, error_code, error_message, envelope_digest, signer_keyid, envelope, created_at"
)
_SQLITE_FORGET_FAILURES = "DELETE FROM failed_actions WHERE action_key IN ({})"
_SQLITE_FAILURE = (
    f"INSERT INTO failed_actions ({_FAILURE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
)
_POSTGRESQL_FORGET_FAILURES = "DELETE FROM failed_actions WHERE action_key = ANY(%b::text[])"
_POSTGRESQL_FAILURES = (
    f"INSERT INTO failed_actions ({_FAILURE_COLUMNS}) SELECT *, %s FROM unnest("
    "%b::text[], %b::text[], %b::text[], %b::text[], %b::text[], %b::bytea[]) ON CONFLICT DO NOTHING"
)


def record_failures(
    session: Session, failures: Sequence[SignedFailure], *, now: datetime | None = None
) -> None:
    """Cache deterministic core failures with their signed statements; the caller commits.

    A row already there for the key is replaced: a row that is served was verified and would have
    spared this render, so the one found here is unsigned, forged or signed by a key no longer
    trusted (the same failure signed again gives the same row). Two statements on the driver's
    cursor, as ``record_outputs_once`` writes its rows."""
    if not failures:
        return
    session.flush()
    connection = session.connection()
    moment = bind_moment(connection.dialect, now or utcnow())
    keys = [failure.action_key for failure in failures]
    with driver_cursor(connection) as cursor:
        if connection.dialect.name == "postgresql":
            cursor.execute(_POSTGRESQL_FORGET_FAILURES, (keys,))
            cursor.execute(
                _POSTGRESQL_FAILURES,
                (
                    moment,
                    keys,
                    [failure.error_code for failure in failures],
                    [failure.error_message for failure in failures],
                    [failure.envelope_digest for failure in failures],
                    [failure.signer_keyid for failure in failures],
                    [failure.envelope for failure in failures],
                ),
            )
            return
        for chunk in chunks(keys):
            cursor.execute(_listed(_SQLITE_FORGET_FAILURES, len(chunk)), chunk)
        cursor.executemany(
            _SQLITE_FAILURE,
            [
                (
                    failure.action_key,
                    failure.error_code,
                    failure.error_message,
                    failure.envelope_digest,
                    failure.signer_keyid,
                    failure.envelope,
                    moment,
                )
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
