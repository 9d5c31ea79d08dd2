"""An evidence record of a batch is unique by its batch envelope and subject, not by a random digest.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-07

Hand-written: never import farm.store.models here; spell every table, column and index name.

Since revision 0018 a rendered output's evidence record names its batch's envelope and its
subject's position in that statement; its ``envelope_digest`` is the sha256 of
``"<batch envelope>/<index>"``, a random key. Its unique index put each rendered output's entry
at a random page: the index a job's commit wrote the most pages of to SQLite's log (2,308 of
13,562 for 2,000 rendered targets, docs/performance.md), and a random insert on PostgreSQL too.
Now:

- ``uq_evidence_records_batch_envelope_subject_index`` (batch envelope, subject index) makes a
  batch row unique (two rows of one subject are the same digest); a batch's entries are adjacent.
  It replaces the batch envelope's index, which it also serves;
- ``uq_evidence_records_own_envelope_digest`` keeps a row that holds its own envelope (before
  0018, or signed alone) unique by that envelope's digest: a partial index, which no batch row
  enters.

No statement looks a record up by ``envelope_digest`` alone any more (``farm.store.outputs``).

SQLite keeps the old uniqueness as a table constraint (an automatic index, which ``DROP INDEX``
refuses). The upgrade edits the ``CREATE TABLE`` text in place, as revision 0025 does, and turns
that automatic index into a named one of the same content, which it then drops like any other
(its pages go back to the file's free list). An SQLite in defensive mode refuses the edit: there
the constraint stays (correct, only slower), and the upgrade says so on stderr.
"""

from __future__ import annotations

import re
import sys

import sqlalchemy as sa
from alembic import op
from alembic.util import CommandError

from migrations.sqlite_schema import schema_editable, table_sql, write_schema

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None

TABLE = "evidence_records"
CONSTRAINT = "uq_evidence_records_envelope_digest"
CLAUSE = f"CONSTRAINT {CONSTRAINT} UNIQUE (envelope_digest)"
AUTOMATIC_INDEX = f"sqlite_autoindex_{TABLE}_1"  # the table's one automatic index (its key is the rowid)
BATCH_INDEX = "ix_evidence_records_batch_envelope"
BY_SUBJECT = "uq_evidence_records_batch_envelope_subject_index"
OWN_ENVELOPE = "uq_evidence_records_own_envelope_digest"


def upgrade() -> None:
    op.create_index(BY_SUBJECT, TABLE, ["batch_envelope", "subject_index"], unique=True)
    op.drop_index(BATCH_INDEX, table_name=TABLE)
    op.create_index(
        OWN_ENVELOPE,
        TABLE,
        ["envelope_digest"],
        unique=True,
        sqlite_where=sa.text("batch_envelope IS NULL"),
        postgresql_where=sa.text("batch_envelope IS NULL"),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.drop_constraint(CONSTRAINT, TABLE, type_="unique")
        return
    if not schema_editable():
        sys.stderr.write(
            "farm: this SQLite refuses schema edits (defensive mode): evidence_records keeps its "
            "unique envelope_digest (revision 0026)\n"
        )
        return
    sql = table_sql(TABLE)
    edited, removed = re.subn(rf",\s*{re.escape(CLAUSE)}", "", sql)
    if removed != 1:
        raise CommandError(
            f"{TABLE}: its CREATE TABLE does not hold {CONSTRAINT} as the farm wrote it; the database stays at 0025"
        )
    write_schema(
        {TABLE: edited},
        renamed_index=(
            TABLE,
            AUTOMATIC_INDEX,
            CONSTRAINT,
            f"CREATE UNIQUE INDEX {CONSTRAINT} ON {TABLE} (envelope_digest)",
        ),
    )
    op.drop_index(CONSTRAINT, table_name=TABLE)


def downgrade() -> None:
    bind = op.get_bind()
    duplicated = bind.execute(
        sa.text(
            f"SELECT COUNT(*) FROM (SELECT envelope_digest FROM {TABLE} GROUP BY envelope_digest"
            " HAVING COUNT(*) > 1) AS twice"
        )
    ).scalar_one()
    if duplicated:
        raise CommandError(
            f"{duplicated} envelope digests name more than one evidence record: they cannot be unique "
            "again; the database stays at 0026"
        )
    if bind.dialect.name == "postgresql":
        op.create_unique_constraint(CONSTRAINT, TABLE, ["envelope_digest"])
    elif CLAUSE not in table_sql(TABLE):  # an SQLite in defensive mode kept the constraint
        # the constraint's automatic index, built as a named index, then renamed to what SQLite
        # names the index of the table's first UNIQUE clause
        op.create_index(CONSTRAINT, TABLE, ["envelope_digest"], unique=True)
        sql = table_sql(TABLE)
        if not sql.endswith("\n)"):
            raise CommandError(f"{TABLE}: its CREATE TABLE does not end as the farm wrote it")
        write_schema(
            {TABLE: sql[: -len("\n)")] + f", \n\t{CLAUSE}\n)"},
            renamed_index=(TABLE, CONSTRAINT, AUTOMATIC_INDEX, None),
        )
    op.drop_index(OWN_ENVELOPE, table_name=TABLE)
    op.create_index(BATCH_INDEX, TABLE, ["batch_envelope"])
    op.drop_index(BY_SUBJECT, table_name=TABLE)
