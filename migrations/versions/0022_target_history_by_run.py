"""render_targets drops its (application, cluster_profile) index: a target's history is read run by run.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06

Hand-written: never import farm.store.models here; spell every table, column and index name.

Every run writes a row per target, and this index put each row at the position of its target among
every earlier run's rows: a random page of an index that grows with the history, written to
SQLite's log by every run, a no-change re-run included (about a tenth of a no-change run's insert
and commit at 100,000 targets, docs/performance.md). The three readers of a target across runs
(its history, its latest output, its previous run) now walk the runs and probe the unique
``(run_id, application, cluster_profile, selection)`` index of each.
"""

from __future__ import annotations

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_render_targets_application_cluster_profile", table_name="render_targets")


def downgrade() -> None:
    op.create_index(
        "ix_render_targets_application_cluster_profile", "render_targets", ["application", "cluster_profile"]
    )
