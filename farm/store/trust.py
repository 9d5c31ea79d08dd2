"""What the keys' fail-closed rule needs from the store: does this home hold signed evidence?

A signing key is generated only for a home that holds none (``farm.evidence.keys``); the files
beside the key tell most of it (trusted signers, the trust record), and the database tells the
rest when those files are gone too.
"""

from __future__ import annotations

from sqlalchemy import select

from farm.evidence.keys import Signer, load_configured_signer
from farm.store.context import Storage
from farm.store.db import read_scope
from farm.store.models import AuditRecord, EvidenceRecord, QualificationEvidence
from farm.store.models import Signer as SignerRow


def holds_evidence(storage: Storage) -> bool:
    """True when any signed row (a render, audit or qualification record, or a known signer) exists."""
    with read_scope(storage.sessions) as session:
        return any(
            session.scalar(select(column).limit(1)) is not None
            for column in (
                EvidenceRecord.id,
                AuditRecord.id,
                QualificationEvidence.id,
                SignerRow.keyid,
            )
        )


def signer_for_run(storage: Storage) -> Signer:
    """The configured signing key for a run, checked before the run records anything: generated
    only for a home with no evidence, refused unless the trusted signers hold it."""
    return load_configured_signer(storage.settings, holds_evidence=lambda: holds_evidence(storage))
