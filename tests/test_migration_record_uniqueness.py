"""Revision 0026: an evidence record of a batch is unique by its batch envelope and subject index,
a record holding its own envelope by that envelope's digest, on both databases; every row stays,
and a downgrade restores the unique envelope digest (SQLite: its table text, byte for byte), or is
refused while two records share one."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from conftest_store import (
    DatabaseFactory,
    Fleet,
    assert_sqlite_intact,
    refused_downgrade,
    sqlite_defensive_mode,
    sqlite_tables_sql,
    table_rows,
)
from sqlalchemy import Engine, insert, inspect, select, text
from sqlalchemy.exc import IntegrityError

from farm.evidence.signing import Signer
from farm.store import migrate
from farm.store.db import create_farm_engine, make_session_factory
from farm.store.models import EvidenceRecord
from farm.store.objects import LocalObjectStore

BEFORE = "0025"
TABLE = "evidence_records"
OLD_UNIQUE = {("uq_evidence_records_envelope_digest", ("envelope_digest",))}
OLD_INDEXES = {
    ("ix_evidence_records_batch_envelope", ("batch_envelope",), False),
    ("ix_evidence_records_subject_digest", ("subject_digest",), False),
}
NEW_INDEXES = {
    ("uq_evidence_records_batch_envelope_subject_index", ("batch_envelope", "subject_index"), True),
    ("uq_evidence_records_own_envelope_digest", ("envelope_digest",), True),
    ("ix_evidence_records_subject_digest", ("subject_digest",), False),
}


def _uniqueness(
    engine: Engine,
) -> tuple[set[tuple[str, tuple[str, ...]]], set[tuple[str, tuple[str, ...], bool]]]:
    """The table's unique constraints and its indexes (name, columns, unique)."""
    engine.dispose()  # a pooled connection may hold the schema it read before
    inspector = inspect(engine)
    constraints = {
        (constraint["name"], tuple(constraint["column_names"]))
        for constraint in inspector.get_unique_constraints(TABLE)
    }
    indexes = {
        (index["name"], tuple(index["column_names"]), bool(index["unique"]))
        for index in inspector.get_indexes(TABLE)
        if not index.get("duplicates_constraint")  # PostgreSQL lists a constraint's index too
    }
    return constraints, indexes


def _write_both_kinds(engine: Engine, local_store: LocalObjectStore, signer: Signer) -> None:
    """A record holding its own envelope and two records of one batch."""
    fleet = Fleet(make_session_factory(engine), local_store, signer)
    fleet.render(b"kind: ConfigMap\n")
    fleet.render_batch("api", {"prod": b"kind: Secret\n", "staging": b"kind: Service\n"})


def _copy_of_a_record(engine: Engine, *, batch: bool, **changes: object) -> dict[str, object]:
    table = EvidenceRecord.__table__
    kind = table.c.batch_envelope.is_not(None) if batch else table.c.batch_envelope.is_(None)
    with engine.connect() as connection:
        row = connection.execute(select(table).where(kind).limit(1)).mappings().one()
    return {**{key: value for key, value in row.items() if key != "id"}, **changes}


def test_batch_records_become_unique_by_subject_and_own_envelopes_by_digest_then_back(
    empty_url: str, empty_engine: Engine, local_store: LocalObjectStore, signer: Signer
) -> None:
    migrate.upgrade(empty_url, BEFORE)
    _write_both_kinds(empty_engine, local_store, signer)
    rows, sql = table_rows(empty_engine, (TABLE,)), sqlite_tables_sql(empty_engine, (TABLE,))
    assert len(rows[TABLE]) == 3
    assert _uniqueness(empty_engine) == (OLD_UNIQUE, OLD_INDEXES)

    migrate.upgrade(empty_url)
    assert _uniqueness(empty_engine) == (set(), NEW_INDEXES)
    assert table_rows(empty_engine, (TABLE,)) == rows
    assert_sqlite_intact(empty_engine)
    if empty_engine.dialect.name == "sqlite":  # the constraint's automatic index is gone with it
        with empty_engine.connect() as connection:
            names = connection.scalars(
                text("SELECT name FROM sqlite_master WHERE tbl_name = :t"), {"t": TABLE}
            )
            assert not [name for name in names if name.startswith("sqlite_autoindex")]
    table = EvidenceRecord.__table__
    # a batch row with a fresh envelope digest, for a subject already recorded: refused
    same_subject = _copy_of_a_record(empty_engine, batch=True, envelope_digest="0" * 64)
    with pytest.raises(IntegrityError), empty_engine.begin() as connection:
        connection.execute(insert(table).values(same_subject))
    # a row holding its own envelope, with a digest already recorded: refused
    same_envelope = _copy_of_a_record(empty_engine, batch=False)
    with pytest.raises(IntegrityError), empty_engine.begin() as connection:
        connection.execute(insert(table).values(same_envelope))
    assert table_rows(empty_engine, (TABLE,)) == rows

    migrate.downgrade(empty_url, BEFORE)
    assert _uniqueness(empty_engine) == (OLD_UNIQUE, OLD_INDEXES)
    assert sqlite_tables_sql(empty_engine, (TABLE,)) == sql
    assert table_rows(empty_engine, (TABLE,)) == rows
    assert_sqlite_intact(empty_engine)
    # a batch row's envelope digest on a row of another batch: refused again
    other_batch = _copy_of_a_record(empty_engine, batch=True, batch_envelope="e" * 64)
    with pytest.raises(IntegrityError), empty_engine.begin() as connection:
        connection.execute(insert(table).values(other_batch))


def test_downgrading_below_0026_is_refused_while_two_records_share_an_envelope_digest(
    empty_url: str,
    empty_engine: Engine,
    local_store: LocalObjectStore,
    signer: Signer,
    storage_cli: typer.Typer,
    tmp_path: Path,
) -> None:
    migrate.upgrade(empty_url)
    _write_both_kinds(empty_engine, local_store, signer)
    twin = _copy_of_a_record(empty_engine, batch=True, batch_envelope="e" * 64)  # its digest, another batch
    with empty_engine.begin() as connection:
        connection.execute(insert(EvidenceRecord.__table__).values(twin))
    rows = table_rows(empty_engine, (TABLE,))
    empty_engine.dispose()

    output = refused_downgrade(storage_cli, empty_url, tmp_path, BEFORE)
    assert "1 envelope digests name more than one evidence record" in output
    assert "stays at 0026" in output
    assert migrate.current_revision(empty_engine) == "0026"
    assert _uniqueness(empty_engine) == (set(), NEW_INDEXES)
    assert table_rows(empty_engine, (TABLE,)) == rows


def test_an_sqlite_in_defensive_mode_keeps_the_unique_envelope_digest_and_migrates_both_ways(
    databases: DatabaseFactory,
    local_store: LocalObjectStore,
    signer: Signer,
    capfd: pytest.CaptureFixture[str],
) -> None:
    url = databases.empty("sqlite")
    migrate.upgrade(url, BEFORE)
    with sqlite_defensive_mode():
        engine = create_farm_engine(url)
        _write_both_kinds(engine, local_store, signer)
        rows = table_rows(engine, (TABLE,))
        migrate.upgrade(url)
        assert "evidence_records keeps its unique envelope_digest (revision 0026)" in capfd.readouterr().err
        assert migrate.current_revision(engine) == migrate.HEAD_REVISION
        assert _uniqueness(engine) == (OLD_UNIQUE, NEW_INDEXES)
        Fleet(make_session_factory(engine), local_store, signer).render_batch(
            "worker", {"prod": b"kind: Job\n"}
        )
        assert len(table_rows(engine, (TABLE,))[TABLE]) == len(rows[TABLE]) + 1
        migrate.downgrade(url, BEFORE)
        assert _uniqueness(engine) == (OLD_UNIQUE, OLD_INDEXES)
        assert_sqlite_intact(engine)
        engine.dispose()
