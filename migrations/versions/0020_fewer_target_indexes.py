"""render_targets keeps the indexes a query reads: a row is written per target per run.

Revision ID: 0020
Revises: 0018
Create Date: 2026-12-05

Hand-written: never import farm.store.models here; spell every table, column and index name.

No statement looks target rows up by ``action_key`` or by ``error_code`` alone (an error-code
filter is always within one run, found by ``run_id``), so those two indexes go; ``job_id`` is
indexed only where it is set (a cached target has no job: a no-change run's rows add no entry).
Each index costs an entry per target row, and the action key's is a random position in a table
that holds every run's rows.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0018"
branch_labels = None
depends_on = None

_SET = sa.text("job_id IS NOT NULL")


def upgrade() -> None:
    op.drop_index("ix_render_targets_action_key", table_name="render_targets")
    op.drop_index("ix_render_targets_error_code", table_name="render_targets")
    op.drop_index("ix_render_targets_job_id", table_name="render_targets")
    op.create_index(
        "ix_render_targets_job_id", "render_targets", ["job_id"], sqlite_where=_SET, postgresql_where=_SET
    )


def downgrade() -> None:
    op.drop_index("ix_render_targets_job_id", table_name="render_targets")
    op.create_index("ix_render_targets_job_id", "render_targets", ["job_id"])
    op.create_index("ix_render_targets_error_code", "render_targets", ["error_code"])
    op.create_index("ix_render_targets_action_key", "render_targets", ["action_key"])
