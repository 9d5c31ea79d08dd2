"""Editing SQLite's schema text in place, for revisions that change what SQLite keeps only in a
table's ``CREATE TABLE`` text (a foreign key, a check, a unique clause).

This is SQLite's documented procedure for a schema change that leaves the file's format alone
(https://www.sqlite.org/lang_altertable.html, "making other kinds of table schema changes"): the
text is rewritten in ``sqlite_master``, in the migration's transaction, and the schema version
bumped so that every connection, the migration's own included, reads the schema again. Rebuilding
the table instead would copy every row, and could not run with the foreign keys on that the
migration's connection has. An SQLite in defensive mode refuses any such edit
(``schema_editable``).

Hand-written like the revisions that use it: never import the farm's code here.
"""

from __future__ import annotations

from collections.abc import Mapping

import sqlalchemy as sa
from alembic import op
from alembic.util import CommandError


def schema_editable() -> bool:
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


def table_sql(table: str) -> str:
    """The table's ``CREATE TABLE`` text as SQLite keeps it."""
    return (
        op.get_bind()
        .execute(
            sa.text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = :name"), {"name": table}
        )
        .scalar_one()
    )


def write_schema(
    tables: Mapping[str, str], *, renamed_index: tuple[str, str, str, str | None] | None = None
) -> None:
    """Rewrite the ``CREATE TABLE`` text of each of ``tables`` (name → text), and rename one index
    (``(table, old name, new name, new text)``; an automatic index has no text), then bump the
    schema version."""
    bind = op.get_bind()
    version = bind.execute(sa.text("PRAGMA schema_version")).scalar_one()
    bind.execute(sa.text("PRAGMA writable_schema = ON"))
    try:
        for table, sql in tables.items():
            bind.execute(
                sa.text("UPDATE sqlite_master SET sql = :sql WHERE type = 'table' AND name = :name"),
                {"sql": sql, "name": table},
            )
        if renamed_index is not None:
            table, was, name, sql = renamed_index
            renamed = bind.execute(
                sa.text(
                    "UPDATE sqlite_master SET name = :name, sql = :sql"
                    " WHERE type = 'index' AND name = :was AND tbl_name = :table"
                ),
                {"name": name, "sql": sql, "was": was, "table": table},
            )
            if renamed.rowcount != 1:
                raise CommandError(f"{table}: no index {was} to rename")
        bind.execute(sa.text(f"PRAGMA schema_version = {int(version) + 1}"))
    finally:
        bind.execute(sa.text("PRAGMA writable_schema = OFF"))
