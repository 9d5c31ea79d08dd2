"""A qualification transition records the catalog snapshot it was derived against.

Revision ID: 0017
Revises: 0011
Create Date: 2026-12-05

Hand-written: never import farm.store.models here; spell every table, column and index name.

With it the timeline of a subject that went stale names the documents and keys that drifted: the
snapshot of the evidence's run against the snapshot of the transition. Older rows keep NULL there
and say only that the subject went stale.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("qualification_events") as batch:
        batch.add_column(sa.Column("snapshot_digest", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("qualification_events") as batch:
        batch.drop_column("snapshot_digest")
