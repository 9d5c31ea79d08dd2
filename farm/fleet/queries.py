"""Reads of recorded runs for the CLI: the newest runs, the latest output of a target and its evidence."""

from __future__ import annotations

from dataclasses import dataclass

from farm.store import models
from farm.store.context import Storage
from farm.store.db import read_scope
from farm.store.runs import latest_output_digest, newest_runs


def latest_output(storage: Storage, application: str, cluster: str) -> bytes:
    with read_scope(storage.sessions) as session:
        digest = latest_output_digest(session, application, cluster)
    if digest is None:
        raise LookupError(f"no output for target {application}/{cluster}")
    return storage.objects.get(digest)


def recent_runs(storage: Storage, limit: int = 20) -> list[models.FleetRun]:
    """The newest runs; a running run whose owner is gone reads ``interrupted`` (the row, detached,
    is never written back)."""
    from farm.fleet.recovery import shown_state

    with read_scope(storage.sessions) as session:
        runs = newest_runs(session, limit)
    for run in runs:
        run.state = shown_state(run)
    return runs


@dataclass(frozen=True)
class TargetEvidence:
    """What ``farm export-evidence`` hands a user: the output, its envelope, the signers' keys,
    and which subject of the envelope's statement is this output (a batch statement names every
    output of its job; a statement written before batches has this output as its only subject)."""

    output_digest: str
    manifests: bytes
    envelope: bytes
    public_keys: dict[str, str]  # key id → PEM, for every key that signed the envelope
    subject_index: int = 0
    subject_name: str = ""


def target_evidence(storage: Storage, application: str, cluster: str) -> TargetEvidence:
    """The latest output of (application, cluster) with a verified envelope whose statement names
    that target; LookupError naming what is missing or does not verify."""
    # the evidence stack (cryptography) only for this command: `farm run` imports this module
    from farm.evidence.dsse import parse_envelope
    from farm.evidence.keys import load_configured_trust, public_key_pem
    from farm.store.audit import check_output
    from farm.store.outputs import evidence_envelope

    trusted = load_configured_trust(storage.settings)
    with read_scope(storage.sessions) as session:
        digest = latest_output_digest(session, application, cluster)
        if digest is None:
            raise LookupError(f"no output for target {application}/{cluster} (farm run renders it)")
        found = check_output(session, storage.objects, trusted, digest)
        envelopes = [
            (evidence_envelope(storage.objects, record), record.subject_index or 0, record.subject_name)
            for record, provenance in found.records
            if provenance is not None
            and (provenance.application, provenance.cluster_profile) == (application, cluster)
        ]
    if found.failures or not envelopes:
        raise LookupError(
            f"output {digest} of {application}/{cluster} does not verify; farm verify --output {digest} says why"
        )
    envelope, index, name = envelopes[-1]
    keyids = [signature.keyid for signature in parse_envelope(envelope).signatures]
    keys = {keyid: public_key_pem(trusted[keyid]) for keyid in keyids if keyid in trusted}
    return TargetEvidence(digest, storage.objects.get(digest), envelope, keys, index, name)
