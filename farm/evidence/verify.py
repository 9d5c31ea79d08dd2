"""Verification of signed evidence, returning named failures instead of raising.

Each ``Failure`` carries a stable ``code``, the ``target`` it concerns (``output <digest>``,
``envelope <digest>``) and a message. Codes:

- ``envelope.malformed``, ``envelope.payload_type``: the envelope cannot be read as DSSE in-toto.
- ``signature.missing``: no signature at all.
- ``signature.untrusted``: signatures exist but none is by a trusted key (the key ids are named).
- ``signature.invalid``: a trusted key id signed, but the signature does not verify.
- ``statement.malformed``, ``statement.predicate_type``: the payload is not the expected statement.
- ``statement.subject_mismatch``: the statement is about other bytes than the blob it vouches for.
- ``provenance.malformed``, ``provenance.action_key_mismatch``: the predicate is not a coherent
  render provenance, or its action key is not the one recorded for the output.

The checks go on after a failure where they still can, so one report lists everything wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

from farm.evidence.dsse import IN_TOTO_PAYLOAD_TYPE, Envelope, pae, parse_envelope
from farm.evidence.errors import EvidenceError
from farm.evidence.keys import TrustedSigners
from farm.evidence.provenance import RenderProvenance, parse_render_provenance
from farm.evidence.statement import Statement, parse_statement


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
    return EnvelopeCheck(statement, tuple(failures), signed_by)


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


def verify_render_evidence(
    output_digest: str,
    envelope_bytes: bytes,
    trusted: TrustedSigners,
    *,
    target: str,
    expected_action_key: str | None = None,
) -> tuple[RenderProvenance | None, list[Failure]]:
    """Every check of one render provenance envelope against the output digest it vouches for."""
    check = check_envelope(envelope_bytes, trusted, target)
    failures = list(check.failures)
    if check.statement is None:
        return None, failures
    failures += check_subject(check.statement, output_digest, target)
    try:
        provenance = parse_render_provenance(check.statement)
    except EvidenceError as error:
        return None, [*failures, Failure(error.code, target, error.message)]
    if expected_action_key is not None and provenance.action_key != expected_action_key:
        failures.append(
            Failure(
                "provenance.action_key_mismatch",
                target,
                f"statement action key {provenance.action_key} is not the recorded {expected_action_key}",
            )
        )
    return provenance, failures


__all__ = ["EnvelopeCheck", "Failure", "check_envelope", "check_subject", "pae", "verify_render_evidence"]
