"""The signed cached failure: an in-toto Statement v1 in a DSSE envelope about a render that failed.

A deterministic core failure is cached against its action key so an unchanged re-run reports it
without rendering. The cache row is only served when a statement signed by a trusted key says so:
its subject is the error message (``failure:<action key>``, the sha256 of the message's UTF-8
bytes) and its predicate names the action key, the error code and that message digest again.
Nothing else (no clock, no worker) is in it, so the same failure signed by the same key gives the
same envelope bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from farm.evidence.dsse import sign_envelope
from farm.evidence.errors import EvidenceError, require_exact_keys
from farm.evidence.keys import Signer, TrustedSigners
from farm.evidence.statement import Subject, build_statement
from farm.evidence.verify import Failure, check_envelope
from farm.identity.canonical import sha256_hex

FAILURE_PREDICATE_TYPE = "https://farm.dev/failure/v1"


@dataclass(frozen=True)
class SignedFailure:
    """A cacheable failure and the envelope that vouches for it, ready to be stored."""

    action_key: str
    error_code: str
    error_message: str
    envelope: bytes
    envelope_digest: str
    signer_keyid: str


def message_digest(message: str) -> str:
    return sha256_hex(message.encode("utf-8"))


def sign_failure(signer: Signer, action_key: str, error_code: str, error_message: str) -> SignedFailure:
    """Sign the statement that the render of ``action_key`` fails with this code and message."""
    digest = message_digest(error_message)
    statement = build_statement(
        [Subject(f"failure:{action_key}", digest)],
        FAILURE_PREDICATE_TYPE,
        {"actionKey": action_key, "errorCode": error_code, "messageDigest": {"sha256": digest}},
    )
    envelope = sign_envelope(statement.to_bytes(), signer).to_bytes()
    return SignedFailure(action_key, error_code, error_message, envelope, sha256_hex(envelope), signer.keyid)


def check_failure(
    envelope: bytes | None,
    trusted: TrustedSigners,
    *,
    action_key: str,
    error_code: str,
    error_message: str,
    target: str,
    signer_keyid: str | None = None,
) -> list[Failure]:
    """Every reason the failure cache row (key, code, message, and the ``signer_keyid`` it names
    when given) is not vouched for by ``envelope``; an empty list means it is. Codes beyond
    ``check_envelope``'s: ``failure.unsigned`` (no envelope), ``failure.malformed`` (not a failure
    statement) and ``failure.mismatch`` (the statement is about another key, code or message, or
    another key signed it than the row names)."""
    if envelope is None:
        return [Failure("failure.unsigned", target, "no signed statement vouches for this cached failure")]
    check = check_envelope(envelope, trusted, target)
    failures = list(check.failures)
    if check.statement is None:
        return failures
    try:
        signed = _signed_fields(check.statement.predicate_type, check.statement.predicate)
    except EvidenceError as error:
        return [*failures, Failure(error.code, target, error.message)]
    wanted = {
        "action key": action_key,
        "error code": error_code,
        "message digest": message_digest(error_message),
    }
    subjects = [subject.sha256 for subject in check.statement.subjects]
    differing = [
        f"{name} (row {wanted[name]!r}, signed {signed[name]!r})"
        for name in wanted
        if wanted[name] != signed[name]
    ]
    if subjects != [signed["message digest"]]:
        differing.append(f"subject {subjects} is not the signed message digest")
    if signer_keyid is not None and check.trusted_keyids and signer_keyid not in check.trusted_keyids:
        differing.append(f"signer (row {signer_keyid!r}, signed {', '.join(check.trusted_keyids)!r})")
    if differing:
        failures.append(
            Failure("failure.mismatch", target, "the signed statement differs in " + ", ".join(differing))
        )
    return failures


def _signed_fields(predicate_type: str, predicate: dict) -> dict[str, str]:
    if predicate_type != FAILURE_PREDICATE_TYPE:
        raise EvidenceError(
            "failure.malformed", f"predicateType is {predicate_type!r}, not {FAILURE_PREDICATE_TYPE}"
        )
    fields = require_exact_keys(
        predicate, {"actionKey", "errorCode", "messageDigest"}, "failure.malformed", "predicate"
    )
    digest = require_exact_keys(
        fields["messageDigest"], {"sha256"}, "failure.malformed", "predicate.messageDigest"
    )
    values = {
        "action key": fields["actionKey"],
        "error code": fields["errorCode"],
        "message digest": digest["sha256"],
    }
    if not all(isinstance(value, str) for value in values.values()):
        raise EvidenceError(
            "failure.malformed", "the predicate's actionKey, errorCode and messageDigest must be strings"
        )
    return values


def failure_is_vouched(
    trusted: TrustedSigners, action_key: str, error_code: str, error_message: str, envelope: bytes | None
) -> bool:
    """True when ``envelope`` is a trusted signed statement of exactly this cached failure."""
    found = check_failure(
        envelope,
        trusted,
        action_key=action_key,
        error_code=error_code,
        error_message=error_message,
        target=f"failure cache row {action_key}",
    )
    return not found
