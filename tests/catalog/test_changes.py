"""farm/catalog/changes.py: the structural diff of two YAML documents (path, old, new) and the
changed input documents of two snapshot manifests. Pure: no storage."""

from __future__ import annotations

from farm.catalog.changes import (
    ADDED,
    CHANGED,
    REMOVED,
    ChangedInputs,
    KeyChange,
    document_changes,
    key_changes,
)


def test_a_changed_nested_value_is_named_by_its_dotted_path_with_old_and_new() -> None:
    old = {"spec": {"capabilities": {"expose": {"ingressClassName": "nginx"}}, "name": "a"}}
    new = {"spec": {"capabilities": {"expose": {"ingressClassName": "traefik"}}, "name": "a"}}
    assert key_changes(old, new) == [
        KeyChange("spec.capabilities.expose.ingressClassName", "nginx", "traefik")
    ]


def test_added_and_removed_keys_and_list_items_are_one_entry_each_with_the_whole_subtree() -> None:
    old = {"spec": {"ports": [80], "tls": {"issuer": "x"}}}
    new = {"spec": {"ports": [80, 443], "replicas": {"min": 1, "max": 3}}}
    assert key_changes(old, new) == [
        KeyChange("spec.ports[1]", None, 443, ADDED),
        KeyChange("spec.tls", {"issuer": "x"}, None, REMOVED),
        KeyChange("spec.replicas", None, {"min": 1, "max": 3}, ADDED),
    ]


def test_a_value_of_another_type_is_a_change_even_when_it_compares_equal() -> None:
    assert key_changes({"a": 1}, {"a": True}) == [KeyChange("a", 1, True, CHANGED)]
    assert key_changes({"a": 1}, {"a": "1"}) == [KeyChange("a", 1, "1", CHANGED)]
    assert key_changes({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}) == []


def test_changed_documents_are_listed_by_path_and_a_declaration_names_its_cluster_profile() -> None:
    blobs = {
        "f": b"kind: Fleet\n",
        "a1": b"spec: {image: app:v1}\n",
        "a2": b"spec: {image: app:v2}\n",
        "c": b"spec: {x: 1}\n",
        "d1": b"spec: {clusterProfile: prod, values: [a]}\n",
        "d2": b"spec: {clusterProfile: prod, values: [a, b]}\n",
    }
    old = {
        "fleet": "f",
        "applications": {"web": {"app": "a1"}},
        "clusters": {"prod": "c"},
        "profiles": {"profiles/prod.yaml": "d1"},
    }
    new = {
        "fleet": "f",
        "applications": {"web": {"app": "a2", "values": "c"}},
        "clusters": {"prod": "c"},
        "profiles": {"profiles/prod.yaml": "d2"},
    }
    changes = document_changes(old, new, blobs.__getitem__, blobs.__getitem__)
    assert [(c.path, c.kind) for c in changes] == [
        ("applications/web/app.yaml", CHANGED),
        ("applications/web/values.yaml", ADDED),
        ("profiles/prod.yaml", CHANGED),
    ]
    assert [str(key) for key in changes[0].keys] == ["spec.image: app:v1 → app:v2"]
    inputs = ChangedInputs(tuple(changes))
    assert inputs.declarations_of("prod") == ("profiles/prod.yaml",)
    assert not inputs.cluster_profile_changed("prod")
    assert [c.path for c in inputs.of_cluster("prod")] == ["profiles/prod.yaml"]
