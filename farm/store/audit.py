"""Checks of what is stored: ``farm verify`` (outputs and their evidence) and ``farm gc`` (orphans).

Verification of one output checks, and names as a ``Failure`` when wrong:

- the output row exists (``output.unknown``) and its blob is there (``blob.missing``) and hashes to
  its digest (``blob.corrupt``, which also catches truncation);
- at least one evidence record vouches for it (``evidence.missing``), and every action-cache
  entry for it points at one of those records (``evidence.not_linked``);
- each evidence record's envelope (its batch's, or held in its row, or an older row's blob) is
  there and intact (``envelope.missing``, ``envelope.corrupt``) and passes
  ``farm.evidence.verify.verify_render_evidence``: a signature by a trusted key, a statement whose
  subject is the output digest (for a batch statement: the subject at the record's position has
  the output's digest and the record's subject name), a coherent provenance whose action key is
  the recorded one; a batch record's key is the reference to that subject
  (``evidence.reference_mismatch``). A batch envelope is checked once while it stays in the
  bounded ``EnvelopeCache``;
- every target row that rendered the output is one a statement about it names: application,
  cluster, selection, request digest and action key (``binding.target_mismatch``, naming the row
  and what differs); every action-cache entry's key is the one signed in the statement of the
  evidence record it names (``binding.cache_mismatch``). Swapping the whole binding of two targets
  (output, key, request and pack together) fails, because each statement names its target.

A cache hit (a row naming an output it did not render) is bound the same way from the rows'
side, by ``cache_hit_findings``: ``farm verify --run`` checks the run's hits, ``--all`` every hit.
Only the rows that rendered an output are indexed by it (revision 0023), so a no-change run, all
cache hits, writes no entry to that index.

The sweep lists rows first and blobs second: a blob is always written before its row, so a row
seen by the sweep has its blob in the later listing unless the blob is really gone.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from farm.evidence.batch import subject_reference
from farm.evidence.keys import TrustedSigners
from farm.evidence.provenance import RenderProvenance
from farm.evidence.verify import EnvelopeCache, EnvelopeCheck, Failure, verify_render_evidence
from farm.store.models import (
    BLOB_REFERENCES,
    RENDERED_TARGET,
    ActionCacheEntry,
    CatalogSnapshot,
    EvidenceRecord,
    FailedAction,
    FleetRun,
    JobState,
    RenderOutput,
    RenderTarget,
)
from farm.store.objects import BlobCorruptError, BlobInfo, BlobMissingError, ObjectStore
from farm.store.outputs import batch_envelopes, evidence_envelope
from farm.store.runs import among, chunks, targets_of_run
from farm.store.snapshots import manifest_references

PAGE = 250  # evidence records per page of ``check_every_output``: its outputs' rows are held with it

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
    row = session.execute(
        select(RenderOutput.digest, RenderOutput.size_bytes).where(RenderOutput.digest == digest)
    ).first()
    if row is None:
        return OutputEvidence(
            [], [Failure("output.unknown", f"output {digest}", "no render output has this digest")]
        )
    return _check_output_rows(
        objects, trusted, digest, row.size_bytes, _rows_of(session, [digest])[digest], EnvelopeCache()
    )


def signed_core_versions(
    session: Session, objects: ObjectStore, trusted: TrustedSigners, digest: str, cache: EnvelopeCache
) -> set[str]:
    """The core versions the statements about output ``digest`` that decode were signed on (its
    evidence records' envelopes through ``cache``, shared by the caller's calls; the blob is not
    read: ``check_output`` checks it)."""
    records = _rows_of(session, [digest])[digest]
    found = set()
    for record in records.records:
        provenance = _verify_record(objects, trusted, record, digest, records.envelopes, cache)[0]
        if provenance is not None:
            found.add(provenance.inputs.core_version)
    return found


def verify_output(
    session: Session, objects: ObjectStore, trusted: TrustedSigners, digest: str
) -> list[Failure]:
    """Every check of one output; an empty list means it verifies."""
    return check_output(session, objects, trusted, digest).failures


def check_every_output(
    session: Session, objects: ObjectStore, trusted: TrustedSigners, page: int = PAGE
) -> Iterator[tuple[str, list[Failure]]]:
    """(digest, failures) for every output, ``check_output``'s checks a page at a time: first the
    outputs evidence records vouch for, in the order of their first record, then those none does,
    in digest order.

    The records of a job's batch are consecutive, so walking the records in id order meets each
    batch envelope on one or two pages, and the bounded ``EnvelopeCache`` verifies it once (in
    digest order, a batch's outputs are spread over every page). A page costs a few queries, not a
    few per output: its records, the outputs whose first record it holds, their evidence records,
    batch envelopes, cache rows and target rows. The rows of a page are dropped before the next is
    read."""
    cache = EnvelopeCache()
    last_id = 0
    while True:
        records = session.execute(
            select(EvidenceRecord.id, EvidenceRecord.subject_digest)
            .where(EvidenceRecord.id > last_id)
            .order_by(EvidenceRecord.id)
            .limit(page)
        ).all()
        if not records:
            break
        yield from _check_outputs(session, objects, trusted, _first_vouched(session, records), cache)
        session.expunge_all()  # the identity map would grow with every page read
        if len(records) < page:
            break
        last_id = records[-1].id
    last = ""
    while True:
        unvouched = (
            select(RenderOutput.digest)
            .where(
                RenderOutput.digest > last,
                ~select(EvidenceRecord.id)
                .where(EvidenceRecord.subject_digest == RenderOutput.digest)
                .exists(),
            )
            .order_by(RenderOutput.digest)
            .limit(page)
        )
        digests = list(session.scalars(unvouched))
        if not digests:
            return
        yield from _check_outputs(session, objects, trusted, digests, cache)
        session.expunge_all()
        if len(digests) < page:
            return
        last = digests[-1]


def _first_vouched(session: Session, records: list[Any]) -> list[str]:
    """The subject digests of a page of records whose first record is on the page."""
    candidates = list(dict.fromkeys(digest for _, digest in records))
    earlier = set(
        session.scalars(
            select(EvidenceRecord.subject_digest)
            .where(
                among(session, EvidenceRecord.subject_digest, candidates), EvidenceRecord.id < records[0].id
            )
            .distinct()
        )
    )
    return [digest for digest in candidates if digest not in earlier]


def _check_outputs(
    session: Session, objects: ObjectStore, trusted: TrustedSigners, digests: list[str], cache: EnvelopeCache
) -> Iterator[tuple[str, list[Failure]]]:
    """Every check of the outputs among ``digests`` (a digest with no output row is skipped: the
    reference check reports a record naming no output)."""
    if not digests:
        return
    sizes = dict(
        session.execute(
            select(RenderOutput.digest, RenderOutput.size_bytes).where(
                among(session, RenderOutput.digest, digests)
            )
        ).all()
    )
    outputs = [digest for digest in digests if digest in sizes]
    if not outputs:
        return
    rows = _rows_of(session, outputs)
    for digest in outputs:
        yield (
            digest,
            _check_output_rows(objects, trusted, digest, sizes[digest], rows[digest], cache).failures,
        )


@dataclass
class _OutputRows:
    """The rows pointing at one output: its evidence records (oldest first) with the batch envelopes
    they name, the action-cache rows and the target rows that rendered it (by id)."""

    records: list[EvidenceRecord] = field(default_factory=list)
    envelopes: dict[str, bytes] = field(default_factory=dict)
    entries: list[ActionCacheEntry] = field(default_factory=list)
    targets: list[Any] = field(default_factory=list)


def _rows_of(session: Session, digests: list[str]) -> dict[str, _OutputRows]:
    """The rows pointing at ``digests`` (a page of them): one query per table."""
    rows = {digest: _OutputRows() for digest in digests}
    records = select(EvidenceRecord).where(among(session, EvidenceRecord.subject_digest, digests))
    for record in session.scalars(records.order_by(EvidenceRecord.id)):
        rows[record.subject_digest].records.append(record)
    envelopes = batch_envelopes(session, [record for output in rows.values() for record in output.records])
    for output in rows.values():
        output.envelopes = envelopes  # shared by the page: a batch vouches for several of its outputs
    entries = select(ActionCacheEntry).where(among(session, ActionCacheEntry.output_digest, digests))
    for entry in session.scalars(entries.order_by(ActionCacheEntry.action_key)):
        rows[entry.output_digest].entries.append(entry)
    targets = (
        select(*_BINDING_COLUMNS)
        .where(among(session, RenderTarget.output_digest, digests), _RENDERED)
        .order_by(RenderTarget.id)
    )
    for target in session.execute(targets):
        rows[target.output_digest].targets.append(target)
    return rows


# the condition of the partial index on output digests (literal SQL: SQLite uses a partial index
# only for a literal term), qualified for statements that join other tables
_RENDERED = text(f"render_targets.{RENDERED_TARGET}")
# what binds a target row to a statement about its output (``_check_bindings``), and names the row
_BINDING_COLUMNS = (
    RenderTarget.id,
    RenderTarget.run_id,
    RenderTarget.application,
    RenderTarget.cluster_profile,
    RenderTarget.selection,
    RenderTarget.request_digest,
    RenderTarget.action_key,
    RenderTarget.output_digest,
)


def _check_output_rows(
    objects: ObjectStore,
    trusted: TrustedSigners,
    digest: str,
    size: int,
    rows: _OutputRows,
    cache: EnvelopeCache,
) -> OutputEvidence:
    """Every check of one output whose rows are read: blob, each statement, the cache and target rows."""
    target = f"output {digest}"
    failures = _check_output_blob(objects, digest, size, target)
    if not rows.records:
        failures.append(Failure("evidence.missing", target, "no evidence record vouches for this output"))
    checked = []
    for record in rows.records:
        provenance, found = _verify_record(objects, trusted, record, digest, rows.envelopes, cache)
        checked.append((record, provenance))
        failures += found
    failures += _check_cache_links(rows.entries, {record.id for record in rows.records}, target)
    failures += _check_bindings(rows.targets, checked, rows.entries, target)
    return OutputEvidence(checked, failures)


def _check_bindings(
    targets: list[Any],
    checked: list[tuple[EvidenceRecord, RenderProvenance | None]],
    entries: list[ActionCacheEntry],
    target: str,
) -> list[Failure]:
    """Every target and cache row pointing at this output is one a signed statement is about.

    One output (the same bytes) can be signed for several targets, so a target row is bound when
    SOME statement about its output digest names exactly its application, cluster, selection,
    request digest and action key; a cache row is bound when the statement of the evidence record
    it names signs its action key. A statement that does not decode binds nothing (it is reported
    on its own); when no statement of the output decodes, the output already fails and its rows
    are not compared.
    """
    failures = [failure for _, failure in _unbound_targets(targets, checked, target)]
    signed_keys = {
        record.id: provenance.action_key if provenance is not None else record.action_key
        for record, provenance in checked
    }
    for entry in entries:
        signed_key = signed_keys.get(entry.evidence_id)
        if entry.evidence_id in signed_keys and signed_key != entry.action_key:
            failures.append(
                Failure(
                    "binding.cache_mismatch",
                    target,
                    f"action cache entry {entry.action_key} points at evidence {entry.evidence_id}, signed for"
                    f" action key {signed_key}",
                )
            )
    return failures


def _unbound_targets(
    targets: list[Any], checked: list[tuple[EvidenceRecord, RenderProvenance | None]], target: str
) -> list[tuple[Any, Failure]]:
    """Each target row no statement among ``checked`` names, with its failure (none when no
    statement decodes: the output fails on its own)."""
    statements = [(record, provenance) for record, provenance in checked if provenance is not None]
    if not statements:
        return []
    signed = {tuple(_signed_fields(provenance).values()) for _, provenance in statements}
    unbound = []
    for row in targets:
        if _signed_exactly(row, signed):
            continue
        differences = _closest_differences(row, statements)
        if differences is not None:
            unbound.append((row, _target_mismatch(target, row, differences)))
    return unbound


def _target_fields(row: Any) -> dict[str, str | None]:
    return {
        "application": row.application,
        "cluster": row.cluster_profile,
        "selection": row.selection or "",
        "request digest": row.request_digest,
        "action key": row.action_key,
    }


def _signed_fields(provenance: RenderProvenance) -> dict[str, str | None]:
    return {
        "application": provenance.application,
        "cluster": provenance.cluster_profile,
        "selection": provenance.inputs.selection,
        "request digest": provenance.inputs.request_digest,
        "action key": provenance.action_key,
    }


def _signed_exactly(row: Any, signed: set[tuple[str | None, ...]]) -> bool:
    """Some statement names exactly the row's target (the common case, one set look-up; a row
    with no request digest is left to ``_closest_differences``)."""
    return row.request_digest is not None and tuple(_target_fields(row).values()) in signed


def _closest_differences(
    row: Any, statements: list[tuple[EvidenceRecord, RenderProvenance | None]]
) -> tuple[int, list[str]] | None:
    """None when some statement names exactly the row's target; else the evidence id of the
    statement differing in the fewest fields, and those fields. A row written before request
    digests were recorded (NULL) is compared on the rest: its action key covers the request."""
    wanted = _target_fields(row)
    closest: tuple[int, list[str]] | None = None
    for record, provenance in statements:
        assert provenance is not None
        signed = _signed_fields(provenance)
        differing = [
            f"{name} (row {value!r}, signed {signed[name]!r})"
            for name, value in wanted.items()
            if value != signed[name] and not (name == "request digest" and value is None)
        ]
        if not differing:
            return None
        if closest is None or len(differing) < len(closest[1]):
            closest = (record.id, differing)
    return closest


def _target_mismatch(target: str, row: Any, differences: tuple[int, list[str]]) -> Failure:
    evidence_id, differing = differences
    name = f"{row.application}/{row.cluster_profile}"
    if row.selection:
        name += f"/{row.selection}"
    return Failure(
        "binding.target_mismatch",
        target,
        f"target {name} ({row.id}) of run {row.run_id}: no statement about this output names its"
        f" target, request and action key; the closest (evidence {evidence_id}) differs in "
        + ", ".join(differing),
    )


def _check_output_blob(objects: ObjectStore, digest: str, size: int, target: str) -> list[Failure]:
    """The blob is there, hashes to its digest, and is as long as the row says (``output.size_mismatch``)."""
    try:
        data = objects.get(digest)
    except BlobMissingError as error:
        return [Failure("blob.missing", target, str(error))]
    except BlobCorruptError as error:
        return [Failure("blob.corrupt", target, str(error))]
    if len(data) != size:
        return [
            Failure(
                "output.size_mismatch",
                target,
                f"the row says {size} bytes, the blob holds {len(data)}",
            )
        ]
    return []


def _verify_record(
    objects: ObjectStore,
    trusted: TrustedSigners,
    record: EvidenceRecord,
    digest: str,
    envelopes: dict[str, bytes],
    cache: EnvelopeCache,
) -> tuple[RenderProvenance | None, list[Failure]]:
    batch = record.batch_envelope
    if batch is None:
        target = f"output {digest}, evidence {record.id} (envelope {record.envelope_digest})"
    else:
        target = f"output {digest}, evidence {record.id} (subject {record.subject_index} of envelope {batch})"
    try:
        envelope_bytes = evidence_envelope(objects, record, envelopes)
    except BlobMissingError as error:
        return None, [Failure("envelope.missing", target, str(error))]
    except BlobCorruptError as error:
        return None, [Failure("envelope.corrupt", target, str(error))]
    failures: list[Failure] = []
    if batch is not None:
        if record.subject_index is None:
            return None, [
                Failure("statement.subject_mismatch", target, "the record names no subject of its batch")
            ]
        if record.envelope_digest != subject_reference(batch, record.subject_index):
            failures.append(
                Failure(
                    "evidence.reference_mismatch",
                    target,
                    f"the record's key {record.envelope_digest} is not the reference to its subject",
                )
            )
    provenance, found = verify_render_evidence(
        digest,
        envelope_bytes,
        trusted,
        target=target,
        expected_action_key=record.action_key,
        subject_index=record.subject_index if batch is not None else None,
        subject_name=record.subject_name if batch is not None else None,
        cache=cache,
    )
    check, _ = cache.check(envelope_bytes, trusted, target)  # checked just above: a cache hit
    return provenance, failures + found + _restated_otherwise(record, check, provenance, target)


def _restated_otherwise(
    record: EvidenceRecord, check: EnvelopeCheck, provenance: RenderProvenance | None, target: str
) -> list[Failure]:
    """``evidence.record_mismatch`` when a column of the record restates its envelope otherwise:
    the signer (one whose trusted signature verifies), the statement's digest and predicate type,
    and its subject's target id, cluster and selection. A column left NULL (rows of older
    revisions) restates nothing; a statement that does not decode or verify fails on its own."""
    if check.statement is None:
        return []
    restated: list[tuple[str, object, object]] = [
        ("statement digest", record.statement_digest, check.statement_digest),
        ("predicate type", record.predicate_type, check.statement.predicate_type),
    ]
    if check.trusted_keyids and record.signer_keyid not in check.trusted_keyids:
        restated.append(("signer", record.signer_keyid, ", ".join(check.trusted_keyids)))
    if provenance is not None:
        if (
            record.batch_envelope is None
        ):  # a batch's subject name is its subject's (statement.subject_mismatch)
            restated.append(("subject name", record.subject_name, provenance.subject_name))
        for name, value, signed in (
            ("target id", record.target_id, provenance.target_id or None),
            ("cluster", record.cluster_profile, provenance.cluster_profile),
            ("selection", record.selection, provenance.inputs.selection),
        ):
            if value is not None:
                restated.append((name, value, signed))
    differing = [
        f"{name} (row {value!r}, signed {signed!r})"
        for name, value, signed in restated
        if name == "signer" or value != signed
    ]
    if not differing:
        return []
    return [
        Failure(
            "evidence.record_mismatch",
            target,
            "the record restates its signed statement otherwise: " + ", ".join(differing),
        )
    ]


def _check_cache_links(entries: list[ActionCacheEntry], record_ids: set[int], target: str) -> list[Failure]:
    return [
        Failure(
            "evidence.not_linked",
            target,
            f"action key {entry.action_key} points at evidence {entry.evidence_id}, which is not about this output",
        )
        for entry in entries
        if entry.evidence_id not in record_ids
    ]


CACHE_HIT_PAGE = 2_000  # cache hits bound per page of ``cache_hit_findings``


def cache_hit_findings(
    session: Session,
    objects: ObjectStore,
    trusted: TrustedSigners,
    hits: Iterable[Any],
    cache: EnvelopeCache | None = None,
) -> Iterator[tuple[Any, list[Failure]]]:
    """(row, failures) for each cache hit among ``hits`` (rows of ``_BINDING_COLUMNS``): a target
    row that names an output it did not render is bound as a rendered row is (``_check_bindings``).

    The index that finds the rows naming an output holds only the rows that rendered it (revision
    0023: a no-change run wrote an entry per target), so cache hits are bound from the rows, a page
    at a time: a hit with the very fields of a row that rendered its output is bound through that
    row, whose own binding ``check_output`` checks; any other is compared with the statements about
    its output, and fails ``binding.target_mismatch`` unless one names it."""
    cache = cache or EnvelopeCache()
    page: list[Any] = []
    for hit in hits:
        page.append(hit)
        if len(page) == CACHE_HIT_PAGE:
            yield from _bind_cache_hits(session, objects, trusted, page, cache)
            page = []
    if page:
        yield from _bind_cache_hits(session, objects, trusted, page, cache)


def _bind_cache_hits(
    session: Session, objects: ObjectStore, trusted: TrustedSigners, hits: list[Any], cache: EnvelopeCache
) -> Iterator[tuple[Any, list[Failure]]]:
    digests = list(dict.fromkeys(hit.output_digest for hit in hits))
    rendered: set[tuple[Any, ...]] = set()
    for chunk in chunks(digests):
        found = session.execute(
            select(*_BINDING_COLUMNS).where(among(session, RenderTarget.output_digest, chunk), _RENDERED)
        )
        rendered.update(_bound_fields(row) for row in found)
    unmatched: dict[str, list[Any]] = {}
    for hit in hits:
        if hit.request_digest is None or _bound_fields(hit) not in rendered:
            unmatched.setdefault(hit.output_digest, []).append(hit)
    failures = _bind_to_statements(session, objects, trusted, unmatched, cache) if unmatched else {}
    for hit in hits:
        yield hit, failures.get(hit.id, [])


def _bound_fields(row: Any) -> tuple[Any, ...]:
    """What a statement binds of a target row (``_signed_fields``), and the output it names."""
    return (*_target_fields(row).values(), row.output_digest)


def _bind_to_statements(
    session: Session,
    objects: ObjectStore,
    trusted: TrustedSigners,
    hits: dict[str, list[Any]],
    cache: EnvelopeCache,
) -> dict[str, list[Failure]]:
    """The binding failures of each row of ``hits`` (output digest → rows naming it), by row id."""
    records = list(
        session.scalars(
            select(EvidenceRecord)
            .where(among(session, EvidenceRecord.subject_digest, list(hits)))
            .order_by(EvidenceRecord.id)
        )
    )
    envelopes = batch_envelopes(session, records)
    by_output: dict[str, list[EvidenceRecord]] = {}
    for record in records:  # read once: kept out of the identity map, which would grow page by page
        session.expunge(record)
        by_output.setdefault(record.subject_digest, []).append(record)
    failures: dict[str, list[Failure]] = {}
    for digest, rows in hits.items():
        checked = [
            (record, _verify_record(objects, trusted, record, digest, envelopes, cache)[0])
            for record in by_output.get(digest, [])
        ]
        for row, failure in _unbound_targets(rows, checked, f"output {digest}"):
            failures.setdefault(row.id, []).append(failure)
    return failures


def cache_hits_of_run(session: Session, run_id: str) -> list[Any]:
    """The run's cache hits (cached targets with an output), as ``cache_hit_findings`` reads them."""
    return list(
        session.execute(
            select(*_BINDING_COLUMNS)
            .where(
                RenderTarget.run_id == run_id,
                RenderTarget.state == JobState.CACHED.value,
                RenderTarget.error_code.is_(None),
                RenderTarget.output_digest.is_not(None),
            )
            .order_by(RenderTarget.id)
        )
    )


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


def target_row_findings(
    session: Session, objects: ObjectStore, trusted: TrustedSigners
) -> Iterator[Failure | None]:
    """Every target row's state and error agree with what backs them, and each cache hit is bound
    to its output (``farm verify --all``): one finding per row, None when it passes.

    A row pointing at an output is a success: ``succeeded`` or ``cached`` with no error
    (``target.state_mismatch``); a success without an output is ``target.output_missing``; a cached
    failure is backed by the failure cache row of its action key with the same code. A cache hit
    is bound by ``cache_hit_findings`` (a row that rendered its output is bound by its output's
    checks). A target that failed in its own run is not signed and cannot be checked here
    (docs/errors.md says so).
    """
    rows = session.execute(_rows_with_cached_code().execution_options(yield_per=CACHE_HIT_PAGE))
    hits: list[Any] = []
    cache = EnvelopeCache()
    for row in rows:
        if row.state == JobState.CACHED.value and row.error_code is None and row.output_digest is not None:
            hits.append(row)
            if len(hits) == CACHE_HIT_PAGE:
                yield from _hit_findings(session, objects, trusted, hits, cache)
                hits = []
        else:
            yield _row_state_finding(row)
    yield from _hit_findings(session, objects, trusted, hits, cache)


def _rows_with_cached_code() -> Any:
    """Target rows as ``_row_state_finding`` reads them: the failure cache's code for their key."""
    return (
        select(
            *_BINDING_COLUMNS,
            RenderTarget.state,
            RenderTarget.error_code,
            FailedAction.error_code.label("cached_code"),
        )
        .outerjoin(FailedAction, FailedAction.action_key == RenderTarget.action_key)
        .order_by(RenderTarget.id)
    )


def row_state_failures_of_run(session: Session, run_id: str) -> list[Failure]:
    """``farm verify --run``: the checks ``target_row_findings`` makes of each of the run's target
    rows that is not a cache hit (a row pointing at an output succeeded; a cached failure is the
    failure cache's code for its key). A success without an output is ``outputs_of_run``'s."""
    rows = session.execute(_rows_with_cached_code().where(RenderTarget.run_id == run_id))
    found = []
    for row in rows:
        if row.state == JobState.CACHED.value and row.error_code is None and row.output_digest is not None:
            continue  # a cache hit: ``cache_hit_findings`` binds it
        failure = _row_state_finding(row)
        if failure is not None and failure.code != "target.output_missing":
            found.append(failure)
    return found


def _hit_findings(
    session: Session, objects: ObjectStore, trusted: TrustedSigners, hits: list[Any], cache: EnvelopeCache
) -> Iterator[Failure | None]:
    """One finding per cache hit of ``hits`` (a page already): its binding failures, or None."""
    if hits:
        for _, failures in _bind_cache_hits(session, objects, trusted, hits, cache):
            yield from failures or [None]


def _row_state_finding(row: Any) -> Failure | None:
    """A target row's state and error against its output and the failure cache (not a cache hit)."""
    state, code, output, key = row.state, row.error_code, row.output_digest, row.action_key
    name = f"{row.application}/{row.cluster_profile}" + (f"/{row.selection}" if row.selection else "")
    where = f"target {name} ({row.id}) of run {row.run_id}"
    successes = (JobState.SUCCEEDED.value, JobState.CACHED.value)
    if output is not None and (state not in successes or code is not None):
        return Failure(
            "target.state_mismatch",
            where,
            f"state {state!r} with error {code!r}, yet it points at output {output}: a target"
            " with an output succeeded",
        )
    if output is None and state in successes and code is None:
        return Failure("target.output_missing", where, f"{state} target has no output digest")
    if state == JobState.CACHED.value and code is not None and row.cached_code != code:
        return Failure(
            "target.state_mismatch",
            where,
            f"cached failure {code!r}, but the failure cache holds "
            + (f"{row.cached_code!r}" if row.cached_code else "nothing")
            + f" for its action key {key}",
        )
    return None


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
    # snapshot manifests that cannot be read (snapshot → why): what they name is unknown, so the
    # sweep removes nothing while one is
    unreadable: dict[str, str] = field(default_factory=dict)


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


def _add_snapshot_documents(
    session: Session, objects: ObjectStore, references: dict[str, list[str]]
) -> dict[str, str]:
    """Every document and request pack a stored snapshot manifest names is live with its snapshot;
    the snapshots whose manifest cannot be read (missing, corrupt or malformed), with why."""
    for snapshot in session.scalars(select(CatalogSnapshot.digest)):
        # a snapshot's manifest hashes to its digest: kept even when its row names another
        # (``farm verify --all`` fails that row); a snapshot stored without one names nothing here
        names = references.get(snapshot)
        if names is not None and SNAPSHOT_MANIFEST not in names:
            names.append(SNAPSHOT_MANIFEST)
        elif names is None and objects.exists(snapshot):
            references[snapshot] = [SNAPSHOT_MANIFEST]
    manifests = select(CatalogSnapshot.digest, CatalogSnapshot.blob_digest).where(
        CatalogSnapshot.blob_digest.is_not(None)
    )
    unreadable: dict[str, str] = {}
    for snapshot, manifest in session.execute(manifests):
        try:
            named = manifest_references(objects.get(manifest))
        except BlobMissingError:
            unreadable[snapshot] = f"its manifest {manifest} is missing"
            continue
        except BlobCorruptError:
            unreadable[snapshot] = f"its manifest {manifest} is corrupt"
            continue
        except (ValueError, KeyError, TypeError) as error:
            unreadable[snapshot] = f"its manifest {manifest} cannot be read ({error})"
            continue
        for digest in named:
            names = references.setdefault(digest, [])
            if SNAPSHOT_MANIFEST not in names:
                names.append(SNAPSHOT_MANIFEST)
    return unreadable


def sweep(
    session: Session,
    objects: ObjectStore,
    *,
    dry_run: bool,
    grace: timedelta,
    now: datetime | None = None,
) -> SweepReport:
    """Find orphans both ways; unless ``dry_run``, delete unreferenced blobs older than ``grace``.

    Rows pointing at a missing blob are only reported: the bytes cannot be recreated here. While a
    snapshot's manifest cannot be read, nothing is deleted: the documents and request packs only
    it names would look unreferenced, and the snapshot is kept (restoring the manifest, or a run
    of its catalog, which stores it again, makes it whole).
    """
    now = now or datetime.now(UTC)
    references = referenced_blobs(session, None)
    unreadable = _add_snapshot_documents(session, objects, references)
    stored = {blob.digest: blob for blob in objects.list_blobs()}
    report = SweepReport(
        unreferenced=[blob for digest, blob in sorted(stored.items()) if digest not in references],
        missing={digest: columns for digest, columns in sorted(references.items()) if digest not in stored},
        unreadable=unreadable,
    )
    for blob in report.unreferenced:
        if now - blob.modified < grace:
            report.kept_in_grace.append(blob.digest)
        elif not dry_run and not unreadable and not _referenced_now(session, blob.digest):
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
