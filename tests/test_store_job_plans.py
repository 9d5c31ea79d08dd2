"""On PostgreSQL a job's statements keep one plan per pooled connection
(``farm.store.db.job_plans_kept``): a generic plan made without sequential scans, whose look-ups
read evidence records by their primary key even when it was made on empty tables, where a plan
per execution took about half of PostgreSQL's CPU per job. The connection goes back to the pool
with its own settings, whether the block ended well or not."""

from __future__ import annotations

import pytest
from conftest_store import DatabaseFactory
from sqlalchemy import Connection

from farm.store.db import create_farm_engine, job_plans_kept
from farm.store.runs import CACHED_LOOKUP


def _settings(connection: Connection) -> tuple[str, str]:
    with connection.begin():
        mode = connection.exec_driver_sql("SHOW plan_cache_mode").scalar_one()
        scans = connection.exec_driver_sql("SHOW enable_seqscan").scalar_one()
    return mode, scans


def _cache_lookup_plan(connection: Connection) -> str:
    with connection.begin():
        connection.exec_driver_sql("PREPARE lookup(text[]) AS " + CACHED_LOOKUP.format("= ANY($1)"))
        plan = "\n".join(connection.exec_driver_sql("EXPLAIN EXECUTE lookup(ARRAY['x'])").scalars())
        connection.exec_driver_sql("DEALLOCATE lookup")
    return plan


def test_a_jobs_look_up_planned_once_on_empty_tables_reads_evidence_by_primary_key(
    databases: DatabaseFactory,
) -> None:
    engine = create_farm_engine(databases.migrated("postgresql"))
    try:
        with engine.connect() as connection:
            with job_plans_kept(connection):
                inside = _settings(connection)
                plan = _cache_lookup_plan(connection)
            after = _settings(connection)
    finally:
        engine.dispose()
    assert inside == ("force_generic_plan", "off")
    assert "$1" in plan  # the generic plan, kept for every execution
    assert "Seq Scan" not in plan
    assert "pk_evidence_records" in plan  # not every record of an output, as the subject's index reads
    assert after == ("force_custom_plan", "on")  # the engine's own settings (farm.store.db)


def test_a_connection_leaves_a_jobs_block_that_failed_mid_transaction_with_its_own_settings(
    databases: DatabaseFactory,
) -> None:
    engine = create_farm_engine(databases.migrated("postgresql"))
    try:
        with engine.connect() as connection:
            with pytest.raises(RuntimeError, match="a job failed"), job_plans_kept(connection):
                connection.begin()
                connection.exec_driver_sql("SELECT 1")
                raise RuntimeError("a job failed")
            assert not connection.in_transaction()
            assert _settings(connection) == ("force_custom_plan", "on")
    finally:
        engine.dispose()


def test_a_jobs_block_changes_nothing_on_sqlite(databases: DatabaseFactory) -> None:
    engine = create_farm_engine(databases.migrated("sqlite"))
    try:
        with engine.connect() as connection:
            with job_plans_kept(connection):
                assert not connection.in_transaction()
                with connection.begin():
                    assert connection.exec_driver_sql("SELECT count(*) FROM fleet_runs").scalar_one() == 0
            assert not connection.in_transaction()
    finally:
        engine.dispose()
