"""Qualification runs name the fleet run that rendered their subject.

Revision ID: 0009
Revises: 0008_request_packs
Create Date: 2026-12-03

Hand-written: never import farm.store.models here; spell every table, column and index name.

A qualification run left ``running`` by a process that died is found by the finder: its fleet run
finished (or was never planned) long ago, so nobody will finish it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008_request_packs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("qualification_runs") as batch:
        batch.add_column(sa.Column("fleet_run_id", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("qualification_runs") as batch:
        batch.drop_column("fleet_run_id")
