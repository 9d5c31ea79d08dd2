"""Strict Application / ClusterProfile / Package decoding and parameters."""

from __future__ import annotations

import pytest

from farm.core.documents import load_application, load_cluster_profile, load_package
from farm.core.errors import DocumentError, ParameterError
from farm.core.params import parse_set_flags, parse_values_file, resolve_parameters, substitute

APP = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: shop
spec:
  components:
    - name: web
      type: webservice
      properties: {image: "nginx:1.27"}
"""


def test_valid_application_decodes() -> None:
    app = load_application(APP)
    assert app.metadata.name == "shop"
    assert app.spec.components[0].properties == {"image": "nginx:1.27"}


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda s: s.replace("kind: Application", "kind: App"),
            "app.yaml: kind must be 'Application', got 'App'",
        ),
        (
            lambda s: s.replace("launcher.gokure.dev/v1alpha1", "launcher.gokure.dev/v1"),
            "app.yaml: unsupported apiVersion 'launcher.gokure.dev/v1' (expected 'launcher.gokure.dev/v1alpha1')",
        ),
        (
            lambda s: s.replace("  name: shop", "  name: Shop"),
            "app.yaml: metadata.name 'Shop' is not a valid DNS-1123 subdomain",
        ),
        (
            lambda s: s.replace("      type: webservice", "      type: webservice\n      replicas: 2"),
            "app.yaml: spec.components[0].replicas: field not found in type Application",
        ),
        (
            lambda s: s.replace("metadata:\n", "metadata:\n  owner: me\n"),
            "app.yaml: metadata.owner: field not found in type Application",
        ),
        (
            lambda s: s.split("  components:")[0] + "  components: []\n",
            "app.yaml: spec.components: at least one component is required",
        ),
    ],
)
def test_application_refusals_name_the_field(mutate, message: str) -> None:
    with pytest.raises(DocumentError) as caught:
        load_application(mutate(APP))
    assert caught.value.message == message


def test_duplicate_component_names_are_refused() -> None:
    doc = APP + "    - name: web\n      type: worker\n"
    with pytest.raises(DocumentError, match=r"spec.components\[1\].name: duplicate component name 'web'"):
        load_application(doc)


def test_duplicate_yaml_keys_are_refused() -> None:
    with pytest.raises(DocumentError, match="already defined"):
        load_application(APP.replace("  name: shop", "  name: shop\n  name: shop2"))


PROFILE = """apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: prod
spec:
  capabilities:
    expose:
      rendering: {controllerType: ingress}
"""


def test_cluster_profile_defaults_gitops_engine() -> None:
    profile = load_cluster_profile(PROFILE)
    assert profile.spec.gitopsEngine == "fluxcd"
    assert profile.capability("expose").rendering == {"controllerType": "ingress"}


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            PROFILE.replace("spec:\n", "spec:\n  gitops: {}\n"),
            "cluster.yaml: spec.gitops: field not found in type ClusterProfile",
        ),
        (
            PROFILE.replace("  name: prod", "  name: prod\n  labels: {}"),
            "cluster.yaml: metadata.labels: field not found in type ClusterProfile",
        ),
        (
            PROFILE.replace("spec:\n", "spec:\n  gitopsEngine: argocd\n"),
            "cluster.yaml: spec.gitopsEngine: unsupported engine 'argocd' (only \"fluxcd\")",
        ),
        (
            PROFILE.replace("rendering:", "schema: {}\n      rendering:"),
            "cluster.yaml: spec.capabilities.expose.schema: field not found in type ClusterProfile",
        ),
    ],
)
def test_cluster_profile_refusals(doc: str, message: str) -> None:
    with pytest.raises(DocumentError) as caught:
        load_cluster_profile(doc)
    assert caught.value.message == message


PACKAGE = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Package
metadata: {name: shop}
spec:
  parameters:
    - {name: registry, type: string, default: ghcr.io}
    - {name: image, type: string, default: "${registry}/shop:v1"}
    - {name: replicas, type: integer, default: 1}
    - {name: debug, type: boolean, default: false}
    - {name: domain, type: string, required: true}
"""


def test_parameters_resolve_in_declaration_order_with_defaults_referencing_earlier_ones() -> None:
    params = resolve_parameters(load_package(PACKAGE), {"domain": "example.com"}, {})
    assert params == {
        "registry": "ghcr.io",
        "image": "ghcr.io/shop:v1",
        "replicas": 1,
        "debug": False,
        "domain": "example.com",
    }


def test_set_overrides_values_and_is_coerced_to_the_declared_type() -> None:
    params = resolve_parameters(
        load_package(PACKAGE), {"domain": "a", "replicas": 2}, parse_set_flags(["replicas=5", "debug=true"])
    )
    assert params["replicas"] == 5 and params["debug"] is True


@pytest.mark.parametrize(
    ("values", "sets", "message"),
    [
        ({}, {}, "parameter 'domain' is required but has no value"),
        ({"domain": "a", "colour": "red"}, {}, "values.yaml: undeclared parameter 'colour'"),
        ({"domain": "a"}, {"replicas": "two"}, "--set replicas=two: parameter 'replicas' must be an integer"),
        (
            {"domain": "a"},
            {"debug": "yes"},
            "--set debug=yes: parameter 'debug' must be a boolean (true or false)",
        ),
        (
            {"domain": "a", "replicas": "3"},
            {},
            "values.yaml: parameter 'replicas' must be of type integer, got string",
        ),
    ],
)
def test_parameter_errors(values: dict, sets: dict, message: str) -> None:
    with pytest.raises(ParameterError) as caught:
        resolve_parameters(load_package(PACKAGE), values, sets)
    assert caught.value.message == message


def test_values_file_must_be_a_mapping_and_empty_is_empty() -> None:
    assert parse_values_file(b"") == {}
    with pytest.raises(ParameterError, match="values must be a mapping"):
        parse_values_file(b"- a\n")


def test_substitution_types_whole_references_and_leaves_keys_alone() -> None:
    doc = {
        "replicas": "${replicas}",
        "image": "${registry}/x:${tag}",
        "${registry}": "key",
        "list": ["${debug}"],
    }
    out = substitute(doc, {"replicas": 2, "registry": "ghcr.io", "tag": "v1", "debug": True})
    assert out == {"replicas": 2, "image": "ghcr.io/x:v1", "${registry}": "key", "list": [True]}


def test_package_unknown_parameter_key_is_refused() -> None:
    with pytest.raises(DocumentError, match=r"spec.parameters\[0\].secret: field not found"):
        load_package(PACKAGE.replace("{name: registry,", "{name: registry, secret: true,"))
