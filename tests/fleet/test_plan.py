"""``farm plan`` on SQLite and PostgreSQL: after each kind of catalog change it names exactly the
targets that would render and the cause read off their render requests, it agrees target for
target with the run that follows, it writes nothing but the snapshot, and it exits 0, 2 or 1."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import delete, func, select, update
from typer.testing import CliRunner

from farm.catalog import load_catalog
from farm.cli import app as cli
from farm.core.request import RenderRequest
from farm.fleet import preview as pv
from farm.fleet.jobs import run_job
from farm.fleet.service import plan_catalog
from farm.store import models
from farm.store.db import session_scope
from farm.store.runs import targets_of_run

from .conftest import FLEET, Catalog, FleetEnv, make_catalog

PACKAGE = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Package
metadata:
  name: app-3
  version: 1.0.0
spec:
  parameters:
    - name: replicas
      type: integer
      default: {replicas}
"""

PACKAGED_APP = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: app-3
  namespace: shop
spec:
  components:
    - name: app-3
      type: webservice
      properties:
        image: ghcr.io/example/app:v1.0.0
        replicas: ${replicas}
        port: 8080
"""


def _package_app_3(catalog: Catalog, replicas: int = 2) -> None:
    """app-3 becomes a packaged application with a shared and a per-cluster values file."""
    folder = catalog.root / "applications" / "app-3"
    (folder / "app.yaml").write_text(PACKAGED_APP)
    (folder / "kurel.yaml").write_text(PACKAGE.format(replicas=replicas))
    (folder / "values.yaml").write_text("replicas: 3\n")
    (folder / "values").mkdir(exist_ok=True)
    (folder / "values" / "cluster-a.yaml").write_text("replicas: 4\n")


def _run(env: FleetEnv, catalog: Catalog) -> str:
    _, planned = plan_catalog(env.storage, catalog.root)
    for job_id, key in planned.queued:
        run_job(env.storage, env.signer, job_id, worker="w1", expected_batch_key=key)
    return planned.run_id


def _plan(env: FleetEnv, catalog: Catalog) -> pv.Plan:
    snapshot = load_catalog(catalog.root)
    run_id = pv.latest_run_of_fleet(env.storage, snapshot.name)
    baseline = pv.run_baseline(env.storage, run_id) if run_id else None
    return pv.preview(env.storage, snapshot, baseline, source="tests")


def _causes(plan: pv.Plan) -> dict[tuple[str, str], list[str]]:
    return {(t.application, t.cluster): [str(c) for c in t.causes] for t in plan.render}


def _rendered(env: FleetEnv, run_id: str) -> set[tuple[str, str]]:
    with session_scope(env.storage.sessions) as session:
        return {
            (t.application, t.cluster_profile)
            for t in targets_of_run(session, run_id)
            if t.state in ("succeeded", "failed")
        }


def _all_targets(cluster_excluded: str = "cluster-c") -> set[tuple[str, str]]:
    every = {(f"app-{i}", c) for i in range(4) for c in ("cluster-a", "cluster-b", "cluster-c")}
    return every - {("app-0", cluster_excluded)}


def test_a_plan_with_no_earlier_run_adds_every_target(fleet_env: FleetEnv, catalog: Catalog) -> None:
    plan = _plan(fleet_env, catalog)
    assert plan.against == "nothing"
    assert _causes(plan) == {target: ["target added"] for target in _all_targets()}
    assert (plan.total, plan.cached_outputs, plan.cached_failures) == (11, 0, 0)


def test_a_plan_of_an_unchanged_catalog_renders_nothing(fleet_env: FleetEnv, catalog: Catalog) -> None:
    run_id = _run(fleet_env, catalog)
    plan = _plan(fleet_env, catalog)
    assert plan.against == f"run {run_id}"
    assert plan.render == [] and plan.removed == []
    assert plan.cached_outputs == 11


def test_an_application_change_names_its_targets_and_app_yaml(fleet_env: FleetEnv, catalog: Catalog) -> None:
    _run(fleet_env, catalog)
    catalog.write_app("app-1", image="ghcr.io/example/app:v2.0.0")
    plan = _plan(fleet_env, catalog)
    assert _causes(plan) == {
        ("app-1", cluster): ["application changed (app.yaml)"]
        for cluster in ("cluster-a", "cluster-b", "cluster-c")
    }
    assert plan.cached_outputs == 8


def test_a_cluster_profile_change_names_exactly_its_targets(fleet_env: FleetEnv, catalog: Catalog) -> None:
    _run(fleet_env, catalog)
    catalog.write_cluster("cluster-b", ingress_class="traefik")
    plan = _plan(fleet_env, catalog)
    assert _causes(plan) == {(f"app-{i}", "cluster-b"): ["ClusterProfile changed"] for i in range(4)}


def test_a_package_change_is_an_application_change_naming_kurel_yaml(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _package_app_3(catalog)
    _run(fleet_env, catalog)
    _package_app_3(catalog, replicas=5)
    plan = _plan(fleet_env, catalog)
    assert _causes(plan) == {
        ("app-3", cluster): ["application changed (kurel.yaml)"]
        for cluster in ("cluster-a", "cluster-b", "cluster-c")
    }


def test_a_values_change_names_the_values_file_and_only_the_targets_that_read_it(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _package_app_3(catalog)
    _run(fleet_env, catalog)
    (catalog.root / "applications" / "app-3" / "values" / "cluster-a.yaml").write_text("replicas: 6\n")
    plan = _plan(fleet_env, catalog)
    assert _causes(plan) == {("app-3", "cluster-a"): ["values changed (values/cluster-a.yaml)"]}
    (catalog.root / "applications" / "app-3" / "values.yaml").write_text("replicas: 1\n")
    plan = _plan(fleet_env, catalog)
    assert _causes(plan) == {
        ("app-3", "cluster-a"): ["values changed (values.yaml, values/cluster-a.yaml)"],
        ("app-3", "cluster-b"): ["values changed (values.yaml)"],
        ("app-3", "cluster-c"): ["values changed (values.yaml)"],
    }


def test_a_namespace_change_in_the_fleet_names_every_target(fleet_env: FleetEnv, catalog: Catalog) -> None:
    _run(fleet_env, catalog)
    (catalog.root / "fleet.yaml").write_text(
        FLEET.replace('clusters: ["*"]', 'clusters: ["*"]\n      namespace: moved')
    )
    plan = _plan(fleet_env, catalog)
    assert _causes(plan) == {target: ["namespace/flags changed"] for target in _all_targets()}


def test_a_selection_difference_in_two_requests_is_a_profile_selection_change() -> None:
    before = RenderRequest(app=b"a", cluster_profile=b"c").descriptor()
    after = RenderRequest(app=b"a", cluster_profile=b"c", selection="gold").descriptor()
    flags = RenderRequest(app=b"a", cluster_profile=b"c", sets=("replicas=2",)).descriptor()
    assert [str(c) for c in pv.request_causes(before, after)] == ["profile selection changed"]
    assert [str(c) for c in pv.request_causes(before, flags)] == ["namespace/flags changed"]
    assert pv.request_causes(before, before) == []


def test_a_new_core_version_with_an_empty_cache_is_named_core_version_changed(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    run_id = _run(fleet_env, catalog)
    with session_scope(fleet_env.storage.sessions) as session:  # as after an upgrade of the core
        session.execute(
            update(models.FleetRun).where(models.FleetRun.id == run_id).values(core_version="0.0.1+old")
        )
        session.execute(delete(models.ActionCacheEntry))
    plan = _plan(fleet_env, catalog)
    assert _causes(plan) == {target: ["core version changed"] for target in _all_targets()}


def test_added_and_removed_targets_are_named_and_removed_ones_render_nothing(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _run(fleet_env, catalog)
    catalog.write_app("app-4")
    (catalog.root / "clusters" / "cluster-c.yaml").unlink()
    plan = _plan(fleet_env, catalog)
    assert _causes(plan) == {("app-4", c): ["target added"] for c in ("cluster-a", "cluster-b")}
    assert plan.removed == [(f"app-{i}", "cluster-c") for i in range(1, 4)]
    assert plan.as_json()["causes"] == {"target added": 2, "target removed": 3}


def test_a_target_whose_key_is_cached_stays_cached_whatever_changed(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _run(fleet_env, catalog)
    catalog.write_app("app-1", image="ghcr.io/example/app:v2.0.0")
    _run(fleet_env, catalog)
    catalog.write_app("app-1")  # back to the first version: differs from the latest run, but cached
    plan = _plan(fleet_env, catalog)
    assert plan.render == [] and plan.cached_outputs == 11
    catalog.break_app("app-2")
    _run(fleet_env, catalog)
    plan = _plan(fleet_env, catalog)
    assert plan.render == [] and (plan.cached_outputs, plan.cached_failures) == (8, 3)


def test_plan_then_run_agree_target_for_target(fleet_env: FleetEnv, catalog: Catalog) -> None:
    _package_app_3(catalog)
    _run(fleet_env, catalog)
    catalog.write_app("app-1", image="ghcr.io/example/app:v2.0.0")
    catalog.write_cluster("cluster-a", ingress_class="traefik")
    (catalog.root / "applications" / "app-3" / "values" / "cluster-a.yaml").write_text("replicas: 6\n")
    catalog.write_app("app-9")
    catalog.break_app("app-2")
    plan = _plan(fleet_env, catalog)
    run_id = _run(fleet_env, catalog)
    assert {(t.application, t.cluster) for t in plan.render} == _rendered(fleet_env, run_id)
    changed_apps = {
        (app, c) for app in ("app-1", "app-2", "app-9") for c in ("cluster-a", "cluster-b", "cluster-c")
    }
    assert _rendered(fleet_env, run_id) == changed_apps | {("app-0", "cluster-a"), ("app-3", "cluster-a")}
    assert _plan(fleet_env, catalog).render == []


def test_a_plan_writes_the_snapshot_and_no_run_job_or_target(fleet_env: FleetEnv, catalog: Catalog) -> None:
    _run(fleet_env, catalog)
    catalog.write_app("app-1", image="ghcr.io/example/app:v2.0.0")

    def counts() -> list[int]:
        with session_scope(fleet_env.storage.sessions) as session:
            return [
                session.scalar(select(func.count()).select_from(model)) or 0
                for model in (models.FleetRun, models.RenderJob, models.RenderTarget, models.ActionCacheEntry)
            ]

    before = counts()
    plan = _plan(fleet_env, catalog)
    assert counts() == before
    with session_scope(fleet_env.storage.sessions) as session:
        assert session.get(models.CatalogSnapshot, plan.snapshot_digest) is not None


def test_a_plan_against_another_catalog_compares_their_requests(
    fleet_env: FleetEnv, catalog: Catalog, tmp_path: Path
) -> None:
    other = make_catalog(tmp_path / "other")
    _run(fleet_env, catalog)
    catalog.write_cluster("cluster-a", ingress_class="traefik")
    catalog.write_app("app-9")
    result = CliRunner().invoke(
        cli,
        ["plan", str(catalog.root), "--against-catalog", str(other.root), "--json"],
        env=fleet_env.environ(),
    )
    assert result.exit_code == 2, result.output
    payload = json.loads(result.stdout)
    assert payload["against"] == f"catalog {other.root}"
    assert payload["causes"] == {"ClusterProfile changed": 4, "target added": 3}
    assert payload["targets"]["cluster-a"]["app-9"] == ["target added"]
    assert payload["targets"]["cluster-a"]["app-2"] == ["ClusterProfile changed"]


def test_the_cli_exits_2_when_something_would_render_0_when_nothing_and_1_on_an_error(
    fleet_env: FleetEnv, catalog: Catalog, tmp_path: Path
) -> None:
    env = fleet_env.environ()
    first = CliRunner().invoke(cli, ["plan", str(catalog.root), "--json"], env=env)
    assert first.exit_code == 2, first.output
    payload = json.loads(first.stdout)
    assert (payload["render"], payload["causes"]) == (11, {"target added": 11})
    assert payload["targets"]["cluster-c"] == {f"app-{i}": ["target added"] for i in range(1, 4)}
    _run(fleet_env, catalog)
    unchanged = CliRunner().invoke(cli, ["plan", str(catalog.root)], env=env)
    assert unchanged.exit_code == 0, unchanged.output
    assert "would render 0 of 11 targets; 11 stay cached" in unchanged.stdout
    catalog.write_cluster("cluster-b", ingress_class="traefik")
    changed = CliRunner().invoke(cli, ["plan", str(catalog.root)], env=env)
    assert changed.exit_code == 2 and "ClusterProfile changed: 4" in changed.stdout, changed.output
    missing = CliRunner().invoke(cli, ["plan", str(catalog.root), "--against", "nope"], env=env)
    assert missing.exit_code == 1
    assert missing.stderr.strip() == (
        "Error: --against: run nope does not exist (give a run id, a unique prefix of one, or latest; "
        "farm runs lists them)"
    )
    nowhere = CliRunner().invoke(cli, ["plan", str(tmp_path / "absent")], env=env)
    assert nowhere.exit_code == 1 and nowhere.stderr.startswith("Error: "), nowhere.output
    assert "no fleet.yaml found" in nowhere.stderr and "Traceback" not in nowhere.output


def test_plan_verbose_lists_each_changed_document_with_the_keys_that_changed(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _run(fleet_env, catalog)
    catalog.write_cluster("cluster-b", ingress_class="traefik")
    result = CliRunner().invoke(cli, ["plan", str(catalog.root), "-v"], env=fleet_env.environ())
    assert result.exit_code == 2, result.output
    lines = result.stdout.splitlines()
    assert "  input documents changed: 1" in lines
    at = lines.index("    clusters/cluster-b.yaml (changed)")
    assert lines[at + 1].startswith("      spec.") and lines[at + 1].endswith(": nginx → traefik"), lines


def test_a_plan_lists_the_targets_the_catalog_loader_refuses_as_failing_and_exits_2(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _run(fleet_env, catalog)
    (catalog.root / "applications" / "app-empty").mkdir()  # a folder without app.yaml
    plan = _plan(fleet_env, catalog)
    refused = {(r.application, r.cluster): r.code for r in plan.refused}
    assert refused == {
        ("app-empty", c): "catalog.missing_file" for c in ("cluster-a", "cluster-b", "cluster-c")
    }
    assert plan.render == [] and plan.total == 14
    assert all("applications/app-empty/app.yaml" in r.message for r in plan.refused)
    result = CliRunner().invoke(cli, ["plan", str(catalog.root)], env=fleet_env.environ())
    assert result.exit_code == 2, result.output
    assert "would fail, refused by the catalog loader: 3" in result.stdout
    assert "app-empty/cluster-a: catalog.missing_file: applications/app-empty/app.yaml" in result.stdout
    payload = json.loads(
        CliRunner().invoke(cli, ["plan", str(catalog.root), "--json"], env=fleet_env.environ()).stdout
    )
    assert sorted((r["application"], r["cluster"], r["code"]) for r in payload["refused"]) == sorted(
        (app, cluster, code) for (app, cluster), code in refused.items()
    )
    # the run that follows fails exactly those targets, and renders nothing else
    next_run = _run(fleet_env, catalog)
    with session_scope(fleet_env.storage.sessions) as session:
        failed = {
            (t.application, t.cluster_profile): t.error_code
            for t in targets_of_run(session, next_run)
            if t.state == "failed"
        }
    assert failed == refused
