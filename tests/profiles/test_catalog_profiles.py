"""Declarations wired into the catalog: loaded at catalog load, selected per target rule."""

from __future__ import annotations

import shutil
from dataclasses import fields as dataclass_fields
from pathlib import Path

import pytest

from farm.catalog import CatalogError, load_catalog
from farm.core.request import RenderRequest
from farm.identity.canonical import canonical_json
from farm.profiles import parse_selection

EXAMPLE = Path(__file__).parents[2] / "examples/fleet"

DECLARATION = """apiVersion: farm.dev/v1alpha1
kind: ConfigurationProfile
metadata: {name: ingress-mode}
spec:
  clusterProfile: prod-nginx
  default: nginx
  values:
    - name: nginx
      capabilities:
        expose: {rendering: {controllerType: ingress, ingressClassName: nginx}}
    - name: gateway
      capabilities:
        expose: {rendering: {controllerType: gateway, ingressClassName: public}}
"""


def catalog_with(tmp_path: Path, declarations: dict[str, str], rule_profile: str | None = None) -> Path:
    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, root)
    shutil.rmtree(root / "profiles")  # the example's own declaration; each test brings its own
    (root / "profiles").mkdir()
    for name, text in declarations.items():
        (root / "profiles" / name).write_text(text)
    fleet = (root / "fleet.yaml").read_text()
    if "profiles:" not in fleet:
        fleet = fleet.replace("  clusters: clusters\n", "  clusters: clusters\n  profiles: profiles\n")
    if rule_profile is not None:
        fleet += (
            f"    - applications: [greeter]\n      clusters: [prod-nginx]\n      profile: {rule_profile}\n"
        )
    (root / "fleet.yaml").write_text(fleet)
    return root


def test_a_profiled_cluster_gets_the_default_and_its_subjects(tmp_path: Path) -> None:
    snapshot = load_catalog(catalog_with(tmp_path, {"ingress.yaml": DECLARATION}))
    assert snapshot.declarations["prod-nginx"].name == "ingress-mode"
    assert ("prod-nginx", "ingress-mode", "gateway") in snapshot.subjects()
    assert ("staging-traefik", "", "") in snapshot.subjects()
    profiled = [t for t in snapshot.targets if t.cluster == "prod-nginx"]
    assert profiled and all(t.selection == "ingress-mode=nginx" for t in profiled)
    requests = snapshot.subject_requests("prod-nginx", parse_selection("ingress-mode=gateway"))
    assert len(requests) == len(profiled)
    assert all(b"controllerType: gateway" in r.request.cluster_profile for r in requests)


def test_a_rule_selection_changes_the_request(tmp_path: Path) -> None:
    snapshot = load_catalog(catalog_with(tmp_path, {"ingress.yaml": DECLARATION}, "ingress-mode=gateway"))
    greeter = next(
        t
        for t in snapshot.target_requests
        if t.target.application == "greeter" and t.target.cluster == "prod-nginx"
    )
    assert greeter.target.selection == "ingress-mode=gateway"
    assert b"controllerType: gateway" in greeter.request.cluster_profile


def test_an_unknown_value_refuses_that_target_only(tmp_path: Path) -> None:
    snapshot = load_catalog(catalog_with(tmp_path, {"ingress.yaml": DECLARATION}, "ingress-mode=traefik"))
    assert not any(t.application == "greeter" and t.cluster == "prod-nginx" for t in snapshot.targets)
    assert any(p.code == "profile.unknown_value" and "greeter" in p.message for p in snapshot.problems)
    assert any(t.cluster == "prod-nginx" for t in snapshot.targets)


def test_a_selection_on_an_unprofiled_cluster_refuses_that_target(tmp_path: Path) -> None:
    snapshot = load_catalog(catalog_with(tmp_path, {}, "ingress-mode=gateway"))
    assert any(p.code == "profile.no_declaration" and "greeter" in p.message for p in snapshot.problems)
    assert not any(t.application == "greeter" and t.cluster == "prod-nginx" for t in snapshot.targets)
    assert any(t.application == "greeter" and t.cluster == "prod-gateway" for t in snapshot.targets)


def test_the_example_fleet_selects_the_internal_class_for_its_back_office() -> None:
    snapshot = load_catalog(EXAMPLE)
    assert not snapshot.problems
    selections = {(t.application, t.cluster): t.selection for t in snapshot.targets}
    assert selections[("catalog-api", "prod-nginx")] == "ingress-class=internal"
    assert selections[("storefront", "prod-nginx")] == "ingress-class=public"
    assert selections[("storefront", "prod-gateway")] == ""


@pytest.mark.parametrize(
    ("files", "needle"),
    [
        (
            {"a.yaml": DECLARATION, "b.yaml": DECLARATION.replace("ingress-mode", "other")},
            "duplicate_declaration",
        ),
        (
            {"a.yaml": DECLARATION.replace("clusterProfile: prod-nginx", "clusterProfile: nowhere")},
            "unknown_cluster_profile",
        ),
        ({"a.yaml": DECLARATION.replace("  values:", "  valeus:")}, "spec.valeus"),
    ],
)
def test_a_bad_declaration_stops_the_catalog_load(tmp_path: Path, files: dict[str, str], needle: str) -> None:
    with pytest.raises(CatalogError) as caught:
        load_catalog(catalog_with(tmp_path, files))
    assert needle in str(caught.value)


def test_each_request_a_catalog_writes_from_shared_parts_is_the_one_its_fields_make(tmp_path: Path) -> None:
    """A snapshot writes each descriptor from parts its targets share (an application's, a
    ClusterProfile's under a selection, a values layering's): every one is the descriptor, digest
    and request the constructor makes of the same fields, profiled or not, with a shared values
    file, a cluster's overlay over it, and namespaces (one not ASCII)."""
    root = catalog_with(tmp_path, {"ingress.yaml": DECLARATION}, "ingress-mode=gateway")
    greeter = root / "applications" / "greeter"
    (greeter / "values.yaml").write_text("replicas: 2\n")
    (greeter / "values").mkdir()
    (greeter / "values" / "prod-nginx.yaml").write_text("replicas: 5\n")
    fleet = (root / "fleet.yaml").read_text()
    staging = '      clusters: ["staging-*"]\n'
    assert staging in fleet
    fleet = fleet.replace(staging, staging + '      namespace: "shop-ü"\n')
    (root / "fleet.yaml").write_text(fleet)
    snapshot = load_catalog(root)
    requests = [entry.request for entry in snapshot.target_requests]
    assert {r.namespace for r in requests} >= {"shop-ü", None}
    assert {r.selection for r in requests} >= {"ingress-mode=gateway", "ingress-mode=nginx", ""}
    assert len({r.values for r in requests}) >= 3  # none, the shared file, the overlay over it
    for request in requests:
        fields = {f.name: getattr(request, f.name) for f in dataclass_fields(RenderRequest) if f.init}
        built = RenderRequest(**fields)
        assert request.descriptor_bytes == built.descriptor_bytes == canonical_json(request.descriptor())
        assert (request.digest, request) == (built.digest, built)
