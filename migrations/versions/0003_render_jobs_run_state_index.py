"""Index render_jobs on (run_id, state): run completion is an index probe after every job.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-09

Hand-written: never import farm.store.models here; spell every table, column and index name.
The composite index replaces ``ix_render_jobs_run_id``, whose column is its leading column.
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_render_jobs_run_id_state", "render_jobs", ["run_id", "state"])
    op.drop_index("ix_render_jobs_run_id", table_name="render_jobs")


def downgrade() -> None:
    op.create_index("ix_render_jobs_run_id", "render_jobs", ["run_id"])
    op.drop_index("ix_render_jobs_run_id_state", table_name="render_jobs")
