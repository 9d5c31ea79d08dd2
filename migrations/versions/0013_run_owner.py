"""A run records the process that owns it, so a run whose owner died is found and finished.

Revision ID: 0013
Revises: 0011
Create Date: 2026-12-05

Hand-written: never import farm.store.models here; spell every table, column and index name.

``owner`` is ``HOST/BOOT/PID/START`` of the process executing a run on a blocking executor (the
local pool, the daemon, a worker's inline qualification); NULL for a run whose jobs are sent to
Celery (the reconciler finds those) and for rows written before this revision.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("fleet_runs") as batch:
        batch.add_column(sa.Column("owner", sa.String(255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("fleet_runs") as batch:
        batch.drop_column("owner")
