"""A run's counts by state, its failures and its completion, on both databases: a cached failure
(a cached row with an error code) is told from a cache hit, and on SQLite each is read from the
``(run_id, state, error_code)`` index, not from every row of the run."""

from __future__ import annotations

import pytest
from conftest_store import Fleet
from sqlalchemy import event, text

from farm.store.models import JobState, RenderTarget, new_ids, utcnow
from farm.store.runs import _FINALIZE, TargetFilter, finalize_run, insert_rows, target_counts, targets_of_run

_INDEX = "INDEX ix_render_targets_run_id_state_error ("


def _run(fleet: Fleet, states: list[tuple[str, str | None]]) -> str:
    """A running run with one target per ``(state, error code)``, its applications in that order."""
    now = utcnow()
    run_id = fleet.new_run()
    targets = [
        {
            "id": target_id,
            "run_id": run_id,
            "job_id": None,
            "application": f"app-{index}",
            "cluster_profile": "prod",
            "selection": "",
            "request_digest": f"{index:064x}",
            "request_pack": None,
            "action_key": f"{index + 1:064x}",
            "state": state,
            "error_code": code,
            "error_message": None if code is None else f"{code} happened",
            "output_digest": None,
            "created_at": now,
            "finished_at": now,
        }
        for index, (target_id, (state, code)) in enumerate(zip(new_ids(len(states)), states, strict=True))
    ]
    with fleet.sessions.begin() as session:
        insert_rows(session.connection(), RenderTarget.__table__, targets)
    return run_id


def _final_state(fleet: Fleet, run_id: str) -> str:
    with fleet.sessions.begin() as session:
        assert finalize_run(session.connection(), run_id)
    with fleet.sessions() as session:
        return session.scalar(text("SELECT state FROM fleet_runs WHERE id = :id"), {"id": run_id})


def test_counts_tell_cached_failures_from_cache_hits_and_list_every_failure(fleet: Fleet) -> None:
    cached, failed, succeeded = JobState.CACHED.value, JobState.FAILED.value, JobState.SUCCEEDED.value
    run_id = _run(
        fleet,
        [(succeeded, None), (cached, None), (cached, "E_BAD"), (failed, "E_WORSE"), (cached, None)],
    )
    with fleet.sessions() as session:
        assert target_counts(session, run_id) == {succeeded: 1, cached: 2, "cached_failure": 1, failed: 1}
        failures = targets_of_run(session, run_id, TargetFilter(failed_only=True))
    assert [(row.application, row.state, row.error_code) for row in failures] == [
        ("app-2", cached, "E_BAD"),
        ("app-3", failed, "E_WORSE"),
    ]
    assert _final_state(fleet, run_id) == "completed_with_failures"


def test_a_run_whose_only_failure_is_a_cached_one_completes_with_failures_and_counts_no_cache_hit(
    fleet: Fleet,
) -> None:
    run_id = _run(fleet, [(JobState.CACHED.value, "E_BAD")])
    with fleet.sessions() as session:
        assert target_counts(session, run_id) == {"cached_failure": 1}
    assert _final_state(fleet, run_id) == "completed_with_failures"


def test_a_run_of_cache_hits_completes_without_failures(fleet: Fleet) -> None:
    run_id = _run(fleet, [(JobState.CACHED.value, None), (JobState.SUCCEEDED.value, None)])
    with fleet.sessions() as session:
        assert targets_of_run(session, run_id, TargetFilter(failed_only=True)) == []
    assert _final_state(fleet, run_id) == "completed"


@pytest.mark.parametrize("database_kind", ["sqlite"])  # PostgreSQL plans by its statistics
def test_on_sqlite_counts_failures_and_completion_read_the_state_index_alone(fleet: Fleet) -> None:
    run_id = _run(fleet, [(JobState.CACHED.value, None), (JobState.CACHED.value, "E_BAD")])
    statements: list[str] = []
    with fleet.sessions() as session:
        connection = session.connection()

        def capture(_conn, _cursor, statement, _parameters, _context, _many) -> None:  # noqa: ANN001
            if "render_targets" in statement:
                statements.append(statement)

        event.listen(connection, "before_cursor_execute", capture)
        target_counts(session, run_id)
        targets_of_run(session, run_id, TargetFilter(failed_only=True))
        event.remove(connection, "before_cursor_execute", capture)
        statements.append(_FINALIZE)
        assert len(statements) == 4, statements
        for statement in statements:
            parameters = [run_id] * statement.count("?")
            plan = [
                row[3]
                for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", tuple(parameters))
            ]
            touches = [step for step in plan if "render_targets" in step]
            assert touches and all(_INDEX in step for step in touches), (statement, plan)


def test_a_run_s_failures_are_listed_by_application_cluster_and_selection_as_the_database_orders(
    fleet: Fleet,
) -> None:
    """On SQLite the failures are sorted after the query (by code point, as its BINARY collation
    sorts); on PostgreSQL by the query: both give the order the database's ORDER BY gives."""
    failed = JobState.FAILED.value
    run_id = _run(fleet, [(failed, "E_ONE")] * 4)
    names = ["b-app", "a-app", "Z-app", "ä-app"]
    with fleet.sessions.begin() as session:
        for index, name in enumerate(names):
            session.execute(
                text(
                    "UPDATE render_targets SET application = :name WHERE run_id = :run AND application = :old"
                ),
                {"name": name, "run": run_id, "old": f"app-{index}"},
            )
    with fleet.sessions() as session:
        listed = [row.application for row in targets_of_run(session, run_id, TargetFilter(failed_only=True))]
        ordered = session.scalars(
            text("SELECT application FROM render_targets WHERE run_id = :run ORDER BY application"),
            {"run": run_id},
        ).all()
    assert listed == list(ordered)
    assert sorted(listed) == sorted(names)
