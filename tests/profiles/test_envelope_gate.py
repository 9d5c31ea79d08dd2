"""The envelope gate recomputes a ResolvedClusterProfile from the catalog, never trusting what an
envelope records (reference R27–R29 and the forged-envelope cases of section 4)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from farm.profiles import ProfileError, parse_declaration, parse_selection, resolve
from farm.profiles.gate import check_resolved_profile
from farm.profiles.resolve import canonical

CLUSTER = b"""apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata: {name: prod}
spec:
  capabilities:
    expose:
      rendering: {controllerType: ingress, ingressClassName: nginx}
    certificate:
      rendering:
        issuerRef: {name: letsencrypt, kind: ClusterIssuer}
"""
DECLARATION = parse_declaration(
    b"""apiVersion: farm.dev/v1alpha1
kind: ConfigurationProfile
metadata: {name: ingress-mode}
spec:
  clusterProfile: prod
  default: nginx
  values:
    - name: nginx
      capabilities:
        expose: {rendering: {controllerType: ingress, ingressClassName: nginx}}
    - name: gateway
      capabilities:
        expose: {rendering: {controllerType: gateway, ingressClassName: public}}
""",
    "profiles/ingress.yaml",
)
SOURCE = "prod.yaml"
GATEWAY = resolve(CLUSTER, SOURCE, DECLARATION, parse_selection("ingress-mode=gateway"))


def _forge(change) -> bytes:
    body: dict[str, Any] = json.loads(GATEWAY.document)
    change(body)
    return canonical(body)


def _owned(paths: Any):
    def change(body: dict[str, Any]) -> None:
        body["selectedProfile"]["ownedPaths"] = paths

    return change


def _refused(envelope: bytes, declaration=DECLARATION, **kwargs: Any) -> ProfileError:
    with pytest.raises(ProfileError) as caught:
        check_resolved_profile(envelope, CLUSTER, SOURCE, declaration, **kwargs)
    return caught.value


def test_an_envelope_equal_to_a_fresh_resolution_passes_and_gives_it() -> None:
    resolved = check_resolved_profile(
        GATEWAY.document,
        CLUSTER,
        SOURCE,
        DECLARATION,
        effective=GATEWAY.effective,
        expected_digest=GATEWAY.digest,
    )
    assert resolved == GATEWAY
    assert json.loads(GATEWAY.document)["selectedProfile"]["ownedPaths"] == {
        "expose": ["$present", "controllerType", "ingressClassName"]
    }


def test_owned_paths_stripped_of_every_lock_are_refused_as_forged() -> None:
    error = _refused(_forge(_owned({"expose": ["$present"]})))
    assert error.code == "profile.resolved_forged"
    assert "'expose'" in error.message and "ingressClassName" in error.message


def test_owned_paths_naming_a_path_the_declaration_does_not_own_are_refused_as_forged() -> None:
    extra = {
        "certificate": ["$present", "issuerRef.kind"],
        "expose": ["$present", "controllerType", "ingressClassName"],
    }
    error = _refused(_forge(_owned(extra)))
    assert error.code == "profile.resolved_forged" and "'certificate'" in error.message


@pytest.mark.parametrize(
    "paths",
    [
        None,
        {},
        {"expose": "enabled"},  # a string is refused, never iterated as characters
        {"expose": ["ingressClassName", "$present", "controllerType"]},  # unsorted
        {"expose": ["$present", "controllerType", "controllerType", "ingressClassName"]},
        {"expose": ["controllerType", "ingressClassName"]},  # no $present
        {"expose": ["$present", ".a"]},
        {"expose": ["$present", "a."]},
        {"expose": ["$present", "a..b"]},
        {"expose": ["", "$present"]},
        {"": ["$present"]},
    ],
    ids=[
        "null",
        "empty",
        "string",
        "unsorted",
        "duplicate",
        "no-present",
        "lead-dot",
        "trail-dot",
        "double-dot",
        "empty-path",
        "empty-capability",
    ],
)
def test_badly_shaped_owned_paths_are_refused_before_any_recomputation(paths: Any) -> None:
    assert _refused(_forge(_owned(paths))).code == "profile.resolved_bad_selected"


def test_a_selected_value_the_declaration_does_not_declare_is_refused_as_forged() -> None:
    def undeclared(body: dict[str, Any]) -> None:
        body["selectedProfile"]["value"] = "mesh"

    error = _refused(_forge(undeclared))
    assert error.code == "profile.resolved_forged" and "'mesh'" in error.message


def test_a_forged_capability_value_with_honest_owned_paths_is_refused() -> None:
    def other_class(body: dict[str, Any]) -> None:
        body["capabilities"]["expose"]["rendering"]["ingressClassName"] = "traefik"

    assert _refused(_forge(other_class)).code == "profile.resolved_forged"


def test_a_selected_profile_on_a_cluster_without_a_declaration_and_none_on_one_with_it_are_refused() -> None:
    assert _refused(GATEWAY.document, declaration=None).code == "profile.resolved_mismatch"

    def unprofiled(body: dict[str, Any]) -> None:
        del body["selectedProfile"]

    assert _refused(_forge(unprofiled)).code == "profile.resolved_mismatch"


def test_an_envelope_of_another_digest_or_with_other_bytes_to_render_is_refused() -> None:
    assert _refused(GATEWAY.document, expected_digest="0" * 64).code == "profile.resolved_forged"
    assert _refused(GATEWAY.document, effective=CLUSTER).code == "profile.resolved_forged"


def test_bytes_that_are_not_an_envelope_are_refused_as_malformed() -> None:
    assert _refused(b"not json").code == "profile.resolved_malformed"
    assert _refused(b"[]").code == "profile.resolved_malformed"
