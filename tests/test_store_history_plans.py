"""A job's look-ups stay index probes however many rows earlier runs left (PostgreSQL).

psycopg prepares a statement on its fifth execution; PostgreSQL may then keep one generic plan for
the connection's life. A Celery worker's pooled connection planned the action-cache and evidence
look-ups of ``record_outputs`` while those tables were small (a sequential scan) and kept that
plan, so every job of a later run read every row earlier runs left. The store's engine plans
each statement for its parameters and the tables' current sizes instead; a job's statements keep
one generic plan made without sequential scans (``farm.store.db.job_plans_kept``).
"""

from __future__ import annotations

import contextlib

import pytest
from conftest_store import DatabaseFactory, make_inputs
from sqlalchemy import text

from farm.evidence.provenance import RenderProvenance
from farm.evidence.signing import SignedOutput, sign_output
from farm.store import migrate
from farm.store.db import create_farm_engine, job_plans_kept, make_session_factory, session_scope
from farm.store.objects import LocalObjectStore
from farm.store.outputs import put_signed, record_outputs

BATCH = 5
HISTORY = 4000


def _signed(signer, snapshot: str, prefix: str, count: int) -> list[SignedOutput]:
    return [
        sign_output(
            signer,
            f"kind: ConfigMap\nname: {prefix}-{index}\n".encode(),
            RenderProvenance(
                make_inputs(f"{prefix}-{index}", "prod"), f"{prefix}-{index}", "prod", snapshot, ""
            ),
        )
        for index in range(count)
    ]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("planned", ["per execution", "once, in a job's block"])
def test_a_job_s_cache_and_evidence_look_ups_scan_no_history_on_a_connection_that_planned_them_early(
    databases: DatabaseFactory, signer, local_store: LocalObjectStore, planned: str
) -> None:
    # a database of its own: the shared one holds the statistics and dead rows of every earlier
    # test, which move the planner's choices whatever the connection's plan cache does
    url = databases.empty("postgresql")
    migrate.upgrade(url)
    engine = create_farm_engine(url, pool_size=1, max_overflow=0)
    sessions = make_session_factory(engine)
    snapshot = "0" * 64
    try:
        with engine.connect() as connection:
            # the engine's own way (a custom plan per execution), or a job's (farm.fleet.jobs)
            kept = job_plans_kept(connection) if planned != "per execution" else contextlib.nullcontext()
            with kept:
                for job in range(12):  # psycopg prepares at the 5th, PostgreSQL goes generic at the 6th after
                    batch = _signed(signer, snapshot, f"early-{job}", BATCH)
                    put_signed(local_store, batch)
                    with session_scope(sessions, bind=connection) as session:
                        record_outputs(session, signer, batch)
                with session_scope(sessions, bind=connection) as session:  # what earlier runs left
                    record_outputs(session, signer, _signed(signer, snapshot, "history", HISTORY))
                batch = _signed(signer, snapshot, "late", BATCH)
                with session_scope(sessions, bind=connection) as session:
                    # counted before and after, in the one transaction: a backend reports its
                    # statistics at most once a second, so its pending counts may still hold the
                    # earlier transactions' scans (of tables then small, where a scan is right);
                    # only the difference is this job's
                    before = _sequential_scans(session)
                    record_outputs(session, signer, batch)
                    after = _sequential_scans(session)
    finally:
        engine.dispose()
    assert {table: count - before.get(table, 0) for table, count in after.items()} == {
        "evidence_records": 0,
        "action_cache": 0,
    }


def _sequential_scans(session) -> dict[str, int]:
    return dict(
        session.execute(
            text(
                "SELECT relname, seq_scan FROM pg_stat_xact_user_tables "
                "WHERE relname IN ('evidence_records', 'action_cache')"
            )
        ).all()
    )
