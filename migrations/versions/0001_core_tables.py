"""Core tables: catalog snapshots, applications, ClusterProfiles, runs, jobs, outputs, evidence, signers.

Revision ID: 0001
Revises:
Create Date: 2026-12-02

Hand-written: never import farm.store.models here; spell every table, column and constraint name.
``evidence_records`` is append-only: a trigger refuses UPDATE and DELETE on both databases.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

DIGEST = sa.String(64)
TIMESTAMP = sa.DateTime(timezone=True)
JOB_STATES = ("planned", "queued", "running", "succeeded", "failed", "cached")
RUN_STATES = ("pending", "running", "completed", "completed_with_failures", "aborted")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def upgrade() -> None:
    _create_catalog_tables()
    _create_run_tables()
    _create_evidence_tables()
    _create_append_only_guard()


def _create_catalog_tables() -> None:
    op.create_table(
        "catalog_snapshots",
        sa.Column("digest", DIGEST, nullable=False),
        sa.Column("parent_digest", DIGEST, nullable=True),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("source_commit", sa.String(64), nullable=True),
        sa.Column("blob_digest", DIGEST, nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("digest", name="pk_catalog_snapshots"),
        sa.ForeignKeyConstraint(
            ["parent_digest"],
            ["catalog_snapshots.digest"],
            name="fk_catalog_snapshots_parent_digest_catalog_snapshots",
        ),
    )
    op.create_table(
        "applications",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("snapshot_digest", DIGEST, nullable=False),
        sa.Column("name", sa.String(253), nullable=False),
        sa.Column("digest", DIGEST, nullable=False),
        sa.Column("values_digest", DIGEST, nullable=True),
        sa.Column("blob_digest", DIGEST, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_applications"),
        sa.ForeignKeyConstraint(
            ["snapshot_digest"],
            ["catalog_snapshots.digest"],
            name="fk_applications_snapshot_digest_catalog_snapshots",
        ),
        sa.UniqueConstraint("snapshot_digest", "name", name="uq_applications_snapshot_digest_name"),
    )
    op.create_index("ix_applications_snapshot_digest", "applications", ["snapshot_digest"])
    op.create_table(
        "cluster_profiles",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("snapshot_digest", DIGEST, nullable=False),
        sa.Column("name", sa.String(253), nullable=False),
        sa.Column("digest", DIGEST, nullable=False),
        sa.Column("blob_digest", DIGEST, nullable=True),
        sa.Column("valid", sa.Boolean(), nullable=False),
        sa.Column("error_code", sa.String(128), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_cluster_profiles"),
        sa.ForeignKeyConstraint(
            ["snapshot_digest"],
            ["catalog_snapshots.digest"],
            name="fk_cluster_profiles_snapshot_digest_catalog_snapshots",
        ),
        sa.UniqueConstraint("snapshot_digest", "name", name="uq_cluster_profiles_snapshot_digest_name"),
    )
    op.create_index("ix_cluster_profiles_snapshot_digest", "cluster_profiles", ["snapshot_digest"])


def _create_run_tables() -> None:
    op.create_table(
        "fleet_runs",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("snapshot_digest", DIGEST, nullable=False),
        sa.Column("trigger", sa.String(32), nullable=False),
        sa.Column("core_version", sa.String(64), nullable=False),
        sa.Column("selection_policy", sa.String(32), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("started_at", TIMESTAMP, nullable=True),
        sa.Column("finished_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_fleet_runs"),
        sa.ForeignKeyConstraint(
            ["snapshot_digest"],
            ["catalog_snapshots.digest"],
            name="fk_fleet_runs_snapshot_digest_catalog_snapshots",
        ),
        sa.CheckConstraint(_in("state", RUN_STATES), name="ck_fleet_runs_state"),
    )
    op.create_index("ix_fleet_runs_snapshot_digest", "fleet_runs", ["snapshot_digest"])
    op.create_table(
        "render_outputs",
        sa.Column("digest", DIGEST, nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("digest", name="pk_render_outputs"),
    )
    op.create_table(
        "render_jobs",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("run_id", sa.String(32), nullable=False),
        sa.Column("application", sa.String(253), nullable=False),
        sa.Column("cluster_profile", sa.String(253), nullable=False),
        sa.Column("selection", sa.String(253), nullable=False),
        sa.Column("action_key", DIGEST, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error_code", sa.String(128), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("claimed_by", sa.String(253), nullable=True),
        sa.Column("output_digest", DIGEST, nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("queued_at", TIMESTAMP, nullable=True),
        sa.Column("started_at", TIMESTAMP, nullable=True),
        sa.Column("finished_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_render_jobs"),
        sa.ForeignKeyConstraint(["run_id"], ["fleet_runs.id"], name="fk_render_jobs_run_id_fleet_runs"),
        sa.ForeignKeyConstraint(
            ["output_digest"], ["render_outputs.digest"], name="fk_render_jobs_output_digest_render_outputs"
        ),
        sa.UniqueConstraint(
            "run_id",
            "application",
            "cluster_profile",
            "selection",
            name="uq_render_jobs_run_id_application_cluster_profile_selection",
        ),
        sa.CheckConstraint(_in("state", JOB_STATES), name="ck_render_jobs_state"),
    )
    op.create_index("ix_render_jobs_run_id", "render_jobs", ["run_id"])
    op.create_index("ix_render_jobs_action_key", "render_jobs", ["action_key"])
    op.create_index("ix_render_jobs_state", "render_jobs", ["state"])
    op.create_index("ix_render_jobs_output_digest", "render_jobs", ["output_digest"])


def _create_evidence_tables() -> None:
    op.create_table(
        "signers",
        sa.Column("keyid", DIGEST, nullable=False),
        sa.Column("public_key_pem", sa.Text(), nullable=False),
        sa.Column("trusted", sa.Boolean(), nullable=False),
        sa.Column("first_seen_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("keyid", name="pk_signers"),
    )
    op.create_table(
        "evidence_records",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("envelope_digest", DIGEST, nullable=False),
        sa.Column("statement_digest", DIGEST, nullable=False),
        sa.Column("subject_name", sa.Text(), nullable=False),
        sa.Column("subject_digest", DIGEST, nullable=False),
        sa.Column("predicate_type", sa.String(255), nullable=False),
        sa.Column("signer_keyid", DIGEST, nullable=False),
        sa.Column("action_key", DIGEST, nullable=True),
        sa.Column("job_id", sa.String(32), nullable=True),
        sa.Column("cluster_profile", sa.String(253), nullable=True),
        sa.Column("selection", sa.String(253), nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_evidence_records"),
        sa.ForeignKeyConstraint(
            ["signer_keyid"], ["signers.keyid"], name="fk_evidence_records_signer_keyid_signers"
        ),
        sa.ForeignKeyConstraint(
            ["job_id"], ["render_jobs.id"], name="fk_evidence_records_job_id_render_jobs"
        ),
        sa.UniqueConstraint("envelope_digest", name="uq_evidence_records_envelope_digest"),
    )
    op.create_index("ix_evidence_records_subject_digest", "evidence_records", ["subject_digest"])
    op.create_index("ix_evidence_records_signer_keyid", "evidence_records", ["signer_keyid"])
    op.create_index("ix_evidence_records_action_key", "evidence_records", ["action_key"])
    op.create_table(
        "action_cache",
        sa.Column("action_key", DIGEST, nullable=False),
        sa.Column("output_digest", DIGEST, nullable=False),
        sa.Column("evidence_id", sa.Integer(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("action_key", name="pk_action_cache"),
        sa.ForeignKeyConstraint(
            ["output_digest"], ["render_outputs.digest"], name="fk_action_cache_output_digest_render_outputs"
        ),
        sa.ForeignKeyConstraint(
            ["evidence_id"], ["evidence_records.id"], name="fk_action_cache_evidence_id_evidence_records"
        ),
    )
    op.create_index("ix_action_cache_output_digest", "action_cache", ["output_digest"])


def _create_append_only_guard() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION farm_refuse_evidence_change() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION 'evidence_records is append-only: % refused', TG_OP; END $$"
        )
        op.execute(
            "CREATE TRIGGER evidence_records_append_only BEFORE UPDATE OR DELETE ON evidence_records "
            "FOR EACH ROW EXECUTE FUNCTION farm_refuse_evidence_change()"
        )
        return
    for operation in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER evidence_records_append_only_{operation.lower()} BEFORE {operation} "
            "ON evidence_records BEGIN "
            f"SELECT RAISE(ABORT, 'evidence_records is append-only: {operation} refused'); END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS evidence_records_append_only ON evidence_records")
        op.execute("DROP FUNCTION IF EXISTS farm_refuse_evidence_change()")
    else:
        op.execute("DROP TRIGGER IF EXISTS evidence_records_append_only_update")
        op.execute("DROP TRIGGER IF EXISTS evidence_records_append_only_delete")
    for table in (
        "action_cache",
        "evidence_records",
        "signers",
        "render_jobs",
        "render_outputs",
        "fleet_runs",
        "cluster_profiles",
        "applications",
        "catalog_snapshots",
    ):
        op.drop_table(table)
