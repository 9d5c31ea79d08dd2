"""The state checks compare with each state in turn instead of an ``IN`` list.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-07

Hand-written: never import farm.store.models here; spell every table, column and value.

SQLite evaluates ``state IN ('planned', …)`` by building the list as a temporary index, anew for
each row an INSERT or UPDATE writes: about 2 µs a row, over a quarter of the insert of a
no-change run's 100,000 target rows (0.91 s with it, 0.65 s with comparisons joined by OR, which cost
nothing measurable; docs/performance.md). The two spellings accept the same rows.

SQLite keeps a CHECK in its ``CREATE TABLE`` text, which the upgrade edits in place as revision
0025 does (every row already satisfies the new check: it is the same condition). An SQLite in
defensive mode refuses the edit: there the lists stay, and the upgrade says so on stderr.
PostgreSQL evaluates either spelling alike; its checks are rewritten too, so that both databases
hold what the models declare.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NamedTuple

from alembic import op
from alembic.util import CommandError

from migrations.sqlite_schema import schema_editable, table_sql, write_schema

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

RUN_STATES = ("pending", "running", "completed", "completed_with_failures", "aborted")
JOB_STATES = ("planned", "queued", "running", "succeeded", "failed", "cached")
PUBLISH_STATES = ("pending", "failed", "done")


class Check(NamedTuple):
    table: str
    name: str  # render_targets was render_jobs (revision 0004): its check kept that name
    states: tuple[str, ...]

    @property
    def listed(self) -> str:
        return f"state IN ({', '.join(repr(state) for state in self.states)})"

    @property
    def compared(self) -> str:
        return " OR ".join(f"state = {state!r}" for state in self.states)


CHECKS = (
    Check("fleet_runs", "ck_fleet_runs_state", RUN_STATES),
    Check("render_jobs", "ck_render_jobs_state", JOB_STATES),
    Check("render_targets", "ck_render_jobs_state", JOB_STATES),
    Check("publishes", "ck_publishes_state", PUBLISH_STATES),
)


def upgrade() -> None:
    _rewrite(lambda check: (check.listed, check.compared), "0026")


def downgrade() -> None:
    _rewrite(lambda check: (check.compared, check.listed), "0027")


def _rewrite(change: Callable[[Check], tuple[str, str]], stays_at: str) -> None:
    """Each check's condition from ``change(check)[0]`` to ``change(check)[1]``."""
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        for check in CHECKS:
            op.drop_constraint(check.name, check.table, type_="check")
            op.create_check_constraint(check.name, check.table, change(check)[1])
        return
    if not schema_editable():
        sys.stderr.write(
            "farm: this SQLite refuses schema edits (defensive mode): the state checks keep their "
            "spelling (revision 0027)\n"
        )
        return
    edited = {}
    for check in CHECKS:
        sql = table_sql(check.table)
        old, new = (f"CONSTRAINT {check.name} CHECK ({condition})" for condition in change(check))
        if sql.count(old) != 1:
            if sql.count(new) == 1:  # already spelled so (an SQLite that was in defensive mode)
                continue
            raise CommandError(
                f"{check.table}: its CREATE TABLE does not hold {check.name} as the farm wrote it; "
                f"the database stays at {stays_at}"
            )
        edited[check.table] = sql.replace(old, new)
    if edited:
        write_schema(edited)
