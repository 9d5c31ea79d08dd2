"""render_targets indexes its output digest only on rows that rendered it.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06

Hand-written: never import farm.store.models here; spell every table, column and index name.

``farm verify`` finds the target rows that name an output through this index. A cache hit names
an output too, and a no-change re-run writes nothing but cache hits: every one of its rows put an
entry at a random page of an index that grows with the history (about a fifth of a 2,000-target
no-change run through the daemon, docs/performance.md). Only the rows that rendered (``succeeded``)
are indexed now; a cache hit is bound by ``farm verify`` when it walks a run's rows or every row
(``--run``, ``--all``), against the rendered row or the signed statement it must match.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

_RENDERED = sa.text("state = 'succeeded'")


def upgrade() -> None:
    op.drop_index("ix_render_targets_output_digest", table_name="render_targets")
    op.create_index(
        "ix_render_targets_rendered_output",
        "render_targets",
        ["output_digest"],
        sqlite_where=_RENDERED,
        postgresql_where=_RENDERED,
    )


def downgrade() -> None:
    op.drop_index("ix_render_targets_rendered_output", table_name="render_targets")
    op.create_index("ix_render_targets_output_digest", "render_targets", ["output_digest"])
