"""render_targets' run and output references are checked by the farm, not by a foreign key.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06

Hand-written: never import farm.store.models here; spell every table, column and index name.

A no-change run writes one target row per target, each a cache hit naming its run and its output.
On PostgreSQL each row's two foreign keys are checked by a trigger query per row: of the 2.0 s
a 20,000-target no-change run spent copying its rows, 1.7 s were those checks
(docs/performance.md). Neither key guards anything the farm does not already:

- a run's row is written in the transaction that writes its first targets, and ``farm gc`` deletes
  a run's row only once no target row names it (``farm.store.retention``);
- nothing deletes a ``render_outputs`` row, and a target names an output only after the row that
  records it is written, in the same transaction or an earlier one;
- ``farm verify`` fails every target row whose run or output is missing (``reference.dangling``).

The third makes a broken reference found rather than impossible, as ``job_id`` always was.

SQLite keeps a table's foreign keys in its ``CREATE TABLE`` text. Removing one changes nothing
on disk, so the text is edited in place, the way SQLite documents for removing a foreign key
(https://www.sqlite.org/lang_altertable.html, "making other kinds of table schema changes"):
a rebuild would copy every row, and could not run with the foreign keys on that the migration's
connection has (``evidence_records.target_id`` names this table).
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op
from alembic.util import CommandError

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

TABLE = "render_targets"
# name, column, referred table, referred column: as revision 0004 created them
FOREIGN_KEYS = (
    ("fk_render_jobs_run_id_fleet_runs", "run_id", "fleet_runs", "id"),
    ("fk_render_jobs_output_digest_render_outputs", "output_digest", "render_outputs", "digest"),
)
PRIMARY_KEY = "CONSTRAINT pk_render_jobs PRIMARY KEY (id), \n\t"


def _clause(name: str, column: str, referred: str, referred_column: str) -> str:
    """A foreign key as SQLAlchemy wrote it into SQLite's ``CREATE TABLE``."""
    return f"CONSTRAINT {name} FOREIGN KEY({column}) REFERENCES {referred} ({referred_column})"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for name, *_ in FOREIGN_KEYS:
            op.drop_constraint(name, TABLE, type_="foreignkey")
        return

    def without_keys(sql: str) -> str:
        for key in FOREIGN_KEYS:
            sql, removed = re.subn(rf"\s*{re.escape(_clause(*key))},", "", sql)
            if removed != 1:
                raise CommandError(
                    f"{TABLE}: its CREATE TABLE does not hold the foreign key {key[0]} as revision "
                    "0004 wrote it; the database stays at 0024"
                )
        return sql

    _edit_sqlite_table(without_keys)


def downgrade() -> None:
    bind = op.get_bind()
    broken = bind.execute(sa.text(_BROKEN_REFERENCES)).scalar_one()
    if broken:
        raise CommandError(
            f"{broken} {TABLE} rows name a run or an output that is missing (farm verify lists "
            "them): the foreign keys of revision 0004 cannot come back; the database stays at 0025"
        )
    if bind.dialect.name == "postgresql":
        for name, column, referred, referred_column in FOREIGN_KEYS:
            op.create_foreign_key(name, TABLE, referred, [column], [referred_column])
        return

    def with_keys(sql: str) -> str:
        if sql.count(PRIMARY_KEY) != 1:
            raise CommandError(f"{TABLE}: its CREATE TABLE has no primary key clause to follow")
        clauses = "".join(f"{_clause(*key)}, \n\t" for key in FOREIGN_KEYS)
        return sql.replace(PRIMARY_KEY, PRIMARY_KEY + clauses, 1)

    _edit_sqlite_table(with_keys)


_BROKEN_REFERENCES = (
    "SELECT COUNT(*) FROM render_targets AS target "
    "WHERE NOT EXISTS (SELECT 1 FROM fleet_runs WHERE fleet_runs.id = target.run_id) "
    "OR (target.output_digest IS NOT NULL AND NOT EXISTS "
    "(SELECT 1 FROM render_outputs WHERE render_outputs.digest = target.output_digest))"
)


def _edit_sqlite_table(edit) -> None:  # noqa: ANN001 - str -> str
    """Rewrite the table's ``CREATE TABLE`` text in ``sqlite_schema``, in the migration's
    transaction, and bump the schema version so that every connection reads it again."""
    bind = op.get_bind()
    sql = bind.execute(
        sa.text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = :name"), {"name": TABLE}
    ).scalar_one()
    version = bind.execute(sa.text("PRAGMA schema_version")).scalar_one()
    bind.execute(sa.text("PRAGMA writable_schema = ON"))
    try:
        bind.execute(
            sa.text("UPDATE sqlite_master SET sql = :sql WHERE type = 'table' AND name = :name"),
            {"sql": edit(sql), "name": TABLE},
        )
        bind.execute(sa.text(f"PRAGMA schema_version = {int(version) + 1}"))
    finally:
        bind.execute(sa.text("PRAGMA writable_schema = OFF"))
