"""Cached failures carry the signed statement that vouches for them.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05

Hand-written: never import farm.store.models here; spell every table, column and index name.

A row of ``failed_actions`` is served only with a DSSE envelope (``envelope``, whose sha256 is
``envelope_digest``) signed by a trusted key. Rows written before this revision have none and
would never be served again, so they are deleted: the failure cache is a cache, and the next run
renders those targets once and caches their failures signed.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("failed_actions") as batch:
        batch.add_column(sa.Column("envelope_digest", sa.String(64), nullable=True))
        batch.add_column(sa.Column("signer_keyid", sa.String(64), nullable=True))
        batch.add_column(sa.Column("envelope", sa.LargeBinary(), nullable=True))
    op.execute(sa.table("failed_actions", sa.column("envelope")).delete())


def downgrade() -> None:
    with op.batch_alter_table("failed_actions") as batch:
        batch.drop_column("envelope")
        batch.drop_column("signer_keyid")
        batch.drop_column("envelope_digest")
