"""render_targets' (run_id, state) index holds each row's error code too.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06

Hand-written: never import farm.store.models here; spell every table, column and index name.

A run's counts (``farm run``'s summary, the progress, the runs list), its failures and its
completion (does it have a failure?) tell a cached failure from a cache hit by its error code.
With the code outside the index each of those read every target row of the run: about 0.2 s of
a 100,000-target no-change run, on every progress poll of a full run too (docs/performance.md).
With it, each is read from the index alone, and a run's failures are a range of it.
"""

from __future__ import annotations

from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_render_targets_run_id_state", table_name="render_targets")
    op.create_index(
        "ix_render_targets_run_id_state_error", "render_targets", ["run_id", "state", "error_code"]
    )


def downgrade() -> None:
    op.drop_index("ix_render_targets_run_id_state_error", table_name="render_targets")
    op.create_index("ix_render_targets_run_id_state", "render_targets", ["run_id", "state"])
