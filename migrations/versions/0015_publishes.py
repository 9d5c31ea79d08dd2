"""Publishes: a run's outputs delivered to a git repository or an OCI registry (``farm publish``).

Revision ID: 0015
Revises: 0011
Create Date: 2026-12-05

Hand-written: never import farm.store.models here; spell every table, column and index name.

A publish is recorded ``pending`` before its first attempt, ``failed`` (with the error and the
time of its next attempt) when its push failed, and ``done`` with the digest of its signed record
(a DSSE envelope, a blob written first) when it was delivered. ``claimed_until`` is the lease of
the one process attempting it (a conditional UPDATE claims it).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "publishes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("destination", sa.String(1024), nullable=False),
        sa.Column("options", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("reference", sa.Text, nullable=True),
        sa.Column("envelope_digest", sa.String(64), nullable=True),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("state IN ('pending', 'failed', 'done')", name="ck_publishes_state"),
        sa.ForeignKeyConstraint(["run_id"], ["fleet_runs.id"], name="fk_publishes_run_id_fleet_runs"),
    )
    op.create_index("ix_publishes_run_id", "publishes", ["run_id"])
    op.create_index("ix_publishes_state", "publishes", ["state"])


def downgrade() -> None:
    op.drop_index("ix_publishes_state", table_name="publishes")
    op.drop_index("ix_publishes_run_id", table_name="publishes")
    op.drop_table("publishes")
