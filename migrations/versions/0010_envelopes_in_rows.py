"""Render evidence holds its DSSE envelope in its row.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04

Hand-written: never import farm.store.models here; spell every table, column and index name.

A render's envelope (1 to 2 KiB) is written in the same transaction as the evidence record that
names it, instead of as a blob of its own: one file (or one object-store PUT) less per rendered
target, and no envelope without its row or row without its envelope. Rows written before this
revision have no ``envelope`` and keep theirs in object storage under ``envelope_digest``.

A plain ``ADD COLUMN`` (not a batch copy of the table), so SQLite keeps the append-only triggers.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from alembic.util import CommandError

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("evidence_records", sa.Column("envelope", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    # rows written since hold their only copy of the envelope: refuse rather than lose evidence
    bind = op.get_bind()
    held = bind.execute(sa.text("SELECT COUNT(*) FROM evidence_records WHERE envelope IS NOT NULL")).scalar()
    if held:
        raise CommandError(
            f"{held} evidence records hold their envelope in the row (revision 0010): downgrading below "
            "0010 would lose that evidence; the database stays at 0010"
        )
    op.drop_column("evidence_records", "envelope")
