"""evidence_records keeps the indexes a query reads: a row is written per rendered output.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-05

Hand-written: never import farm.store.models here; spell every table, column and index name.

No statement looks evidence records up by ``action_key`` (the cache's look-ups reach a record by
its id, from ``action_cache.evidence_id``, and compare the key there) or by ``signer_keyid`` (no
signer row is ever deleted, so its foreign key is never checked from that side), so both indexes
go. The action key's index cost a random position in a table that holds every output's record:
about a sixth of the pages a job's commit writes to SQLite's log (docs/performance.md).
"""

from __future__ import annotations

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_evidence_records_action_key", table_name="evidence_records")
    op.drop_index("ix_evidence_records_signer_keyid", table_name="evidence_records")


def downgrade() -> None:
    op.create_index("ix_evidence_records_signer_keyid", "evidence_records", ["signer_keyid"])
    op.create_index("ix_evidence_records_action_key", "evidence_records", ["action_key"])
