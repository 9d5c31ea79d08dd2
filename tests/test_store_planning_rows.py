"""A planned run's rows go to the database in bulk (``COPY`` on PostgreSQL, one ``executemany``
on SQLite) and read back as the ORM wrote them, on both databases; target ids are UUIDv7s made
many at once."""

from __future__ import annotations

import uuid
from datetime import timedelta

from conftest_store import Fleet
from sqlalchemy import select, text

from farm.store.models import JobState, RenderJob, RenderTarget, new_ids, utcnow
from farm.store.runs import TARGET_COLUMNS, insert_run


def _target(run_id: str, target_id: str, index: int, now, job_id: str | None) -> dict:  # noqa: ANN001
    return {
        "id": target_id,
        "run_id": run_id,
        "job_id": job_id,
        "application": f"app-{index}",
        "cluster_profile": "prod",
        "selection": "" if index % 2 else "size=large",
        "request_digest": f"{index:064x}",
        "request_pack": f"{index + 1:064x}",
        "action_key": f"{index + 2:064x}",
        "state": JobState.QUEUED.value if job_id else JobState.FAILED.value,
        "error_code": None if job_id else "E_BAD_INPUT",
        "error_message": None if job_id else "a message with 'quotes', \\ and\ttabs\n",
        "output_digest": None,
        "created_at": now,
        "finished_at": None if job_id else now + timedelta(seconds=1),
    }


def test_bulk_inserted_target_rows_read_back_as_they_were_planned(fleet: Fleet) -> None:
    now = utcnow()
    run_id = new_ids(1)[0]
    with fleet.sessions.begin() as session:
        job = {
            "id": new_ids(1)[0],
            "run_id": run_id,
            "application": "app-1",
            "batch_key": "0" * 64,
            "target_count": 1,
            "state": JobState.QUEUED.value,
            "attempts": 0,
            "claimed_by": None,
            "created_at": now,
            "queued_at": now,
        }
        ids = new_ids(3)
        rows = [
            _target(run_id, target_id, index, now, job["id"] if index == 1 else None)
            for index, target_id in enumerate(ids)
        ]
        insert_run(session, _run_row(fleet, run_id, now), [job], rows)
    with fleet.sessions() as session:
        stored = session.scalars(
            select(RenderTarget).where(RenderTarget.id.in_(ids)).order_by(RenderTarget.id)
        )
        read = [
            {column.name: getattr(target, column.key) for column in RenderTarget.__table__.columns}
            for target in stored
        ]
        assert session.get(RenderJob, job["id"]) is not None
    assert read == rows


def _run_row(fleet: Fleet, run_id: str, now) -> dict:  # noqa: ANN001
    return {
        "id": run_id,
        "snapshot_digest": fleet.snapshot,
        "kind": "fleet",
        "fleet": "bench",
        "trigger": "cli",
        "core_version": "test",
        "selection_policy": "default",
        "state": "running",
        "created_at": now,
        "started_at": now,
        "owner": None,
    }


def test_ids_made_many_at_once_are_distinct_ascending_uuid7s() -> None:
    first, second = new_ids(1000), new_ids(1000)
    assert first == sorted(first) and len(set(first + second)) == 2000
    assert all(uuid.UUID(value).version == 7 and uuid.UUID(value).variant == uuid.RFC_4122 for value in first)
    assert second[0] > first[-1] or second[0][:12] == first[-1][:12]  # a later millisecond, or the same one


def test_target_rows_given_as_values_in_column_order_read_back_as_the_same_rows(fleet: Fleet) -> None:
    """The planner hands each target row as its values in ``TARGET_COLUMNS`` order (no dict per
    target): they read back as the same rows given as dicts would."""
    now = utcnow()
    run_id = new_ids(1)[0]
    ids = new_ids(3)
    rows = [_target(run_id, target_id, index, now, None) for index, target_id in enumerate(ids)]
    with fleet.sessions.begin() as session:
        insert_run(
            session,
            _run_row(fleet, run_id, now),
            [],
            [[row[name] for name in TARGET_COLUMNS] for row in rows],
        )
    with fleet.sessions() as session:
        stored = session.scalars(
            select(RenderTarget).where(RenderTarget.id.in_(ids)).order_by(RenderTarget.id)
        )
        read = [
            {column.name: getattr(target, column.key) for column in RenderTarget.__table__.columns}
            for target in stored
        ]
    assert read == rows


def test_bulk_inserted_target_rows_store_their_moments_as_the_run_row_stores_its_own(fleet: Fleet) -> None:
    """A target's ``created_at`` is stored as the ORM stores every moment (on SQLite, the same
    text with no offset), so SQL comparing moments across tables sees the same instant as equal."""
    now = utcnow()
    run_id = new_ids(1)[0]
    target_id = new_ids(1)[0]
    with fleet.sessions.begin() as session:
        insert_run(session, _run_row(fleet, run_id, now), [], [_target(run_id, target_id, 0, now, None)])
    with fleet.sessions() as session:
        same = session.execute(
            text(
                "SELECT t.created_at = r.created_at FROM render_targets AS t"
                " JOIN fleet_runs AS r ON r.id = t.run_id WHERE t.id = :id"
            ),
            {"id": target_id},
        ).scalar_one()
    assert same in (True, 1)
