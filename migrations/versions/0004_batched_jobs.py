"""Per-application batched jobs: per-target results move to ``render_targets``.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03

Hand-written: never import farm.store.models here; spell every table, column and index name.

A job used to be one target. Now a job is one application and a batch of its targets, and each
target keeps its own result row. The old ``render_jobs`` table *is* that result row, so it is
renamed to ``render_targets`` (its rows, and the evidence records pointing at them, stay valid);
its constraints keep their names, its indexes are re-created under the new table's name (index
names are global on both databases). A new ``render_jobs`` table holds the batches, and
``failed_actions`` caches deterministic render failures by action key.

Targets of runs recorded before this revision have no job (``job_id`` is NULL): they are history.
Downgrading drops the batches and the failure cache and renames the table back.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

DIGEST = sa.String(64)
TIMESTAMP = sa.DateTime(timezone=True)
JOB_STATES = ("planned", "queued", "running", "succeeded", "failed", "cached")
OLD_INDEXES = {
    "ix_render_jobs_action_key": ["action_key"],
    "ix_render_jobs_state": ["state"],
    "ix_render_jobs_output_digest": ["output_digest"],
    "ix_render_jobs_run_id_state": ["run_id", "state"],
}
NEW_INDEXES = {
    "ix_render_targets_action_key": ["action_key"],
    "ix_render_targets_output_digest": ["output_digest"],
    "ix_render_targets_run_id_state": ["run_id", "state"],
    "ix_render_targets_application_cluster_profile": ["application", "cluster_profile"],
    "ix_render_targets_error_code": ["error_code"],
    "ix_render_targets_job_id": ["job_id"],
}


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


def _is_postgresql() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def upgrade() -> None:
    for name in OLD_INDEXES:
        op.drop_index(name, table_name="render_jobs")
    op.rename_table("render_jobs", "render_targets")
    if _is_postgresql():  # the primary key's index name is global: free it for the new table
        op.execute("ALTER TABLE render_targets RENAME CONSTRAINT pk_render_jobs TO pk_render_targets")
    for column in ("claimed_by", "attempts", "queued_at", "started_at"):  # a job's, not a target's
        op.drop_column("render_targets", column)
    op.add_column("render_targets", sa.Column("job_id", sa.String(32), nullable=True))
    op.add_column("render_targets", sa.Column("request_digest", DIGEST, nullable=True))
    op.execute("ALTER TABLE evidence_records RENAME COLUMN job_id TO target_id")
    for name, columns in NEW_INDEXES.items():
        op.create_index(name, "render_targets", columns)
    op.create_table(
        "render_jobs",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("run_id", sa.String(32), nullable=False),
        sa.Column("application", sa.String(253), nullable=False),
        sa.Column("batch_key", DIGEST, nullable=False),
        sa.Column("target_count", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("claimed_by", sa.String(253), nullable=True),
        sa.Column("error_code", sa.String(128), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("queued_at", TIMESTAMP, nullable=True),
        sa.Column("started_at", TIMESTAMP, nullable=True),
        sa.Column("finished_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_render_jobs"),
        sa.ForeignKeyConstraint(["run_id"], ["fleet_runs.id"], name="fk_render_jobs_run_id_fleet_runs"),
        sa.CheckConstraint(_in("state", JOB_STATES), name="ck_render_jobs_state"),
    )
    op.create_index("ix_render_jobs_run_id_state", "render_jobs", ["run_id", "state"])
    op.create_table(
        "failed_actions",
        sa.Column("action_key", DIGEST, nullable=False),
        sa.Column("error_code", sa.String(128), nullable=False),
        sa.Column("error_message", sa.Text(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("action_key", name="pk_failed_actions"),
    )


def downgrade() -> None:
    op.drop_table("failed_actions")
    op.drop_index("ix_render_jobs_run_id_state", table_name="render_jobs")
    op.drop_table("render_jobs")
    for name in NEW_INDEXES:
        op.drop_index(name, table_name="render_targets")
    op.execute("ALTER TABLE evidence_records RENAME COLUMN target_id TO job_id")
    op.drop_column("render_targets", "request_digest")
    op.drop_column("render_targets", "job_id")
    op.add_column("render_targets", sa.Column("claimed_by", sa.String(253), nullable=True))
    op.add_column("render_targets", sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("render_targets", sa.Column("queued_at", TIMESTAMP, nullable=True))
    op.add_column("render_targets", sa.Column("started_at", TIMESTAMP, nullable=True))
    if _is_postgresql():
        op.execute("ALTER TABLE render_targets RENAME CONSTRAINT pk_render_targets TO pk_render_jobs")
    op.rename_table("render_targets", "render_jobs")
    for name, columns in OLD_INDEXES.items():
        op.create_index(name, "render_jobs", columns)
