"""Declarations wired into the catalog: loaded at catalog load, selected per target rule."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from farm.catalog import CatalogError, load_catalog
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
