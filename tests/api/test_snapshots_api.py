"""Catalog snapshots and the diff of two, which is the plan `farm plan` makes (one code path)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from fleet.conftest import make_catalog

from api.conftest import FinishedRun
from farm.catalog import load_catalog
from farm.fleet.preview import Plan, preview, run_baseline


@pytest.fixture
def changed(finished_run: FinishedRun) -> tuple[str, Plan]:
    """The finished run's snapshot, and `farm plan`'s plan (against that run) of a changed catalog:
    app-0's image and cluster-b's ingress class edited. The plan records the new snapshot."""
    catalog = make_catalog(finished_run.catalog_root, apps=0, clusters=())
    catalog.write_app("app-0", image="ghcr.io/example/app:v2.0.0")
    catalog.write_cluster("cluster-b", ingress_class="traefik")
    storage = finished_run.env.storage
    plan = preview(
        storage,
        load_catalog(finished_run.catalog_root),
        run_baseline(storage, finished_run.run_id),
        source="tests",
    )
    from farm.store.models import FleetRun

    with storage.sessions() as session:
        old = session.get(FleetRun, finished_run.run_id).snapshot_digest
    return old, plan


def test_the_snapshots_list_names_each_fleet_newest_first_with_its_runs(
    client: TestClient, changed: tuple[str, Plan]
) -> None:
    old, plan = changed
    listed = client.get("/api/snapshots").json()
    assert [(s["digest"], s["name"], s["runs"]) for s in listed] == [
        (plan.snapshot_digest, "test-fleet", 0),
        (old, "test-fleet", 1),
    ]
    assert [s["digest"] for s in client.get("/api/snapshots", params={"limit": 1}).json()] == [
        plan.snapshot_digest
    ]


def test_one_snapshot_lists_its_applications_clusters_and_targets(
    client: TestClient, finished_run: FinishedRun
) -> None:
    digest = client.get(f"/api/runs/{finished_run.run_id}").json()["snapshot"]
    body = client.get(f"/api/snapshots/{digest}").json()
    assert sorted(body["applications"]) == ["app-0", "app-1", "app-2"]
    assert sorted(body["clusters"]) == ["cluster-a", "cluster-b"] and body["profiles"] == {}
    assert len(body["targets"]) == 6 and all(len(t["request_digest"]) == 64 for t in body["targets"])


def test_the_diff_of_two_snapshots_is_farm_plans_plan(client: TestClient, changed: tuple[str, Plan]) -> None:
    old, plan = changed
    diff = client.get(f"/api/snapshots/{old}/diff/{plan.snapshot_digest}").json()
    assert diff["applications"] == {"added": [], "removed": [], "changed": ["app-0"]}
    assert diff["clusters"] == {"added": [], "removed": [], "changed": ["cluster-b"]}
    affected = {(t["application"], t["cluster"]): t["causes"] for t in diff["affected"]}
    planned = {(t.application, t.cluster): [str(c) for c in t.causes] for t in plan.render}
    assert affected == planned
    assert set(affected) == {
        ("app-0", "cluster-a"),
        ("app-0", "cluster-b"),
        ("app-1", "cluster-b"),
        ("app-2", "cluster-b"),
    }
    assert affected[("app-0", "cluster-b")] == ["application changed (app.yaml)", "ClusterProfile changed"]
    assert diff["causes"] == plan.as_json()["causes"]
    assert diff["unchanged"] == 6 - len(affected) and diff["removed"] == []


def test_the_diff_of_two_snapshots_lists_each_changed_document_with_its_keys_old_and_new(
    client: TestClient, changed: tuple[str, Plan]
) -> None:
    old, plan = changed
    diff = client.get(f"/api/snapshots/{old}/diff/{plan.snapshot_digest}").json()
    documents = {d["path"]: d for d in diff["documents"]}
    assert set(documents) == {"applications/app-0/app.yaml", "clusters/cluster-b.yaml"}
    assert documents["clusters/cluster-b.yaml"]["kind"] == "changed"
    [ingress] = documents["clusters/cluster-b.yaml"]["keys"]
    assert ingress["path"].endswith(".ingressClassName") and ingress["kind"] == "changed"
    assert (ingress["old"], ingress["new"]) == ("nginx", "traefik")
    [image] = documents["applications/app-0/app.yaml"]["keys"]
    assert image["path"].endswith(".image") and image["new"] == "ghcr.io/example/app:v2.0.0"
    assert diff["documents"] == plan.as_json()["documents"]
    page = client.get(f"/snapshots/{old}/diff/{plan.snapshot_digest}").text
    assert '<details class="document" data-path="clusters/cluster-b.yaml" open>' in page
    assert f"<code>{ingress['path']}</code>" in page and '<code>"traefik"</code>' in page


def test_a_snapshot_diffed_with_itself_affects_nothing(client: TestClient, changed: tuple[str, Plan]) -> None:
    old, _ = changed
    diff = client.get(f"/api/snapshots/{old}/diff/{old}").json()
    assert diff["affected"] == [] and diff["unchanged"] == 6 and diff["causes"] == {}


def test_unknown_snapshots_are_404_and_unknown_parameters_422(
    client: TestClient, changed: tuple[str, Plan]
) -> None:
    old, _ = changed
    unknown = "0" * 64
    assert client.get(f"/api/snapshots/{unknown}").json()["error"]["status"] == 404
    response = client.get(f"/api/snapshots/{old}/diff/{unknown}")
    assert response.status_code == 404 and unknown in response.json()["error"]["detail"]
    assert client.get(f"/api/snapshots/{unknown}/diff/{old}").status_code == 404
    assert client.get("/api/snapshots", params={"limt": 2}).status_code == 422
    assert client.get(f"/api/snapshots/{old}/diff/{old}", params={"path": "/etc"}).status_code == 422


def test_the_snapshot_pages_link_the_diff_which_names_changes_and_causes(
    client: TestClient, changed: tuple[str, Plan]
) -> None:
    old, plan = changed
    listing = client.get("/snapshots").text
    assert f'href="/snapshots/{old}/diff/{plan.snapshot_digest}"' in listing
    page = client.get(f"/snapshots/{old}/diff/{plan.snapshot_digest}").text
    assert '<b class="affected-count">4</b>' in page and "changed app-0" in page
    assert "ClusterProfile changed" in page
    assert "app-2" in client.get(f"/snapshots/{old}").text
    assert client.get("/snapshots/nope", headers={"accept": "text/html"}).status_code == 404
