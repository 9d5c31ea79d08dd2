"""Render requests packed per application: a target row names the pack holding its request.

Revision ID: 0008_request_packs
Revises: 0007
Create Date: 2026-12-03

Hand-written: never import farm.store.models here; spell every table, column and index name.

A snapshot stores the descriptors of an application's targets in one blob (a request pack) instead
of one blob per target; ``render_targets.request_pack`` names that blob. Rows written before stay
NULL there: their request is a blob of its own, named by ``request_digest``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_request_packs"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("render_targets", sa.Column("request_pack", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("render_targets", "request_pack")
