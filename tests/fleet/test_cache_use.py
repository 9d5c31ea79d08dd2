"""A cache hit is served only when its output is really there and bound to its action, on SQLite
and PostgreSQL: a deleted output blob or a poisoned cache entry makes its target render again."""

from __future__ import annotations

from sqlalchemy import update

from farm.fleet.jobs import run_job
from farm.fleet.progress import run_summary
from farm.fleet.service import plan_catalog
from farm.store import models
from farm.store.db import session_scope
from farm.store.runs import targets_of_run
from farm.store.snapshots import manifest_references

from .conftest import Catalog, FleetEnv


def _render_all(env: FleetEnv, queued: list[tuple[str, str]]) -> None:
    for job_id, key in queued:
        run_job(env.storage, env.signer, job_id, worker="w1", expected_batch_key=key)


def _targets(env: FleetEnv, run_id: str) -> dict[tuple[str, str], models.RenderTarget]:
    with session_scope(env.storage.sessions) as session:
        return {(t.application, t.cluster_profile): t for t in targets_of_run(session, run_id)}


def test_a_cached_target_whose_output_blob_was_deleted_renders_again(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _render_all(fleet_env, first.queued)
    rendered = _targets(fleet_env, first.run_id)
    victim = next(iter(rendered.values()))
    shared = [key for key, t in rendered.items() if t.output_digest == victim.output_digest]
    fleet_env.storage.objects.delete(victim.output_digest)

    _, second = plan_catalog(fleet_env.storage, catalog.root)
    assert second.cached == second.total - len(shared)
    _render_all(fleet_env, second.queued)
    again = _targets(fleet_env, second.run_id)
    assert {key for key, t in again.items() if t.state == "succeeded"} == set(shared)
    assert fleet_env.storage.objects.exists(victim.output_digest)
    assert run_summary(fleet_env.storage, second.run_id).state == "completed"


def test_a_catalog_run_again_after_its_object_store_was_lost_stores_its_snapshot_again_and_renders(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    """The recorded snapshot's documents and request packs went with the store: planning the same
    catalog stores them again, so its targets render instead of failing as forged requests."""
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _render_all(fleet_env, first.queued)
    objects = fleet_env.storage.objects
    for blob in list(objects.list_blobs()):
        objects.delete(blob.digest)
    assert list(objects.list_blobs()) == []

    snapshot, second = plan_catalog(fleet_env.storage, catalog.root)
    assert second.snapshot_digest == first.snapshot_digest and second.cached == 0
    _render_all(fleet_env, second.queued)
    again = _targets(fleet_env, second.run_id)
    assert {t.state for t in again.values()} == {"succeeded"}
    assert run_summary(fleet_env.storage, second.run_id).state == "completed"
    assert objects.missing(manifest_references(snapshot.manifest)) == set()


def test_a_cache_entry_pointed_at_another_applications_output_is_not_served(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _render_all(fleet_env, first.queued)
    rendered = _targets(fleet_env, first.run_id)
    (victim_key, victim), other = sorted(rendered.items())[0], rendered[sorted(rendered)[-1]]
    assert victim.application != other.application
    with session_scope(fleet_env.storage.sessions) as session:
        session.execute(
            update(models.ActionCacheEntry)
            .where(models.ActionCacheEntry.action_key == victim.action_key)
            .values(output_digest=other.output_digest)
        )

    _, second = plan_catalog(fleet_env.storage, catalog.root)
    assert second.cached == second.total - 1
    _render_all(fleet_env, second.queued)
    again = _targets(fleet_env, second.run_id)
    assert again[victim_key].state == "succeeded"
    assert again[victim_key].output_digest == victim.output_digest


def test_a_symlinked_app_yaml_fails_its_own_targets_and_every_other_target_renders(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    secret = catalog.root.parent / "secret.yaml"
    secret.write_text("password: hunter2\n")
    app_yaml = catalog.root / "applications" / "app-1" / "app.yaml"
    app_yaml.unlink()
    app_yaml.symlink_to(secret)
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    _render_all(fleet_env, planned.queued)
    for (application, _), target in _targets(fleet_env, planned.run_id).items():
        if application == "app-1":
            assert target.state in ("failed", "cached") and target.output_digest is None
            # the file is never read: the target fails on the empty document it stands for
            assert "app-1/app.yaml" in (target.error_message or "")
            assert "hunter2" not in (target.error_message or "")
        else:
            assert target.state == "succeeded" and target.output_digest
