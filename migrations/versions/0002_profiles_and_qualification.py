"""Configuration profiles and qualification state (profiles-evidence.md section 3).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02

Hand-written: never import farm.store.models here; spell every table, column and constraint name.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

DIGEST = sa.String(64)


def upgrade() -> None:
    op.create_table(
        "profile_declarations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("cluster_profile_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(63), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("default_value", sa.String(63), nullable=False),
        sa.Column("owned_paths_json", sa.Text(), nullable=False),
        sa.Column("surface_digest", DIGEST, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_profile_declarations"),
        sa.ForeignKeyConstraint(
            ["cluster_profile_id"],
            ["cluster_profiles.id"],
            name="fk_profile_declarations_cluster_profile_id_cluster_profiles",
        ),
        sa.UniqueConstraint("cluster_profile_id", name="uq_profile_declarations_cluster_profile_id"),
    )
    op.create_table(
        "profile_values",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("declaration_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(63), nullable=False),
        sa.Column("name_lower", sa.String(63), nullable=False),
        sa.Column("fragment_json", sa.Text(), nullable=False),
        sa.Column("fragment_digest", DIGEST, nullable=False),
        sa.Column("resolved_digest", DIGEST, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_profile_values"),
        sa.ForeignKeyConstraint(
            ["declaration_id"],
            ["profile_declarations.id"],
            name="fk_profile_values_declaration_id_profile_declarations",
        ),
        sa.UniqueConstraint(
            "declaration_id", "name_lower", name="uq_profile_values_declaration_id_name_lower"
        ),
    )
    op.create_index("ix_profile_values_declaration_id", "profile_values", ["declaration_id"])
    op.create_table(
        "qualification_states",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("snapshot_digest", DIGEST, nullable=False),
        sa.Column("cluster_profile", sa.String(253), nullable=False),
        sa.Column("profile_name", sa.String(63), nullable=False),
        sa.Column("value", sa.String(63), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("reasons_json", sa.Text(), nullable=False),
        sa.Column("current_evidence_id", sa.Integer(), nullable=True),
        sa.Column("last_passing_evidence_id", sa.Integer(), nullable=True),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_qualification_states"),
        sa.ForeignKeyConstraint(
            ["snapshot_digest"],
            ["catalog_snapshots.digest"],
            name="fk_qualification_states_snapshot_digest_catalog_snapshots",
        ),
        sa.ForeignKeyConstraint(
            ["current_evidence_id"], ["evidence_records.id"], name="fk_qualification_states_current_evidence"
        ),
        sa.ForeignKeyConstraint(
            ["last_passing_evidence_id"],
            ["evidence_records.id"],
            name="fk_qualification_states_last_passing_evidence",
        ),
        sa.UniqueConstraint(
            "snapshot_digest",
            "cluster_profile",
            "profile_name",
            "value",
            name="uq_qualification_states_subject",
        ),
    )
    op.create_index("ix_qualification_states_snapshot_digest", "qualification_states", ["snapshot_digest"])


def downgrade() -> None:
    op.drop_table("qualification_states")
    op.drop_table("profile_values")
    op.drop_table("profile_declarations")
