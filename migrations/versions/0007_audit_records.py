"""Signed audit records of ``farm audit``.

Revision ID: 0007
Revises: 0005
Create Date: 2026-12-03

Hand-written: never import farm.store.models here; spell every table, column and index name.

An audit record is a DSSE envelope (a blob) over an in-toto statement recording which cached
targets of a run were re-rendered and what they gave; this row points at it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0005"
branch_labels = None
depends_on = None

DIGEST = sa.String(64)


def upgrade() -> None:
    op.create_table(
        "audit_records",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("envelope_digest", DIGEST, nullable=False),
        sa.Column("run_id", sa.String(32), nullable=False),
        sa.Column("signer_keyid", sa.String(64), nullable=False),
        sa.Column("seed", sa.Integer, nullable=True),
        sa.Column("audited", sa.Integer, nullable=False),
        sa.Column("nondeterministic", sa.Integer, nullable=False),
        sa.Column("drifted", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["fleet_runs.id"], name="fk_audit_records_run_id_fleet_runs"),
        sa.UniqueConstraint("envelope_digest", name="uq_audit_records_envelope_digest"),
    )
    op.create_index("ix_audit_records_run_id", "audit_records", ["run_id"])


def downgrade() -> None:
    op.drop_index("ix_audit_records_run_id", table_name="audit_records")
    op.drop_table("audit_records")
