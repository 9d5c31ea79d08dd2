"""A job signs one statement for its whole batch: the envelope is stored once, its records name it.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05

Hand-written: never import farm.store.models here; spell every table, column and index name.

``evidence_envelopes`` holds each batch envelope once (keyed by its sha256, append-only like
``evidence_records``). An evidence record of a batch names it (``batch_envelope``) and the
position of its subject in the statement (``subject_index``), holds no envelope bytes, and its
``envelope_digest`` (unique, as before) is the sha256 of ``"<batch envelope digest>/<index>"``:
the reference to that one subject. Rows written before keep their own envelope (in the row, or
before revision 0010 in object storage) and NULL in both new columns.

Plain ``ADD COLUMN``s and a new table (no batch copy of ``evidence_records``), so SQLite keeps the
append-only triggers and the foreign keys pointing at the table.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from alembic.util import CommandError

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

DIGEST = sa.String(64)


def upgrade() -> None:
    op.create_table(
        "evidence_envelopes",
        sa.Column("digest", DIGEST, nullable=False),
        sa.Column("envelope", sa.LargeBinary(), nullable=False),
        sa.Column("signer_keyid", DIGEST, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("digest", name="pk_evidence_envelopes"),
        sa.ForeignKeyConstraint(
            ["signer_keyid"], ["signers.keyid"], name="fk_evidence_envelopes_signer_keyid_signers"
        ),
    )
    op.add_column("evidence_records", sa.Column("batch_envelope", DIGEST, nullable=True))
    op.add_column("evidence_records", sa.Column("subject_index", sa.Integer(), nullable=True))
    op.create_index("ix_evidence_records_batch_envelope", "evidence_records", ["batch_envelope"])
    if op.get_bind().dialect.name == "postgresql":
        # the function of revision 0001 names evidence_records in its message: one of its own
        op.execute(
            "CREATE FUNCTION farm_refuse_envelope_change() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION 'evidence_envelopes is append-only: % refused', TG_OP; END $$"
        )
        op.execute(
            "CREATE TRIGGER evidence_envelopes_append_only BEFORE UPDATE OR DELETE ON evidence_envelopes "
            "FOR EACH ROW EXECUTE FUNCTION farm_refuse_envelope_change()"
        )
        return
    for operation in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER evidence_envelopes_append_only_{operation.lower()} BEFORE {operation} "
            "ON evidence_envelopes BEGIN "
            f"SELECT RAISE(ABORT, 'evidence_envelopes is append-only: {operation} refused'); END"
        )


def downgrade() -> None:
    # batch records hold no envelope of their own: refuse rather than lose evidence
    bind = op.get_bind()
    held = bind.execute(sa.text("SELECT COUNT(*) FROM evidence_envelopes")).scalar()
    if held:
        raise CommandError(
            f"{held} batch envelopes vouch for evidence records (revision 0018): downgrading below "
            "0018 would lose that evidence; the database stays at 0018"
        )
    if bind.dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS evidence_envelopes_append_only ON evidence_envelopes")
        op.execute("DROP FUNCTION IF EXISTS farm_refuse_envelope_change()")
    else:
        op.execute("DROP TRIGGER IF EXISTS evidence_envelopes_append_only_update")
        op.execute("DROP TRIGGER IF EXISTS evidence_envelopes_append_only_delete")
    op.drop_index("ix_evidence_records_batch_envelope", table_name="evidence_records")
    with op.batch_alter_table("evidence_records") as batch:
        batch.drop_column("subject_index")
        batch.drop_column("batch_envelope")
    op.drop_table("evidence_envelopes")
