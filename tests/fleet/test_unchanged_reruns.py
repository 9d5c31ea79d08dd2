"""A re-run of a catalog unchanged since the fleet's last complete run is recorded by copying that
run's answers in one statement, on SQLite and PostgreSQL, and records exactly what planning
target by target would: every target cached with the output the action cache holds for it now.
Whatever the cache or the store no longer answers makes the run plan target by target."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import delete, select, update

from farm.fleet.jobs import run_job
from farm.fleet.progress import run_summary
from farm.fleet.service import plan_catalog
from farm.store import models
from farm.store.db import session_scope

from .conftest import Catalog, FleetEnv

COPIED = "answered as then"  # what the planner logs when it copied a run's answers


def _render_all(env: FleetEnv, queued: list[tuple[str, str]]) -> None:
    for job_id, key in queued:
        run_job(env.storage, env.signer, job_id, worker="w1", expected_batch_key=key)


def _rows(env: FleetEnv, run_id: str) -> list[models.RenderTarget]:
    with session_scope(env.storage.sessions) as session:
        rows = list(session.scalars(select(models.RenderTarget).where(models.RenderTarget.run_id == run_id)))
        session.expunge_all()
    return sorted(rows, key=lambda row: (row.application, row.cluster_profile, row.selection))


def _what_a_row_says(row: models.RenderTarget) -> tuple[object, ...]:
    return (
        row.application,
        row.cluster_profile,
        row.selection,
        row.request_digest,
        row.request_pack,
        row.action_key,
        row.output_digest,
    )


def _copied(caplog: pytest.LogCaptureFixture) -> bool:
    return any(COPIED in record.getMessage() for record in caplog.records)


def test_a_rerun_of_an_unchanged_catalog_records_every_target_cached_with_its_output(
    fleet_env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _render_all(fleet_env, first.queued)
    rendered = _rows(fleet_env, first.run_id)
    assert {row.state for row in rendered} == {"succeeded"}

    with caplog.at_level(logging.INFO, logger="farm.fleet.planner"):
        _, second = plan_catalog(fleet_env.storage, catalog.root)
    assert _copied(caplog)
    assert (second.queued, second.cached, second.total) == ([], len(rendered), len(rendered))
    again = _rows(fleet_env, second.run_id)
    assert [_what_a_row_says(row) for row in again] == [_what_a_row_says(row) for row in rendered]
    assert {(row.state, row.job_id, row.error_code, row.error_message) for row in again} == {
        ("cached", None, None, None)
    }
    ids = [row.id for row in again]
    assert len(set(ids)) == len(ids)
    assert min(ids) > max(row.id for row in rendered)  # UUIDv7s: later than the earlier run's
    assert {row.run_id for row in again} == {second.run_id}
    assert all(row.created_at is not None and row.finished_at is not None for row in again)
    summary = run_summary(fleet_env.storage, second.run_id)
    assert summary.state == "completed"
    assert summary.counts == {"cached": len(rendered)}


def test_a_rerun_whose_cache_entry_was_removed_renders_that_target_again(
    fleet_env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _render_all(fleet_env, first.queued)
    victim = _rows(fleet_env, first.run_id)[0]
    with session_scope(fleet_env.storage.sessions) as session:
        session.execute(
            delete(models.ActionCacheEntry).where(models.ActionCacheEntry.action_key == victim.action_key)
        )

    with caplog.at_level(logging.INFO, logger="farm.fleet.planner"):
        _, second = plan_catalog(fleet_env.storage, catalog.root)
    assert not _copied(caplog)
    assert (second.cached, second.total) == (second.total - 1, len(_rows(fleet_env, first.run_id)))
    assert len(second.queued) == 1
    assert len(_rows(fleet_env, second.run_id)) == second.total  # nothing of the copy left behind
    _render_all(fleet_env, second.queued)
    again = {(row.application, row.cluster_profile): row for row in _rows(fleet_env, second.run_id)}
    rendered = again[(victim.application, victim.cluster_profile)]
    assert (rendered.state, rendered.output_digest) == ("succeeded", victim.output_digest)
    assert run_summary(fleet_env.storage, second.run_id).state == "completed"


def test_a_rerun_after_a_run_with_a_failure_is_planned_target_by_target(
    fleet_env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _render_all(fleet_env, first.queued)
    with session_scope(fleet_env.storage.sessions) as session:  # as if one target had failed
        session.execute(
            update(models.FleetRun)
            .where(models.FleetRun.id == first.run_id)
            .values(state="completed_with_failures")
        )

    with caplog.at_level(logging.INFO, logger="farm.fleet.planner"):
        _, second = plan_catalog(fleet_env.storage, catalog.root)
    assert not _copied(caplog)
    assert (second.queued, second.cached) == ([], second.total)
    assert [_what_a_row_says(row) for row in _rows(fleet_env, second.run_id)] == [
        _what_a_row_says(row) for row in _rows(fleet_env, first.run_id)
    ]


def test_a_rerun_of_a_changed_catalog_copies_nothing(
    fleet_env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _render_all(fleet_env, first.queued)
    catalog.write_app("app-0", image="ghcr.io/example/app-0:2.0.0")

    with caplog.at_level(logging.INFO, logger="farm.fleet.planner"):
        _, second = plan_catalog(fleet_env.storage, catalog.root)
    assert not _copied(caplog)
    changed = [row for row in _rows(fleet_env, first.run_id) if row.application == "app-0"]
    assert len(second.queued) == 1  # app-0's targets, one job
    assert second.cached == second.total - len(changed)


def test_a_rerun_whose_earlier_rows_name_other_request_packs_records_the_snapshots_packs(
    fleet_env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _render_all(fleet_env, first.queued)
    packs = {row.application: row.request_pack for row in _rows(fleet_env, first.run_id)}
    with session_scope(fleet_env.storage.sessions) as session:  # a pack written by another farm
        session.execute(
            update(models.RenderTarget)
            .where(models.RenderTarget.run_id == first.run_id, models.RenderTarget.application == "app-1")
            .values(request_pack="0" * 64)
        )

    with caplog.at_level(logging.INFO, logger="farm.fleet.planner"):
        _, second = plan_catalog(fleet_env.storage, catalog.root)
    assert not _copied(caplog)
    assert (second.queued, second.cached) == ([], second.total)
    assert {row.application: row.request_pack for row in _rows(fleet_env, second.run_id)} == packs
