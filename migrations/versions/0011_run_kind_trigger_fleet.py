"""Runs record their kind, their trigger and their fleet.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05

Hand-written: never import farm.store.models here; spell every table, column and index name.

``kind`` is ``fleet``, ``qualification`` or ``audit``; ``trigger`` is ``cli``, ``api`` or
``schedule`` (rows written before this revision said ``manual`` or ``qualification`` there: a
``qualification`` trigger becomes the kind ``qualification``, and both become ``cli``). ``fleet``
is the catalog's fleet name; older rows keep NULL there, and the lookup of a fleet's latest run
reads their snapshot's name instead.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("fleet_runs") as batch:
        batch.add_column(sa.Column("kind", sa.String(16), nullable=False, server_default="fleet"))
        batch.add_column(sa.Column("fleet", sa.String(255), nullable=True))
    runs = sa.table("fleet_runs", sa.column("kind"), sa.column("trigger"))
    op.execute(runs.update().where(runs.c.trigger == "qualification").values(kind="qualification"))
    op.execute(runs.update().where(runs.c.trigger.in_(("manual", "qualification"))).values(trigger="cli"))
    op.create_index("ix_fleet_runs_fleet_kind_created_at", "fleet_runs", ["fleet", "kind", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_fleet_runs_fleet_kind_created_at", table_name="fleet_runs")
    runs = sa.table("fleet_runs", sa.column("kind"), sa.column("trigger"))
    op.execute(runs.update().where(runs.c.kind == "qualification").values(trigger="qualification"))
    op.execute(runs.update().where(runs.c.trigger == "cli").values(trigger="manual"))
    with op.batch_alter_table("fleet_runs") as batch:
        batch.drop_column("fleet")
        batch.drop_column("kind")
