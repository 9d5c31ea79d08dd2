"""Producing signed outputs: the manifests, and a DSSE envelope over the statement about them.

A job signs its batch once (``sign_batch``): one statement whose subjects are its outputs
(``farm.evidence.batch``), one signature. ``sign_output`` signs a statement about one output
alone, the form every output had before batch statements (its rows still verify).

``farm/evidence`` signs; ``farm/store`` only persists what this returns. Signing touches no
database and no storage, so a worker signs a whole batch before it writes anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from farm.evidence.batch import build_batch_provenance, subject_reference
from farm.evidence.dsse import sign_envelope
from farm.evidence.keys import Signer
from farm.evidence.provenance import RenderProvenance, build_render_provenance
from farm.identity.canonical import sha256_hex


@dataclass(frozen=True)
class SignedOutput:
    """Manifests and the signed statement about them, ready to be stored. The outputs of one
    batch share their envelope (the same bytes object); ``subject_index`` is this output's
    subject in it, None for a statement about this output alone."""

    manifests: bytes
    output_digest: str
    envelope: bytes
    envelope_digest: str
    statement_digest: str
    provenance: RenderProvenance  # what the signed statement says about this output
    signer_keyid: str
    subject_index: int | None = None

    @property
    def action_key(self) -> str:
        return self.provenance.action_key

    @cached_property
    def record_key(self) -> str:
        """The ``envelope_digest`` of this output's evidence record (unique per record)."""
        if self.subject_index is None:
            return self.envelope_digest
        return subject_reference(self.envelope_digest, self.subject_index)


@dataclass(frozen=True)
class Rendered:
    """An output to be signed with its batch."""

    manifests: bytes
    output_digest: str
    provenance: RenderProvenance


def rendered(manifests: bytes, provenance: RenderProvenance) -> Rendered:
    return Rendered(manifests, sha256_hex(manifests), provenance)


def sign_batch(signer: Signer, invocation_id: str, outputs: Sequence[Rendered]) -> list[SignedOutput]:
    """Sign one statement about every output of a batch (deterministic: the same batch gives the
    same bytes); one ``SignedOutput`` per output, in order. Nothing to sign gives nothing."""
    if not outputs:
        return []
    statement = build_batch_provenance(
        invocation_id, [(output.output_digest, output.provenance) for output in outputs]
    ).to_bytes()
    envelope = sign_envelope(statement, signer).to_bytes()
    envelope_digest, statement_digest = sha256_hex(envelope), sha256_hex(statement)
    return [
        SignedOutput(
            output.manifests,
            output.output_digest,
            envelope,
            envelope_digest,
            statement_digest,
            output.provenance,
            signer.keyid,
            index,
        )
        for index, output in enumerate(outputs)
    ]


def sign_output(signer: Signer, manifests: bytes, provenance: RenderProvenance) -> SignedOutput:
    """Sign a statement about ``manifests`` alone (deterministic: the same inputs give the same bytes)."""
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
