"""A run copies the rows of the targets the fleet's last complete run answered and that did not
change since (the same request pack and request), in one statement, on SQLite and PostgreSQL:
each ``cached`` with the output the action cache holds for its key now, exactly the rows planning
target by target records. Whatever the cache or the store no longer answers, or a row that is not
this snapshot's target and request, is planned one by one."""

from __future__ import annotations

import logging
import re

import pytest
from sqlalchemy import delete, select, update

from farm.fleet.jobs import run_job
from farm.fleet.progress import run_summary
from farm.fleet.service import plan_catalog
from farm.store import models
from farm.store.db import session_scope

from .conftest import Catalog, FleetEnv

COPIED = re.compile(r"(\d+) of its (\d+) targets answered as in run \w+( \(the catalog is unchanged\))?")


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


def _copied(caplog: pytest.LogCaptureFixture) -> tuple[int, int, bool] | None:
    """(copied, total, whether the catalog was unchanged) from the planner's log, None if none."""
    for record in caplog.records:
        found = COPIED.search(record.getMessage())
        if found:
            return int(found.group(1)), int(found.group(2)), found.group(3) is not None
    return None


def _plan(env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture):  # noqa: ANN202 - a PlannedRun
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="farm.fleet.planner"):
        _, planned = plan_catalog(env.storage, catalog.root)
    return planned


def _rendered_run(
    env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> tuple[str, list[models.RenderTarget]]:
    """The catalog's first run, every job rendered: its id and its rows."""
    planned = _plan(env, catalog, caplog)
    _render_all(env, planned.queued)
    return planned.run_id, _rows(env, planned.run_id)


def test_a_rerun_of_an_unchanged_catalog_records_every_target_cached_with_its_output(
    fleet_env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    first, rendered = _rendered_run(fleet_env, catalog, caplog)
    assert {row.state for row in rendered} == {"succeeded"}

    second = _plan(fleet_env, catalog, caplog)
    assert _copied(caplog) == (len(rendered), len(rendered), True)
    assert (second.queued, second.cached, second.total) == ([], len(rendered), len(rendered))
    again = _rows(fleet_env, second.run_id)
    assert [_what_a_row_says(row) for row in again] == [_what_a_row_says(row) for row in rendered]
    assert {(row.state, row.job_id, row.error_code, row.error_message) for row in again} == {
        ("cached", None, None, None)
    }
    _assert_ids_as_new_ids_makes_them(again, after=rendered)
    assert {row.run_id for row in again} == {second.run_id}
    assert all(row.created_at is not None and row.finished_at is not None for row in again)
    summary = run_summary(fleet_env.storage, second.run_id)
    assert summary.state == "completed"
    assert summary.counts == {"cached": len(rendered)}

    third = _plan(fleet_env, catalog, caplog)  # a copy of the copy
    assert _copied(caplog) == (len(rendered), len(rendered), True)
    copied_again = _rows(fleet_env, third.run_id)
    assert [_what_a_row_says(row) for row in copied_again] == [_what_a_row_says(row) for row in rendered]
    _assert_ids_as_new_ids_makes_them(copied_again, after=again)


def _assert_ids_as_new_ids_makes_them(
    rows: list[models.RenderTarget], after: list[models.RenderTarget]
) -> None:
    """A copied run's ids: 32 hex digits, one prefix, distinct, later than the earlier run's, and
    in the earlier run's order of its targets."""
    ids = [row.id for row in rows]
    assert all(re.fullmatch(r"[0-9a-f]{32}", id_) for id_ in ids)
    assert len({id_[:24] for id_ in ids}) == 1
    assert len(set(ids)) == len(ids)
    assert min(ids) > max(row.id for row in after)  # UUIDv7s: later than the earlier run's
    by_target = {(row.application, row.cluster_profile, row.selection): row.id for row in after}
    earlier_order = sorted(by_target, key=by_target.__getitem__)
    copied = {(row.application, row.cluster_profile, row.selection): row.id for row in rows}
    assert sorted(copied, key=copied.__getitem__) == earlier_order


def test_a_rerun_whose_cache_entry_was_removed_copies_the_rest_and_renders_that_target(
    fleet_env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    _, rendered = _rendered_run(fleet_env, catalog, caplog)
    victim = rendered[0]
    with session_scope(fleet_env.storage.sessions) as session:
        session.execute(
            delete(models.ActionCacheEntry).where(models.ActionCacheEntry.action_key == victim.action_key)
        )

    second = _plan(fleet_env, catalog, caplog)
    assert _copied(caplog) == (second.total - 1, second.total, True)
    assert (second.cached, len(second.queued)) == (second.total - 1, 1)
    assert len(_rows(fleet_env, second.run_id)) == second.total
    _render_all(fleet_env, second.queued)
    again = {(row.application, row.cluster_profile): row for row in _rows(fleet_env, second.run_id)}
    rendered = again[(victim.application, victim.cluster_profile)]
    assert (rendered.state, rendered.output_digest) == ("succeeded", victim.output_digest)
    assert run_summary(fleet_env.storage, second.run_id).state == "completed"


def test_a_rerun_after_a_failure_copies_the_answers_and_serves_the_failure_from_its_cache(
    fleet_env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    catalog.break_app("app-2")
    first, rows = _rendered_run(fleet_env, catalog, caplog)
    failed = [row for row in rows if row.state == "failed"]
    assert failed and {row.application for row in failed} == {"app-2"}
    assert run_summary(fleet_env.storage, first).state == "completed_with_failures"

    second = _plan(fleet_env, catalog, caplog)
    assert _copied(caplog) == (len(rows) - len(failed), len(rows), True)
    assert (second.queued, second.cached) == ([], second.total)
    again = {(row.application, row.cluster_profile): row for row in _rows(fleet_env, second.run_id)}
    for row in failed:  # a cached failure: its code and message, no output
        served = again[(row.application, row.cluster_profile)]
        assert (served.state, served.error_code, served.error_message) == (
            "cached",
            row.error_code,
            row.error_message,
        )
    summary = run_summary(fleet_env.storage, second.run_id)
    assert summary.state == "completed_with_failures"
    assert summary.counts == {"cached": len(rows) - len(failed), "cached_failure": len(failed)}


def test_a_run_after_one_application_changed_copies_the_others_and_renders_its_targets(
    fleet_env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    first, rendered = _rendered_run(fleet_env, catalog, caplog)
    changed = [row for row in rendered if row.application == "app-0"]
    catalog.write_app("app-0", image="ghcr.io/example/app-0:2.0.0")

    second = _plan(fleet_env, catalog, caplog)
    assert _copied(caplog) == (len(rendered) - len(changed), len(rendered), False)
    assert len(second.queued) == 1  # app-0's targets, one job
    assert (second.cached, second.total) == (len(rendered) - len(changed), len(rendered))
    _render_all(fleet_env, second.queued)
    again = _rows(fleet_env, second.run_id)
    assert [_what_a_row_says(row) for row in again if row.application != "app-0"] == [
        _what_a_row_says(row) for row in rendered if row.application != "app-0"
    ]
    renders = [row for row in again if row.application == "app-0"]
    assert {row.state for row in renders} == {"succeeded"}
    assert {row.request_digest for row in renders}.isdisjoint({row.request_digest for row in changed})
    assert run_summary(fleet_env.storage, second.run_id).state == "completed"


def test_a_rerun_whose_earlier_rows_name_other_request_packs_plans_those_targets_one_by_one(
    fleet_env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    first, rendered = _rendered_run(fleet_env, catalog, caplog)
    packs = {row.application: row.request_pack for row in rendered}
    with session_scope(fleet_env.storage.sessions) as session:  # a pack written by another farm
        session.execute(
            update(models.RenderTarget)
            .where(models.RenderTarget.run_id == first, models.RenderTarget.application == "app-1")
            .values(request_pack="0" * 64)
        )

    second = _plan(fleet_env, catalog, caplog)
    other = sum(1 for row in rendered if row.application == "app-1")
    assert _copied(caplog) == (len(rendered) - other, len(rendered), True)
    assert (second.queued, second.cached) == ([], second.total)
    assert {row.application: row.request_pack for row in _rows(fleet_env, second.run_id)} == packs


def test_a_copied_row_whose_request_is_not_the_snapshots_leaves_nothing_copied(
    fleet_env: FleetEnv, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    # a pack holds an application's requests, the snapshot's manifest which target has which:
    # a row naming another request of the same pack (as after two ClusterProfiles traded names)
    # must not be copied
    first, rendered = _rendered_run(fleet_env, catalog, caplog)
    one, two = [row for row in rendered if row.application == "app-1"][:2]
    with session_scope(fleet_env.storage.sessions) as session:
        for row, other in ((one, two), (two, one)):
            session.execute(
                update(models.RenderTarget)
                .where(models.RenderTarget.id == row.id)
                .values(request_digest=other.request_digest, action_key=other.action_key)
            )
    catalog.write_app("app-0", image="ghcr.io/example/app-0:2.0.0")  # another snapshot

    second = _plan(fleet_env, catalog, caplog)
    assert _copied(caplog) is None
    again = {(row.application, row.cluster_profile): row for row in _rows(fleet_env, second.run_id)}
    for row in (one, two):
        assert again[(row.application, row.cluster_profile)].request_digest == row.request_digest
    assert len(again) == len(rendered)
