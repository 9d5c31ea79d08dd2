"""Verification of signed evidence, returning named failures instead of raising.

Each ``Failure`` carries a stable ``code``, the ``target`` it concerns (``output <digest>``,
``envelope <digest>``) and a message. Codes:

- ``envelope.malformed``, ``envelope.payload_type``: the envelope cannot be read as DSSE in-toto.
- ``signature.missing``: no signature at all.
- ``signature.untrusted``: signatures exist but none is by a trusted key (the key ids are named).
- ``signature.invalid``: a trusted key id signed, but the signature does not verify.
- ``statement.malformed``, ``statement.predicate_type``: the payload is not the expected statement.
- ``statement.subject_mismatch``: the statement is about other bytes than the blob it vouches for
  (for a batch statement: the subject at the record's position has another digest, or names
  another target, or no subject has the output's digest).
- ``provenance.malformed``, ``provenance.action_key_mismatch``: the predicate is not a coherent
  render provenance, or its action key is not the one recorded for the output.

The checks go on after a failure where they still can, so one report lists everything wrong.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from farm.evidence.batch import BatchStatement, is_batch_statement
from farm.evidence.dsse import IN_TOTO_PAYLOAD_TYPE, Envelope, pae, parse_envelope
from farm.evidence.errors import EvidenceError
from farm.evidence.keys import TrustedSigners
from farm.evidence.provenance import RenderProvenance, parse_render_provenance
from farm.evidence.statement import Statement, parse_statement
from farm.identity.canonical import sha256_hex


@dataclass(frozen=True)
class Failure:
    code: str
    target: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.target}: {self.message}"


@dataclass(frozen=True)
class EnvelopeCheck:
    """The outcome of checking one envelope: the statement (if readable) and every failure."""

    statement: Statement | None
    failures: tuple[Failure, ...]
    trusted_keyids: tuple[str, ...] = ()
    statement_digest: str = ""  # the sha256 of the payload (the statement's bytes)


def check_envelope(envelope_bytes: bytes, trusted: TrustedSigners, target: str) -> EnvelopeCheck:
    """Decode an envelope, check its signature against ``trusted`` and decode its statement."""
    try:
        envelope = parse_envelope(envelope_bytes)
    except EvidenceError as error:
        return EnvelopeCheck(None, (Failure(error.code, target, error.message),))
    failures = []
    if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE:
        failures.append(
            Failure("envelope.payload_type", target, f"payloadType is {envelope.payload_type!r}, not in-toto")
        )
    signed_by = tuple(envelope.signed_by_trusted(trusted))
    if not signed_by:
        failures.append(_signature_failure(envelope, trusted, target))
    statement = None
    try:
        statement = parse_statement(envelope.payload)
    except EvidenceError as error:
        failures.append(Failure(error.code, target, error.message))
    return EnvelopeCheck(statement, tuple(failures), signed_by, sha256_hex(envelope.payload))


def _signature_failure(envelope: Envelope, trusted: TrustedSigners, target: str) -> Failure:
    keyids = sorted({s.keyid for s in envelope.signatures})
    if any(keyid in trusted for keyid in keyids):
        return Failure(
            "signature.invalid", target, f"the signature by trusted key {', '.join(keyids)} does not verify"
        )
    return Failure("signature.untrusted", target, f"signed only by untrusted key(s) {', '.join(keyids)}")


def check_subject(statement: Statement, blob_digest: str, target: str) -> list[Failure]:
    """The statement must name ``blob_digest`` as its (only) subject."""
    digests = [s.sha256 for s in statement.subjects]
    if digests == [blob_digest]:
        return []
    return [
        Failure("statement.subject_mismatch", target, f"statement subject {digests} is not {blob_digest}")
    ]


class EnvelopeCache:
    """Envelopes already checked, by their bytes: a batch envelope vouches for many outputs, so
    its signature is verified and its statement decoded once while it stays here (each subject's
    render entry is decoded when a record asks for it). The least recently used envelope leaves
    past ``size``, so memory stays bounded however many batches a store holds."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._checked: OrderedDict[bytes, tuple[EnvelopeCheck, BatchStatement | EvidenceError | None]] = (
            OrderedDict()
        )

    def check(
        self, envelope_bytes: bytes, trusted: TrustedSigners, target: str
    ) -> tuple[EnvelopeCheck, BatchStatement | EvidenceError | None]:
        found = self._checked.get(envelope_bytes)
        if found is not None:
            self._checked.move_to_end(envelope_bytes)
            return found
        check = check_envelope(envelope_bytes, trusted, target)
        batch: BatchStatement | EvidenceError | None = None
        if check.statement is not None and is_batch_statement(check.statement):
            try:
                batch = BatchStatement(check.statement)
            except EvidenceError as error:
                batch = error
        found = self._checked[envelope_bytes] = (check, batch)
        if len(self._checked) > self.size:
            self._checked.popitem(last=False)
        return found


def verify_render_evidence(
    output_digest: str,
    envelope_bytes: bytes,
    trusted: TrustedSigners,
    *,
    target: str,
    expected_action_key: str | None = None,
    subject_index: int | None = None,
    subject_name: str | None = None,
    cache: EnvelopeCache | None = None,
) -> tuple[RenderProvenance | None, list[Failure]]:
    """Every check of one render provenance envelope against the output digest it vouches for.

    A batch statement vouches for the output at subject ``subject_index`` (when given; else the
    first subject with the output's digest), which must have the output's digest and, when
    ``subject_name`` is given, that name. A statement about one output alone must name exactly it.
    """
    check, batch = (cache or EnvelopeCache()).check(envelope_bytes, trusted, target)
    failures = [Failure(failure.code, target, failure.message) for failure in check.failures]
    if check.statement is None:
        return None, failures
    if batch is not None:
        if isinstance(batch, EvidenceError):
            return None, [*failures, Failure(batch.code, target, batch.message)]
        provenance, found = _batch_subject(batch, output_digest, subject_index, subject_name, target)
        failures += found
    elif subject_index is not None:
        return None, [
            *failures,
            Failure(
                "statement.subject_mismatch",
                target,
                f"the record names subject {subject_index} of a batch statement; the envelope's statement"
                " is about one output",
            ),
        ]
    else:
        failures += check_subject(check.statement, output_digest, target)
        try:
            provenance = parse_render_provenance(check.statement)
        except EvidenceError as error:
            return None, [*failures, Failure(error.code, target, error.message)]
    if provenance is None:
        return None, failures
    if expected_action_key is not None and provenance.action_key != expected_action_key:
        failures.append(
            Failure(
                "provenance.action_key_mismatch",
                target,
                f"statement action key {provenance.action_key} is not the recorded {expected_action_key}",
            )
        )
    return provenance, failures


def _batch_subject(
    batch: BatchStatement,
    output_digest: str,
    index: int | None,
    name: str | None,
    target: str,
) -> tuple[RenderProvenance | None, list[Failure]]:
    subjects = batch.subjects
    if index is None:
        matching = [
            i
            for i, s in enumerate(subjects)
            if s.sha256 == output_digest and (name is None or s.name == name)
        ]
        if not matching:
            return None, [
                Failure(
                    "statement.subject_mismatch",
                    target,
                    f"no subject of the batch statement is {output_digest}"
                    + (f" named {name!r}" if name is not None else ""),
                )
            ]
        return _provenance(batch, matching[0], target)
    if not 0 <= index < len(subjects):
        return None, [
            Failure(
                "statement.subject_mismatch",
                target,
                f"the batch statement has {len(subjects)} subjects, the record names subject {index}",
            )
        ]
    subject = subjects[index]
    failures = []
    if subject.sha256 != output_digest:
        failures.append(
            Failure(
                "statement.subject_mismatch",
                target,
                f"subject {index} of the batch statement is {subject.sha256}, not {output_digest}",
            )
        )
    if name is not None and subject.name != name:
        failures.append(
            Failure(
                "statement.subject_mismatch",
                target,
                f"subject {index} of the batch statement is named {subject.name!r}, the record {name!r}",
            )
        )
    provenance, found = _provenance(batch, index, target)
    return provenance, failures + found


def _provenance(
    batch: BatchStatement, index: int, target: str
) -> tuple[RenderProvenance | None, list[Failure]]:
    try:
        return batch.provenance(index), []
    except EvidenceError as error:
        return None, [Failure(error.code, target, error.message)]


__all__ = [
    "EnvelopeCache",
    "EnvelopeCheck",
    "Failure",
    "check_envelope",
    "check_subject",
    "pae",
    "verify_render_evidence",
]
