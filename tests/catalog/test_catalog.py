"""Catalog loading: strict fleet.yaml, every problem with its file, content-only digests."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from farm.catalog import CatalogError, load_catalog

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"


def test_example_catalog_loads_with_its_targets() -> None:
    snapshot = load_catalog(EXAMPLE)
    assert snapshot.name == "example"
    assert len(snapshot.applications) >= 12 and len(snapshot.clusters) >= 3
    assert snapshot.problems == ()
    pairs = {(t.application, t.cluster) for t in snapshot.targets}
    assert ("storefront", "staging-traefik") in pairs
    assert ("node-exporter", "staging-traefik") not in pairs  # targets leave some pairs out
    assert ("node-exporter", "prod-nginx") in pairs


def test_digest_covers_content_only(catalog: Path, tmp_path: Path) -> None:
    first = load_catalog(catalog).digest
    assert load_catalog(EXAMPLE).digest == first  # another path, same content
    app = catalog / "applications" / "storefront" / "app.yaml"
    os.utime(app, (1, 1))
    assert load_catalog(catalog).digest == first  # times do not count
    app.write_bytes(app.read_bytes().replace(b"v2.4.1", b"v2.4.2"))
    assert load_catalog(catalog).digest != first


def test_fleet_errors_are_all_reported_with_the_file(catalog: Path) -> None:
    (catalog / "fleet.yaml").write_text(
        "apiVersion: farm.dev/v1\nkind: Fleet\nmetadata: {name: x}\nspec:\n  targets: []\n  colour: red\n"
    )
    with pytest.raises(CatalogError) as caught:
        load_catalog(catalog)
    assert caught.value.problems == ["fleet.yaml: spec.colour: unknown field"]
    (catalog / "fleet.yaml").write_text(
        "apiVersion: farm.dev/v1\nkind: Fleet\nmetadata: {name: x}\nspec:\n  targets: []\n"
    )
    with pytest.raises(CatalogError) as caught:
        load_catalog(catalog)
    assert caught.value.problems == [
        "fleet.yaml: apiVersion must be 'farm.dev/v1alpha1', got 'farm.dev/v1'",
        "fleet.yaml: spec.targets: at least one target rule is required",
    ]


def test_broken_documents_become_problems_not_a_failed_load(catalog: Path) -> None:
    (catalog / "applications" / "search" / "app.yaml").write_text(
        "apiVersion: launcher.gokure.dev/v1alpha1\nkind: App\n"
    )
    (catalog / "clusters" / "staging-traefik.yaml").write_text(
        "apiVersion: launcher.gokure.dev/v1alpha1\nkind: ClusterProfile\nmetadata: {name: staging-traefik}\nspec: {gitops: {}}\n"
    )
    snapshot = load_catalog(catalog)
    files = {p.file: p.message for p in snapshot.problems}
    assert files == {
        "applications/search/app.yaml": "applications/search/app.yaml: kind must be 'Application', got 'App'",
        "clusters/staging-traefik.yaml": "clusters/staging-traefik.yaml: spec.gitops: field not found in type ClusterProfile",
    }
    assert any(t.application == "storefront" for t in snapshot.targets)


def test_application_name_must_match_its_folder(catalog: Path) -> None:
    shutil.move(catalog / "applications" / "docs-site", catalog / "applications" / "docs")
    snapshot = load_catalog(catalog)
    assert [p.message for p in snapshot.problems] == [
        "applications/docs/app.yaml: metadata.name 'docs-site' must match its folder name 'docs'"
    ]


def test_exclusions_and_per_cluster_values_layered_over_the_shared_ones(catalog: Path) -> None:
    (catalog / "fleet.yaml").write_text(
        "apiVersion: farm.dev/v1alpha1\nkind: Fleet\nmetadata: {name: x}\nspec:\n  targets:\n"
        "    - applications: ['greeter']\n      clusters: ['*']\n      exclude: [{cluster: staging-*}]\n"
    )
    greeter = catalog / "applications" / "greeter"
    (greeter / "values").mkdir()
    (greeter / "values" / "prod-nginx.yaml").write_text("replicas: 5\n")
    (greeter / "values.yaml").write_text("replicas: 3\n")
    snapshot = load_catalog(catalog)
    assert [(t.application, t.cluster) for t in snapshot.targets] == [
        ("greeter", "prod-gateway"),
        ("greeter", "prod-nginx"),
    ]
    entry = snapshot.application("greeter")
    assert [(layer.source, layer.data) for layer in entry.values_layers("prod-nginx")] == [
        ("greeter/values.yaml", b"replicas: 3\n"),
        ("greeter/values/prod-nginx.yaml", b"replicas: 5\n"),
    ]
    assert [layer.data for layer in entry.values_layers("prod-gateway")] == [b"replicas: 3\n"]
    requests = {t.target.cluster: t.request for t in snapshot.target_requests}
    assert requests["prod-nginx"].values == entry.values_layers("prod-nginx")
    assert requests["prod-nginx"].digest != requests["prod-gateway"].digest


def test_missing_fleet_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="no fleet.yaml found"):
        load_catalog(tmp_path)
