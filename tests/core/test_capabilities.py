"""Seed 000 sections 3, 4 and 6: key resolution, the merge, rendering checks, CapabilityRequired."""

from __future__ import annotations

import math

import pytest

from farm.core.capabilities import (
    capability_keys,
    check_rendering_values,
    merge_rendering,
    missing_capability_error,
    resolve_capability,
)
from farm.core.errors import CapabilityError

CAPS = {
    "expose": {"controllerType": "ingress"},
    "expose.internal": {"controllerType": "gateway", "gatewayName": "internal-gateway"},
}


# Section 3: scoped key first, then the bare key, else nothing.
@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"scope": "internal"}, ("expose.internal", CAPS["expose.internal"])),
        ({"scope": "public"}, ("expose", CAPS["expose"])),  # no scoped entry: bare key
        ({}, ("expose", CAPS["expose"])),  # scope absent: bare key
        ({"scope": ""}, ("expose", CAPS["expose"])),  # empty scope is no scope
        ({"scope": 3}, ("expose", CAPS["expose"])),  # a non-string scope is no scope
    ],
)
def test_scoped_then_bare_key(props: dict, expected: tuple) -> None:
    assert resolve_capability(CAPS, "expose", props) == expected


def test_no_binding_resolves_to_none() -> None:
    assert resolve_capability(CAPS, "certificate", {"scope": "x"}) is None
    assert capability_keys("certificate", {"scope": "x"}) == ["certificate.x", "certificate"]


# Section 4: rendering ∪ authored, authored wins.
def test_application_properties_win() -> None:
    assert merge_rendering({"a": 1, "b": 2}, {"b": 3}) == {"a": 1, "b": 3}


def test_authored_null_is_absent_and_does_not_overwrite() -> None:
    assert merge_rendering({"a": 1}, {"a": None}) == {"a": 1}


def test_rendering_value_keeps_its_decoded_type() -> None:
    merged = merge_rendering({"replicas": 3}, {})
    assert merged["replicas"] == 3 and isinstance(merged["replicas"], int)


def test_nested_maps_merge_key_by_key() -> None:
    rendering = {"issuerRef": {"name": "letsencrypt-prod", "kind": "ClusterIssuer"}}
    assert merge_rendering(rendering, {"issuerRef": {"name": "internal"}}) == {
        "issuerRef": {"name": "internal", "kind": "ClusterIssuer"}
    }


def test_merge_recurses_at_every_depth() -> None:
    rendering = {"a": {"b": {"c": 1, "d": 2}}}
    assert merge_rendering(rendering, {"a": {"b": {"d": 3}}}) == {"a": {"b": {"c": 1, "d": 3}}}


def test_lists_replace_whole() -> None:
    assert merge_rendering({"hosts": ["a", "b"]}, {"hosts": ["c"]}) == {"hosts": ["c"]}


def test_a_value_of_another_kind_replaces_whole() -> None:
    assert merge_rendering({"x": {"a": 1}}, {"x": "scalar"}) == {"x": "scalar"}
    assert merge_rendering({"x": "scalar"}, {"x": {"a": 1}}) == {"x": {"a": 1}}


def test_null_is_absent_at_any_depth() -> None:
    rendering = {"a": {"b": 1, "c": 2}}
    assert merge_rendering(rendering, {"a": {"b": None, "d": None}}) == {"a": {"b": 1, "c": 2}}


def test_merge_does_not_alias_the_rendering() -> None:
    rendering = {"a": {"b": [1]}}
    merged = merge_rendering(rendering, {})
    merged["a"]["b"].append(2)
    assert rendering == {"a": {"b": [1]}}


def test_seed_example_certificate() -> None:
    rendering = {"issuerRef": {"name": "letsencrypt-prod", "kind": "ClusterIssuer"}}
    authored = {"secretName": "my-app-tls", "dnsNames": ["my-app.example.com"]}
    assert merge_rendering(rendering, authored) == {
        "secretName": "my-app-tls",
        "dnsNames": ["my-app.example.com"],
        "issuerRef": {"name": "letsencrypt-prod", "kind": "ClusterIssuer"},
    }


@pytest.mark.parametrize(
    ("rendering", "message"),
    [
        ({"a": {"b": None}}, 'capability "x": rendering.a.b: null is not allowed below the top level'),
        ({"a": [1, None]}, 'capability "x": rendering.a[1]: null is not allowed below the top level'),
        ({"a": math.nan}, 'capability "x": rendering.a: nan is not a finite number'),
        ({"a": {"b": math.inf}}, 'capability "x": rendering.a.b: inf is not a finite number'),
        ({"a": -math.inf}, 'capability "x": rendering.a: -inf is not a finite number'),
        ({"a": {1: "x"}}, 'capability "x": rendering.a: key 1 is not a string'),
        ({"a": b"bytes"}, 'capability "x": rendering.a: value of type bytes is not a JSON value'),
    ],
)
def test_rendering_with_nested_null_nan_inf_or_non_json_is_refused(rendering: dict, message: str) -> None:
    with pytest.raises(CapabilityError) as caught:
        check_rendering_values("x", rendering, "prod")
    assert caught.value.message.startswith('ClusterProfile "prod": ' + message)


def test_top_level_null_in_rendering_is_absent_not_refused() -> None:
    check_rendering_values("x", {"a": None, "b": {"c": 1}}, "prod")


# Section 6: CapabilityRequired names the trait type and the ClusterProfile.
def test_missing_required_capability_names_trait_and_profile() -> None:
    error = missing_capability_error("web", "certificate", {}, "prod-eu")
    assert error.message == (
        'component "web" trait "certificate": capability "certificate" not found in '
        'ClusterProfile "prod-eu": oam: capability key not found in ClusterProfile'
    )
