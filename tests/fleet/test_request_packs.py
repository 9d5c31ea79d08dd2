"""Render requests are stored packed, one blob per application of a snapshot, on SQLite and
PostgreSQL: a snapshot writes what it does not share with the stored ones, a no-change re-run
writes nothing, gc keeps what a snapshot or a row names, and rows written before packs still read
their request's own blob; the same on S3."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from sqlalchemy import update

from farm.catalog import load_catalog
from farm.core.request import packed_digests
from farm.fleet.jobs import run_job
from farm.fleet.preview import preview
from farm.fleet.service import plan_catalog
from farm.store import audit, models
from farm.store.db import session_scope
from farm.store.objects import S3ObjectStore
from farm.store.runs import TargetRow, targets_of_run

from .conftest import Catalog, FleetEnv


def _rows(env: FleetEnv, run_id: str) -> list[TargetRow]:
    with session_scope(env.storage.sessions) as session:
        return targets_of_run(session, run_id)


def _stored(env: FleetEnv) -> set[str]:
    return {blob.digest for blob in env.storage.objects.list_blobs()}


def _run_all(env: FleetEnv, queued: list[tuple[str, str]]) -> None:
    for job_id, key in queued:
        run_job(env.storage, env.signer, job_id, worker="w1", expected_batch_key=key)


def test_a_snapshot_stores_one_request_pack_per_application_holding_its_targets_requests(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    packs: dict[str, set[str | None]] = {}
    requests: dict[str | None, set[str | None]] = {}
    for row in _rows(fleet_env, planned.run_id):
        packs.setdefault(row.application, set()).add(row.request_pack)
        requests.setdefault(row.request_pack, set()).add(row.request_digest)
    assert sorted(packs) == ["app-0", "app-1", "app-2", "app-3"]
    assert all(len(named) == 1 for named in packs.values())  # one pack per application
    assert len(requests) == 4
    for pack, digests in requests.items():
        assert pack is not None
        assert set(packed_digests(fleet_env.storage.objects.get(pack))) == digests
        assert pack in _stored(fleet_env)
        assert digests.isdisjoint(_stored(fleet_env))  # no request is a blob of its own any more


def test_an_edited_application_writes_one_new_pack_and_shares_every_other(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    before = _stored(fleet_env)
    catalog.write_app("app-1", image="ghcr.io/example/app:v2.0.0")
    _, second = plan_catalog(fleet_env.storage, catalog.root)
    old = {row.application: row.request_pack for row in _rows(fleet_env, first.run_id)}
    new = {row.application: row.request_pack for row in _rows(fleet_env, second.run_id)}
    assert [app for app in sorted(new) if new[app] != old[app]] == ["app-1"]
    written = _stored(fleet_env) - before
    snapshot = load_catalog(catalog.root)
    assert written == {
        snapshot.application("app-1").document_digests["app"],
        new["app-1"],
        snapshot.digest,  # the manifest's digest is the snapshot's
    }


def test_a_no_change_re_run_stores_no_blob(fleet_env: FleetEnv, catalog: Catalog) -> None:
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _run_all(fleet_env, first.queued)
    stored = {blob.digest: blob.modified for blob in fleet_env.storage.objects.list_blobs()}
    _, again = plan_catalog(fleet_env.storage, catalog.root)
    assert again.cached == again.total and again.queued == []
    assert {blob.digest: blob.modified for blob in fleet_env.storage.objects.list_blobs()} == stored


def test_gc_keeps_the_request_packs_of_a_snapshot_only_a_plan_stored(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    snapshot = load_catalog(catalog.root)
    preview(fleet_env.storage, snapshot, None, source="tests")  # farm plan: a snapshot, no run
    with session_scope(fleet_env.storage.sessions) as session:
        report = audit.sweep(session, fleet_env.storage.objects, dry_run=False, grace=timedelta(0))
    assert report.removed == [] and report.missing == {}
    assert set(snapshot.request_pack_digests.values()) <= _stored(fleet_env)
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    _run_all(fleet_env, planned.queued)
    assert {row.state for row in _rows(fleet_env, planned.run_id)} == {"succeeded"}


def test_a_row_written_before_packs_renders_from_its_requests_own_blob_which_gc_keeps(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    snapshot = load_catalog(catalog.root)
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    victim = next(row for row in _rows(fleet_env, planned.run_id) if row.application == "app-2")
    request = next(
        tr.request for tr in snapshot.target_requests if tr.request.digest == victim.request_digest
    )
    assert fleet_env.storage.objects.put(request.descriptor_bytes) == victim.request_digest
    with session_scope(fleet_env.storage.sessions) as session:
        session.execute(
            update(models.RenderTarget)
            .where(models.RenderTarget.id == victim.target_id)
            .values(request_pack=None)
        )
        report = audit.sweep(session, fleet_env.storage.objects, dry_run=False, grace=timedelta(0))
    assert victim.request_digest not in report.removed and report.missing == {}
    _run_all(fleet_env, planned.queued)
    rows = {row.target_id: row for row in _rows(fleet_env, planned.run_id)}
    assert (rows[victim.target_id].state, rows[victim.target_id].request_pack) == ("succeeded", None)
    assert {row.state for row in rows.values()} == {"succeeded"}


def test_a_fleet_renders_and_re_runs_from_request_packs_in_s3(
    fleet_env: FleetEnv, catalog: Catalog, s3_store: S3ObjectStore
) -> None:
    env = dataclasses.replace(fleet_env, storage=dataclasses.replace(fleet_env.storage, objects=s3_store))
    _, first = plan_catalog(env.storage, catalog.root)
    _run_all(env, first.queued)
    rows = _rows(env, first.run_id)
    assert {row.state for row in rows} == {"succeeded"}
    assert {row.request_pack for row in rows} <= _stored(env)
    _, again = plan_catalog(env.storage, catalog.root)
    assert again.cached == again.total == len(rows) and again.queued == []
