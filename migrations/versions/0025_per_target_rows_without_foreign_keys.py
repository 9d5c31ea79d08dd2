"""The rows written per target name their run, output, record and signer without a foreign key.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06

Hand-written: never import farm.store.models here; spell every table, column and index name.

A target row names its run and, once it has one, its output; a rendered target's evidence record
names its target and its signer; its action cache entry names its output and its record. On
PostgreSQL each of those foreign keys is a trigger query per row, a ``SELECT … FOR KEY SHARE``
of the row it names: of the 2.0 s a 20,000-target no-change run spent copying its rows, 1.7 s were
the target rows' two checks, and a rendered target's rows paid five checks of 20-30 µs each
(docs/performance.md). None of them guards anything the farm does not already:

- a run's row is written in the transaction that writes its first targets, and ``farm gc`` deletes
  a run's row only once no target row names it (``farm.store.retention``);
- nothing deletes a ``render_outputs``, ``evidence_records`` (append-only: triggers refuse it) or
  ``signers`` row, and a row names one only after it is written, in the same transaction or an
  earlier one; ``farm gc`` deletes only target rows that no record names (cache hits);
- ``farm verify`` fails every row whose reference names no row (``reference.dangling``), and
  every record whose signer is not trusted.

The foreign keys that stay are those of rows written once per run, job, batch or snapshot.

SQLite keeps a table's foreign keys in its ``CREATE TABLE`` text. Removing one changes nothing
on disk, so the text is edited in place, the way SQLite documents for removing a foreign key
(https://www.sqlite.org/lang_altertable.html, "making other kinds of table schema changes"):
a rebuild would copy every row, and could not run with the foreign keys on that the migration's
connection has (``evidence_records.target_id`` names ``render_targets``). An SQLite in defensive
mode refuses any such edit: there the keys stay, and the upgrade says so on stderr.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import NamedTuple

import sqlalchemy as sa
from alembic import op
from alembic.util import CommandError

from migrations.sqlite_schema import schema_editable, table_sql, write_schema

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


class Key(NamedTuple):
    table: str
    name: str
    column: str
    referred: str
    referred_column: str
    spelled: str = ""  # the referred table as SQLite's text spells it, when not its plain name

    @property
    def clause(self) -> str:
        """The key as its ``CREATE TABLE`` text on SQLite holds it."""
        return (
            f"CONSTRAINT {self.name} FOREIGN KEY({self.column}) "
            f"REFERENCES {self.spelled or self.referred} ({self.referred_column})"
        )


# each table's keys in the order its CREATE TABLE lists them, right after its primary key
KEYS = (
    Key("render_targets", "fk_render_jobs_run_id_fleet_runs", "run_id", "fleet_runs", "id"),
    Key(
        "render_targets",
        "fk_render_jobs_output_digest_render_outputs",
        "output_digest",
        "render_outputs",
        "digest",
    ),
    Key("evidence_records", "fk_evidence_records_signer_keyid_signers", "signer_keyid", "signers", "keyid"),
    # revision 0004 renamed render_jobs: SQLite's rename quoted the new name in this reference
    Key(
        "evidence_records",
        "fk_evidence_records_job_id_render_jobs",
        "target_id",
        "render_targets",
        "id",
        spelled='"render_targets"',
    ),
    Key(
        "action_cache",
        "fk_action_cache_output_digest_render_outputs",
        "output_digest",
        "render_outputs",
        "digest",
    ),
    Key(
        "action_cache",
        "fk_action_cache_evidence_id_evidence_records",
        "evidence_id",
        "evidence_records",
        "id",
    ),
)
PRIMARY_KEYS = {
    "render_targets": "CONSTRAINT pk_render_jobs PRIMARY KEY (id)",
    "evidence_records": "CONSTRAINT pk_evidence_records PRIMARY KEY (id)",
    "action_cache": "CONSTRAINT pk_action_cache PRIMARY KEY (action_key)",
}


def _keys_of(table: str) -> list[Key]:
    return [key for key in KEYS if key.table == table]


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for key in KEYS:
            op.drop_constraint(key.name, key.table, type_="foreignkey")
        return
    if not schema_editable():
        # an SQLite in defensive mode refuses every edit of its schema: the keys stay, enforced as
        # before (correct, and cheap on SQLite), and the rest of the farm works the same
        sys.stderr.write(
            "farm: this SQLite refuses schema edits (defensive mode): render_targets, "
            "evidence_records and action_cache keep their foreign keys (revision 0025)\n"
        )
        return
    for table in PRIMARY_KEYS:
        _edit_sqlite_table(table, _without_keys)


def _without_keys(table: str, sql: str) -> str:
    for key in _keys_of(table):
        sql, removed = re.subn(rf",\s*{re.escape(key.clause)}", "", sql)
        if removed != 1:
            raise CommandError(
                f"{table}: its CREATE TABLE does not hold the foreign key {key.name} as the farm "
                "wrote it; the database stays at 0024"
            )
    return sql


def downgrade() -> None:
    bind = op.get_bind()
    for key in KEYS:
        broken = bind.execute(sa.text(_broken_references(key))).scalar_one()
        if broken:
            raise CommandError(
                f"{broken} {key.table} rows name a {key.referred} row that is missing ({key.column}; "
                "farm verify lists them): the foreign key cannot come back; the database stays at 0025"
            )
    if bind.dialect.name == "postgresql":
        for key in KEYS:
            op.create_foreign_key(key.name, key.table, key.referred, [key.column], [key.referred_column])
        return
    for table in PRIMARY_KEYS:
        _edit_sqlite_table(table, _with_keys)


def _with_keys(table: str, sql: str) -> str:
    """The text with the table's keys back after its primary key; unchanged when it holds them
    (an SQLite in defensive mode kept them through the upgrade)."""
    missing = [key for key in _keys_of(table) if key.clause not in sql]
    if not missing:
        return sql
    primary_key = PRIMARY_KEYS[table]
    if sql.count(primary_key) != 1:
        raise CommandError(f"{table}: its CREATE TABLE has no primary key clause to follow")
    clauses = "".join(f", \n\t{key.clause}" for key in missing)
    return sql.replace(primary_key, primary_key + clauses, 1)


def _broken_references(key: Key) -> str:
    """Count the rows whose reference names no row, as the foreign key would refuse them."""
    return (
        f"SELECT COUNT(*) FROM {key.table} AS child WHERE child.{key.column} IS NOT NULL AND NOT EXISTS "
        f"(SELECT 1 FROM {key.referred} AS parent WHERE parent.{key.referred_column} = child.{key.column})"
    )


def _edit_sqlite_table(table: str, edit: Callable[[str, str], str]) -> None:
    """Rewrite a table's ``CREATE TABLE`` text in place (``migrations.sqlite_schema``)."""
    sql = table_sql(table)
    edited = edit(table, sql)
    if edited != sql:
        write_schema({table: edited})
