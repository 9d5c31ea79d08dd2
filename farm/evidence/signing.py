"""Producing a signed output: the manifests, and a DSSE envelope over their provenance statement.

``farm/evidence`` signs; ``farm/store`` only persists what this returns. Signing touches no
database and no storage, so a worker signs a whole batch before it writes anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from farm.evidence.dsse import sign_envelope
from farm.evidence.keys import Signer
from farm.evidence.provenance import RenderProvenance, build_render_provenance
from farm.identity.canonical import sha256_hex


@dataclass(frozen=True)
class SignedOutput:
    """Manifests and the signed statement about them, ready to be stored."""

    manifests: bytes
    output_digest: str
    envelope: bytes
    envelope_digest: str
    statement_digest: str
    provenance: RenderProvenance  # what the signed statement says
    signer_keyid: str

    @property
    def action_key(self) -> str:
        return self.provenance.action_key


def sign_output(signer: Signer, manifests: bytes, provenance: RenderProvenance) -> SignedOutput:
    """Sign the provenance of ``manifests`` (deterministic: the same inputs give the same bytes)."""
    output_digest = sha256_hex(manifests)
    statement = build_render_provenance(output_digest, provenance).to_bytes()
    envelope = sign_envelope(statement, signer).to_bytes()
    return SignedOutput(
        manifests,
        output_digest,
        envelope,
        sha256_hex(envelope),
        sha256_hex(statement),
        provenance,
        signer.keyid,
    )
