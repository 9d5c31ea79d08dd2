"""Declarations, selection and resolution (seed 004, reference 1.A/1.B/1.D, adversarial §4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from farm.profiles import ProfileError, parse_declaration, parse_selection, resolve
from farm.profiles.locks import check_locks, observe
from farm.profiles.resolve import owned_paths

CLUSTER = (Path(__file__).parents[2] / "examples/fleet/clusters/prod-nginx.yaml").read_bytes()

GOOD = """apiVersion: farm.dev/v1alpha1
kind: ConfigurationProfile
metadata: {name: ingress-mode}
spec:
  clusterProfile: prod-nginx
  description: How traffic enters
  default: nginx
  values:
    - name: nginx
      capabilities:
        expose: {rendering: {controllerType: ingress, ingressClassName: nginx}}
    - name: gateway
      capabilities:
        expose: {rendering: {controllerType: gateway, ingressClassName: public}}
"""


def error_of(text: str) -> ProfileError:
    with pytest.raises(ProfileError) as caught:
        parse_declaration(text.encode(), "profiles/ingress.yaml")
    assert "profiles/ingress.yaml" in caught.value.message
    return caught.value


def test_a_good_declaration_decodes_to_its_values() -> None:
    declaration = parse_declaration(GOOD.encode(), "p.yaml")
    assert declaration.name == "ingress-mode"
    assert declaration.cluster_profile == "prod-nginx"
    assert declaration.default == "nginx"
    assert [value.name for value in declaration.values] == ["nginx", "gateway"]
    assert declaration.values[1].fragment == {
        "expose": {"controllerType": "gateway", "ingressClassName": "public"}
    }


@pytest.mark.parametrize(
    ("old", "new", "code", "where"),
    [
        ("  default: nginx", "  default: nginx\n  profie: x", "profile.unknown_key", "spec.profie"),
        ("  values:", "  valeus:", "profile.unknown_key", "spec.valeus"),
        (
            "{rendering: {controllerType: ingress,",
            "{renderng: {controllerType: ingress,",
            "profile.unknown_key",
            "renderng",
        ),
        (
            "metadata: {name: ingress-mode}",
            "metadata: {name: 'ingress mode'}",
            "profile.invalid_identifier",
            "metadata.name",
        ),
        ("    - name: gateway", "    - name: NGINX", "profile.value_case_collision", "spec.values[1].name"),
        ("  default: nginx", "  default: traefik", "profile.default_not_declared", "spec.default"),
        (
            "ingressClassName: public}",
            "ingressClassName: public, extra: 1}",
            "profile.totality_violation",
            "spec.values[1]",
        ),
        ("ingressClassName: public}", "ingressClassName: null}", "profile.null_value", "ingressClassName"),
        (
            "ingressClassName: public}",
            "ingressClassName: .nan}",
            "profile.unsupported_value",
            "ingressClassName",
        ),
        ("ingressClassName: public}", "ingressClassName: {}}", "profile.empty_map", "ingressClassName"),
        ("ingressClassName: public}", "example.com/x: public}", "profile.dotted_key", "example.com/x"),
        (
            "{rendering: {controllerType: ingress,",
            "{rendering: {controllerType: ingress}, other: {",
            "profile.unknown_key",
            "other",
        ),
        (
            "  default: nginx",
            "  default: nginx\n  default: gateway",
            "profile.invalid_yaml",
            "already defined",
        ),
        ("kind: ConfigurationProfile", "kind: Profile", "profile.unknown_version", "apiVersion"),
    ],
)
def test_each_broken_rule_is_refused_with_its_code_and_path(
    old: str, new: str, code: str, where: str
) -> None:
    assert old in GOOD
    error = error_of(GOOD.replace(old, new, 1))
    assert error.code == code
    assert where in error.message


def test_a_declaration_with_no_values_is_refused() -> None:
    text = GOOD.split("  values:")[0] + "  values: []\n"
    assert error_of(text).code == "profile.no_values"


def test_a_selection_takes_exactly_name_equals_value() -> None:
    assert str(parse_selection("ingress-mode=gateway")) == "ingress-mode=gateway"
    for bad in ["ingress-mode", "a=b=c", " a=b", "a=", "=b", "a=b\n"]:
        with pytest.raises(ProfileError) as caught:
            parse_selection(bad)
        assert caught.value.code == "profile.invalid_selection"


def test_owned_paths_are_the_union_plus_present_sorted_by_code_point() -> None:
    text = GOOD.replace("ingressClassName: nginx}", "ingressClassName: nginx, a: {b: 1}, a-c: 1, a0: [x]}")
    text = text.replace("ingressClassName: public}", "ingressClassName: public, a: {b: 2}, a-c: 2, a0: [y]}")
    owned = owned_paths(parse_declaration(text.encode(), "p.yaml"))
    assert owned == {"expose": ["$present", "a-c", "a.b", "a0", "controllerType", "ingressClassName"]}


def test_resolution_applies_the_fragment_and_records_the_selection() -> None:
    declaration = parse_declaration(GOOD.encode(), "p.yaml")
    resolved = resolve(CLUSTER, "c.yaml", declaration, parse_selection("ingress-mode=gateway"))
    assert b"controllerType: gateway" in resolved.effective
    envelope = json.loads(resolved.document)
    assert envelope["selectedProfile"] == {
        "name": "ingress-mode",
        "value": "gateway",
        "ownedPaths": {"expose": ["$present", "controllerType", "ingressClassName"]},
    }
    default = resolve(CLUSTER, "c.yaml", declaration, None)
    assert default.selected == parse_selection("ingress-mode=nginx")
    assert default.digest != resolved.digest


def test_an_unprofiled_cluster_profile_renders_its_own_bytes_and_has_a_digest() -> None:
    resolved = resolve(CLUSTER, "c.yaml", None, None)
    assert resolved.effective == CLUSTER
    assert "selectedProfile" not in json.loads(resolved.document)
    assert len(resolved.digest) == 64 and resolved.selected is None


def test_editing_an_unselected_value_leaves_the_selected_digest_unchanged() -> None:
    before = resolve(CLUSTER, "c.yaml", parse_declaration(GOOD.encode(), "p.yaml"), None)
    edited = GOOD.replace("ingressClassName: public}", "ingressClassName: private}")
    after = resolve(CLUSTER, "c.yaml", parse_declaration(edited.encode(), "p.yaml"), None)
    assert before.digest == after.digest


@pytest.mark.parametrize(
    ("selection", "code"),
    [("ingress-mode=traefik", "profile.unknown_value"), ("other=nginx", "profile.unknown_profile")],
)
def test_an_unknown_profile_or_value_is_refused(selection: str, code: str) -> None:
    declaration = parse_declaration(GOOD.encode(), "p.yaml")
    with pytest.raises(ProfileError) as caught:
        resolve(CLUSTER, "c.yaml", declaration, parse_selection(selection))
    assert caught.value.code == code


def test_a_selection_without_a_declaration_is_refused() -> None:
    with pytest.raises(ProfileError) as caught:
        resolve(CLUSTER, "c.yaml", None, parse_selection("ingress-mode=nginx"))
    assert caught.value.code == "profile.no_declaration"


def test_a_fragment_naming_a_capability_the_cluster_lacks_is_refused() -> None:
    text = GOOD.replace(
        "expose: {rendering: {controllerType: gateway", "mesh: {rendering: {controllerType: gateway"
    )
    text = text.replace(
        "expose: {rendering: {controllerType: ingress", "mesh: {rendering: {controllerType: ingress"
    )
    with pytest.raises(ProfileError) as caught:
        resolve(CLUSTER, "c.yaml", parse_declaration(text.encode(), "p.yaml"), None)
    assert caught.value.code == "profile.capability_absent"


OWNED = {"expose": ("$present", "controllerType", "ingressClassName")}
RESOLVED = {"expose": {"controllerType": "ingress", "ingressClassName": "nginx"}}


def test_a_write_equal_in_bytes_to_the_owned_value_passes_the_lock() -> None:
    check_locks(
        OWNED,
        RESOLVED,
        {"expose": {"controllerType": "ingress", "ingressClassName": "nginx", "x": 1}},
        application="a",
    )


@pytest.mark.parametrize(
    "merged",
    [
        {"expose": {"controllerType": "gateway", "ingressClassName": "nginx"}},
        {"expose": {"controllerType": "ingress"}},
        {},
    ],
)
def test_changing_or_removing_an_owned_path_is_a_lock_divergence(merged: dict) -> None:
    with pytest.raises(ProfileError) as caught:
        check_locks(OWNED, RESOLVED, merged, application="web")
    assert caught.value.code == "profile.lock_divergence"
    assert "expose" in caught.value.message and "web" in caught.value.message


def test_number_bytes_differ_and_a_non_map_ancestor_blocks() -> None:
    owned = {"c": ("$present", "a.b")}
    with pytest.raises(ProfileError):
        check_locks(owned, {"c": {"a": {"b": 1000000}}}, {"c": {"a": {"b": 1e6}}}, application="x")
    assert observe({"a": "scalar"}, "a.b") == ("blocked",)
    assert observe({}, "a.b") == ("absent",)
