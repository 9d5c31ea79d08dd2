"""DSSE envelopes and in-toto statements."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from farm.evidence.dsse import IN_TOTO_PAYLOAD_TYPE, Envelope, Signature, pae, parse_envelope, sign_envelope
from farm.evidence.errors import EvidenceError
from farm.evidence.keys import Signer, TrustedSigners, signer_from_private_key
from farm.evidence.statement import STATEMENT_TYPE, Subject, build_statement, parse_statement
from farm.evidence.verify import check_envelope
from farm.identity.canonical import canonical_json, sha256_hex


def test_pae_matches_the_dsse_specification_test_vector() -> None:
    assert (
        pae("http://example.com/HelloWorld", b"hello world")
        == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )


def test_pae_counts_bytes_not_characters() -> None:
    assert pae("t", "é".encode()) == b"DSSEv1 1 t 2 \xc3\xa9"


def _statement_bytes(digest: str | None = None) -> bytes:
    subject = Subject("render:web/prod", digest or sha256_hex(b"manifests"))
    return build_statement([subject], "https://example.com/p/v1", {"k": "v"}).to_bytes()


def test_envelope_round_trip_and_signature_verifies(signer: Signer, trusted: TrustedSigners) -> None:
    envelope = sign_envelope(_statement_bytes(), signer)
    parsed = parse_envelope(envelope.to_bytes())
    assert parsed == envelope
    assert parsed.payload_type == IN_TOTO_PAYLOAD_TYPE
    assert parsed.signed_by_trusted(trusted) == [signer.keyid]
    wire = json.loads(envelope.to_bytes())
    assert set(wire) == {"payload", "payloadType", "signatures"}
    assert base64.b64decode(wire["payload"]) == _statement_bytes()
    assert wire["signatures"][0]["keyid"] == signer.keyid


def test_signing_twice_gives_identical_bytes(signer: Signer) -> None:
    assert (
        sign_envelope(_statement_bytes(), signer).to_bytes()
        == sign_envelope(_statement_bytes(), signer).to_bytes()
    )


@pytest.mark.parametrize(
    ("payload_type", "signatures"),
    [
        (IN_TOTO_PAYLOAD_TYPE, [("ab" * 32, bytes(range(64)))]),
        ('a "quoted" type\\ with é, \u2028 and a newline\n', [('k\u00e9"1', b"\x00\xff"), ("k2", b"")]),
    ],
)
def test_envelope_bytes_are_the_canonical_json_of_its_fields(
    payload_type: str, signatures: list[tuple[str, bytes]]
) -> None:
    envelope = Envelope(
        payload_type,
        b'{"a":"\xc3\xa9\\""}' + bytes(range(256)),
        tuple(Signature(k, s) for k, s in signatures),
    )
    assert envelope.to_bytes() == canonical_json(envelope.to_json())
    assert parse_envelope(envelope.to_bytes()) == envelope


def test_signature_covers_the_payload_type(signer: Signer, trusted: TrustedSigners) -> None:
    envelope = sign_envelope(_statement_bytes(), signer)
    retyped = Envelope("application/json", envelope.payload, envelope.signatures)
    assert retyped.signed_by_trusted(trusted) == []


def test_untrusted_signer_is_named(signer: Signer) -> None:
    other = signer_from_private_key(Ed25519PrivateKey.generate())
    check = check_envelope(sign_envelope(_statement_bytes(), other).to_bytes(), TrustedSigners(), "t")
    assert [f.code for f in check.failures] == ["signature.untrusted"]
    assert other.keyid in check.failures[0].message


def test_a_bad_signature_by_a_trusted_keyid_is_invalid(signer: Signer, trusted: TrustedSigners) -> None:
    envelope = sign_envelope(_statement_bytes(), signer)
    forged = Envelope(envelope.payload_type, envelope.payload, (Signature(signer.keyid, b"\0" * 64),))
    check = check_envelope(forged.to_bytes(), trusted, "t")
    assert [f.code for f in check.failures] == ["signature.invalid"]


def test_a_changed_payload_no_longer_verifies(signer: Signer, trusted: TrustedSigners) -> None:
    envelope = sign_envelope(_statement_bytes(), signer)
    swapped = Envelope(envelope.payload_type, _statement_bytes(sha256_hex(b"other")), envelope.signatures)
    assert swapped.signed_by_trusted(trusted) == []


@pytest.mark.parametrize(
    ("document", "fragment"),
    [
        (b"not json", "not JSON"),
        (b'{"payload":"","payloadType":"t","signatures":[],"extra":1}', "unknown field(s) extra"),
        (b'{"payload":"","payloadType":"t"}', "missing field(s) signatures"),
        (
            b'{"payload":"!!","payloadType":"t","signatures":[{"keyid":"k","sig":""}]}',
            "payload is not valid base64",
        ),
        (
            b'{"payload":"","payloadType":"t","signatures":[{"keyid":"k"}]}',
            "signatures[0]: missing field(s) sig",
        ),
        (b'{"payload":"","payload":"","payloadType":"t","signatures":[]}', "duplicate key 'payload'"),
        (b'{"payload":"","payloadType":"t","signatures":[]}', "signatures must be a non-empty list"),
    ],
)
def test_malformed_envelopes_are_refused_naming_the_field(document: bytes, fragment: str) -> None:
    with pytest.raises(EvidenceError) as caught:
        parse_envelope(document)
    assert fragment in str(caught.value)


def test_statement_round_trip() -> None:
    statement = parse_statement(_statement_bytes())
    assert statement.to_json()["_type"] == STATEMENT_TYPE
    assert statement.subjects[0].name == "render:web/prod"


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda s: s.update({"_type": "https://in-toto.io/Statement/v0.1"}), "_type must be"),
        (lambda s: s.update({"subject": []}), "subject must be a non-empty list"),
        (lambda s: s["subject"][0]["digest"].update({"sha256": "A" * 64}), "lowercase hex"),
        (lambda s: s["subject"][0]["digest"].update({"sha512": "a" * 128}), "unknown field"),
        (lambda s: s.update({"extra": 1}), "unknown field"),
        (lambda s: s.update({"predicate": []}), "predicate must be a JSON object"),
    ],
)
def test_malformed_statements_are_refused(mutate, fragment: str) -> None:  # type: ignore[no-untyped-def]
    document = json.loads(_statement_bytes())
    mutate(document)
    with pytest.raises(EvidenceError, match=fragment) as caught:
        parse_statement(json.dumps(document).encode())
    assert caught.value.code == "statement.malformed"


def test_build_statement_refuses_a_bad_subject_digest() -> None:
    with pytest.raises(ValueError, match="render:x"):
        build_statement([Subject("render:x", "sha256:abc")], "t", {})
