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
    if not _schema_editable():
        sys.stderr.write(
            "farm: this SQLite refuses schema edits (defensive mode): evidence_records keeps its "
            "unique envelope_digest (revision 0026)\n"
        )
        return
    sql = _table_sql()
    edited, removed = re.subn(rf",\s*{re.escape(CLAUSE)}", "", sql)
    if removed != 1:
        raise CommandError(
            f"{TABLE}: its CREATE TABLE does not hold {CONSTRAINT} as the farm wrote it; the database stays at 0025"
        )
    _edit_schema(
        edited,
        index_name=CONSTRAINT,
        index_sql=f"CREATE UNIQUE INDEX {CONSTRAINT} ON {TABLE} (envelope_digest)",
        index_was=AUTOMATIC_INDEX,
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
    elif CLAUSE not in _table_sql():  # an SQLite in defensive mode kept the constraint
        # the constraint's automatic index, built as a named index, then renamed to what SQLite
        # names the index of the table's first UNIQUE clause
        op.create_index(CONSTRAINT, TABLE, ["envelope_digest"], unique=True)
        sql = _table_sql()
        if not sql.endswith("\n)"):
            raise CommandError(f"{TABLE}: its CREATE TABLE does not end as the farm wrote it")
        _edit_schema(sql[: -len("\n)")] + f", \n\t{CLAUSE}\n)", index_name=AUTOMATIC_INDEX, index_sql=None)
    op.drop_index(OWN_ENVELOPE, table_name=TABLE)
    op.create_index(BATCH_INDEX, TABLE, ["batch_envelope"])
    op.drop_index(BY_SUBJECT, table_name=TABLE)


def _table_sql() -> str:
    return (
        op.get_bind()
        .execute(
            sa.text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = :name"), {"name": TABLE}
        )
        .scalar_one()
    )


def _schema_editable() -> bool:
    """Whether SQLite lets ``sqlite_master`` be written (not in defensive mode)."""
    bind = op.get_bind()
    bind.execute(sa.text("PRAGMA writable_schema = ON"))
    try:
        bind.execute(sa.text("UPDATE sqlite_master SET sql = sql WHERE 0"))
    except sa.exc.OperationalError:
        return False
    finally:
        bind.execute(sa.text("PRAGMA writable_schema = OFF"))
    return True


def _edit_schema(
    table_sql: str, *, index_name: str, index_sql: str | None, index_was: str | None = None
) -> None:
    """Rewrite the table's ``CREATE TABLE`` text and rename its envelope digest's unique index
    (``index_was``, else ``CONSTRAINT``) in ``sqlite_master``, in the migration's transaction, then
    bump the schema version so that every connection, this one included, reads the schema again."""
    bind = op.get_bind()
    version = bind.execute(sa.text("PRAGMA schema_version")).scalar_one()
    bind.execute(sa.text("PRAGMA writable_schema = ON"))
    try:
        bind.execute(
            sa.text("UPDATE sqlite_master SET sql = :sql WHERE type = 'table' AND name = :name"),
            {"sql": table_sql, "name": TABLE},
        )
        renamed = bind.execute(
            sa.text(
                "UPDATE sqlite_master SET name = :name, sql = :sql"
                " WHERE type = 'index' AND name = :was AND tbl_name = :table"
            ),
            {"name": index_name, "sql": index_sql, "was": index_was or CONSTRAINT, "table": TABLE},
        )
        if renamed.rowcount != 1:
            raise CommandError(f"{TABLE}: no index {index_was or CONSTRAINT} to rename")
        bind.execute(sa.text(f"PRAGMA schema_version = {int(version) + 1}"))
    finally:
        bind.execute(sa.text("PRAGMA writable_schema = OFF"))
