"""DSSE envelopes (https://github.com/secure-systems-lab/dsse, protocol v1) signed with ed25519.

The signature covers the pre-authentication encoding
``PAE(type, body) = "DSSEv1" SP len(type) SP type SP len(body) SP body`` (lengths in ASCII
decimal bytes), never the base64 text. An envelope is stored as the canonical JSON of
``{"payload": b64, "payloadType": type, "signatures": [{"keyid": id, "sig": b64}]}`` so that the same
statement signed by the same key (ed25519 is deterministic) always gives the same blob digest.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from farm.evidence.errors import EvidenceError, require_exact_keys, strict_json_loads
from farm.evidence.keys import Signer, TrustedSigners
from farm.identity.canonical import canonical_json

IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: str, payload: bytes) -> bytes:
    """The DSSE v1 pre-authentication encoding of ``payload_type`` and ``payload``."""
    type_bytes = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(type_bytes), type_bytes, len(payload), payload)


@dataclass(frozen=True)
class Signature:
    keyid: str
    sig: bytes


@dataclass(frozen=True)
class Envelope:
    payload_type: str
    payload: bytes
    signatures: tuple[Signature, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "payload": _b64encode(self.payload),
            "payloadType": self.payload_type,
            "signatures": [{"keyid": s.keyid, "sig": _b64encode(s.sig)} for s in self.signatures],
        }

    def to_bytes(self) -> bytes:
        """``canonical_json(self.to_json())``, written out directly: the payload's base64 text (most
        of the envelope, a batch statement's 20 KB) needs none of JSON's escaping, so it is not
        scanned for it, nor copied between text and bytes."""
        signatures = b",".join(
            b'{"keyid":%b,"sig":"%b"}' % (_json_string(s.keyid), base64.b64encode(s.sig))
            for s in self.signatures
        )
        return b'{"payload":"%b","payloadType":%b,"signatures":[%b]}' % (
            base64.b64encode(self.payload),
            _json_string(self.payload_type),
            signatures,
        )

    def signed_by_trusted(self, trusted: TrustedSigners) -> list[str]:
        """Key ids of the trusted signers whose signature over this envelope verifies."""
        message = pae(self.payload_type, self.payload)
        return [s.keyid for s in self.signatures if trusted.verifies(s.keyid, message, s.sig)]


def sign_envelope(payload: bytes, signer: Signer, payload_type: str = IN_TOTO_PAYLOAD_TYPE) -> Envelope:
    """Wrap ``payload`` in an envelope signed by ``signer``."""
    signature = Signature(keyid=signer.keyid, sig=signer.sign(pae(payload_type, payload)))
    return Envelope(payload_type=payload_type, payload=payload, signatures=(signature,))


def parse_envelope(data: bytes) -> Envelope:
    """Decode envelope bytes strictly; raise ``EvidenceError('envelope.malformed', …)`` naming the field."""
    obj = require_exact_keys(
        strict_json_loads(data, "envelope.malformed", "envelope"),
        {"payload", "payloadType", "signatures"},
        "envelope.malformed",
        "envelope",
    )
    if not isinstance(obj["payloadType"], str) or not obj["payloadType"]:
        raise EvidenceError("envelope.malformed", "envelope: payloadType must be a non-empty string")
    payload = _b64decode(obj["payload"], "envelope: payload")
    raw_signatures = obj["signatures"]
    if not isinstance(raw_signatures, list) or not raw_signatures:
        raise EvidenceError("signature.missing", "envelope: signatures must be a non-empty list")
    signatures = tuple(_parse_signature(item, index) for index, item in enumerate(raw_signatures))
    return Envelope(payload_type=obj["payloadType"], payload=payload, signatures=signatures)


def _parse_signature(item: object, index: int) -> Signature:
    what = f"envelope: signatures[{index}]"
    obj = require_exact_keys(item, {"keyid", "sig"}, "envelope.malformed", what)
    if not isinstance(obj["keyid"], str):
        raise EvidenceError("envelope.malformed", f"{what}.keyid must be a string")
    return Signature(keyid=obj["keyid"], sig=_b64decode(obj["sig"], f"{what}.sig"))


def _json_string(text: str) -> bytes:
    """``text`` as canonical JSON writes it."""
    return canonical_json(text, checked=False, floatless=True)


def _b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _b64decode(text: object, what: str) -> bytes:
    if not isinstance(text, str):
        raise EvidenceError("envelope.malformed", f"{what} must be a base64 string")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise EvidenceError("envelope.malformed", f"{what} is not valid base64") from None
