"""Qualification: subjects with their derived state, evidence, runs and the append-only event log.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03

Hand-written: never import farm.store.models here; spell every table, column and index name.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

DIGEST = sa.String(64)
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "qualification_subjects",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cluster_profile", sa.String(253), nullable=False),
        sa.Column("selection", sa.String(127), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("reason", sa.String(64), nullable=False),
        sa.Column("since", WHEN, nullable=False),
        sa.Column("current_evidence_id", sa.Integer, nullable=True),
        sa.Column("claimed_until", WHEN, nullable=True),
        sa.UniqueConstraint("cluster_profile", "selection", name="uq_qualification_subjects"),
    )
    op.create_table(
        "qualification_evidence",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("subject_id", sa.Integer, sa.ForeignKey("qualification_subjects.id"), nullable=False),
        sa.Column("subject_digest", DIGEST, nullable=False),
        sa.Column("descriptor_identity", DIGEST, nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("envelope_digest", DIGEST, nullable=False),
        sa.Column("signer_keyid", sa.String(128), nullable=False),
        sa.Column("core_version", sa.String(64), nullable=False),
        sa.Column("owned_paths_digest", sa.String(64), nullable=False),
        sa.Column("attested_at", WHEN, nullable=False),
    )
    op.create_index("ix_qualification_evidence_subject_id", "qualification_evidence", ["subject_id"])
    op.create_table(
        "qualification_runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("subject_id", sa.Integer, sa.ForeignKey("qualification_subjects.id"), nullable=False),
        sa.Column("subject_digest", DIGEST, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
    )
    op.create_index("ix_qualification_runs_subject_id", "qualification_runs", ["subject_id"])
    op.create_table(
        "qualification_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("subject_id", sa.Integer, sa.ForeignKey("qualification_subjects.id"), nullable=False),
        sa.Column("from_state", sa.String(32), nullable=False),
        sa.Column("to_state", sa.String(32), nullable=False),
        sa.Column("reason", sa.String(64), nullable=False),
        sa.Column("cause", sa.String(64), nullable=False),
        sa.Column("at", WHEN, nullable=False),
    )
    op.create_index("ix_qualification_events_subject_id", "qualification_events", ["subject_id"])


def downgrade() -> None:
    op.drop_index("ix_qualification_events_subject_id", table_name="qualification_events")
    op.drop_table("qualification_events")
    op.drop_index("ix_qualification_runs_subject_id", table_name="qualification_runs")
    op.drop_table("qualification_runs")
    op.drop_index("ix_qualification_evidence_subject_id", table_name="qualification_evidence")
    op.drop_table("qualification_evidence")
    op.drop_table("qualification_subjects")
