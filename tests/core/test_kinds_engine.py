"""The kind-component engine: strict decode, Go encoding of the result, and the kind factory."""

from __future__ import annotations

import pytest

from farm.core.documents import ClusterProfile
from farm.core.errors import FieldError
from farm.core.kinds.engine import (
    BOOL,
    DURATION,
    INT32,
    INT_OR_STRING,
    QUANTITY,
    STRING,
    F,
    Struct,
    decode_struct,
    kind_component,
    list_of,
    map_of,
)
from farm.core.kinds.engine import KUBERNETES as API
from farm.core.model import BuildContext, ComponentSpec

INNER = Struct(
    "Inner",
    [
        F("name", STRING, "req"),
        F("count", INT32, "omit ptr"),
        F("mode", STRING, "omit", default='"Auto"'),
        F("tags", list_of(STRING), "omit"),
    ],
)

OUTER = Struct(
    "Outer",
    [
        F("inner", INNER, "omit ptr"),
        F("items", list_of(INNER), "omit"),
        F("always", STRING),
        F("labels", map_of(STRING), "omit"),
        F("nested", Struct("Nested", [F("flag", BOOL)]), "omit"),
        F("size", QUANTITY, "omit ptr"),
        F("period", DURATION, "omit ptr"),
        F("port", INT_OR_STRING, "omit ptr"),
        F("rules", list_of(STRING), "omit req!"),
    ],
)


def decode(props: dict) -> dict:
    return decode_struct(props, OUTER, "", API)


def refusal(props: dict) -> str:
    with pytest.raises(FieldError) as caught:
        decode(props)
    return caught.value.message


def test_unauthored_fields_take_the_go_zero_value() -> None:
    assert decode({"rules": ["a"]}) == {"always": "", "nested": {"flag": False}, "rules": ["a"]}


def test_unknown_key_is_refused_with_its_path() -> None:
    assert refusal({"rules": ["a"], "items": [{"name": "x", "nmae": 1}]}) == 'unknown field "items[0].nmae"'


def test_unknown_key_is_refused_even_when_null() -> None:
    assert refusal({"rules": ["a"], "inner": {"name": "x", "sise": None}}) == 'unknown field "inner.sise"'


def test_keys_match_case_insensitively() -> None:
    assert decode({"rules": ["a"], "Inner": {"NAME": "x"}})["inner"] == {"name": "x"}


def test_two_spellings_of_one_field_are_refused() -> None:
    assert refusal({"rules": ["a"], "inner": {"name": "x", "Name": "y"}}) == (
        "inner.name: sets the same field as inner.Name (the decoder would keep only one)"
    )


def test_null_is_absence_and_a_null_list_element_is_refused() -> None:
    assert "inner" not in decode({"rules": ["a"], "inner": None})
    assert refusal({"rules": ["a"], "items": [None]}) == "items[0]: null is not a valid array element"


def test_null_map_value_is_left_out() -> None:
    assert decode({"rules": ["a"], "labels": {"a": "1", "b": None}})["labels"] == {"a": "1"}


def test_required_only_where_the_parent_is_authored() -> None:
    assert "inner" not in decode({"rules": ["a"]})
    assert refusal({"rules": ["a"], "inner": {}}) == (
        "inner.name: required (the Kubernetes API requires this field)"
    )
    assert refusal({"rules": ["a"], "items": [{"name": "a"}, {"count": 1}]}) == (
        "items[1].name: required (the Kubernetes API requires this field)"
    )


def test_an_authored_empty_value_satisfies_required() -> None:
    assert decode({"rules": ["a"], "inner": {"name": ""}})["inner"] == {"name": ""}


def test_required_nonempty_refuses_absent_and_empty() -> None:
    message = "rules: required (the Kubernetes API requires this field)"
    assert refusal({}) == message
    assert refusal({"rules": []}) == message


def test_defaulted_zero_is_refused() -> None:
    assert refusal({"rules": ["a"], "inner": {"name": "x", "mode": ""}}) == (
        'inner.mode: "" cannot be carried by the Kubernetes API types (the field is omitted when '
        'zero, so the API server would apply its default "Auto")'
    )


def test_pointer_keeps_an_authored_zero_and_omitempty_drops_one() -> None:
    out = decode({"rules": ["a"], "inner": {"name": "x", "count": 0, "tags": []}})
    assert out["inner"] == {"name": "x", "count": 0}


def test_wrong_types_name_the_field() -> None:
    assert refusal({"rules": ["a"], "inner": {"name": 5}}) == "inner.name: must be a string, got int"
    assert refusal({"rules": "a"}) == "rules: must be a list, got string"
    assert refusal({"rules": ["a"], "inner": {"name": "x", "count": 5000000000}}) == (
        "inner.count: must be an integer within int32 range, got 5000000000"
    )


def test_quantity_duration_and_int_or_string_are_canonicalised() -> None:
    out = decode({"rules": ["a"], "size": 1.5, "period": "90s", "port": "http"})
    assert (out["size"], out["period"], out["port"]) == ("1500m", "1m30s", "http")


BODY = Struct("Thing", [F("value", INT32), F("description", STRING, "omit")])
NAMESPACED = kind_component("thing", "example.com/v1", "Thing", "examplev1.ThingSpec", spec=INNER)
CLUSTER = kind_component(
    "clusterthing", "example.com/v1", "ClusterThing", "examplev1.ClusterThing", body=BODY, cluster_scoped=True
)


def ctx() -> BuildContext:
    profile = ClusterProfile.model_validate(
        {
            "apiVersion": "launcher.gokure.dev/v1alpha1",
            "kind": "ClusterProfile",
            "metadata": {"name": "c"},
            "spec": {},
        }
    )
    return BuildContext(app_name="app", namespace="prod", profile=profile)


def test_kind_component_builds_one_object_with_authored_metadata() -> None:
    component = ComponentSpec(
        "web",
        "thing",
        {"name": "x", "objectName": "renamed", "labels": {"a": "b"}, "annotations": {"c": "d"}},
    )
    [obj] = NAMESPACED.build(component, ctx()).objects
    assert obj == {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "renamed", "namespace": "prod", "labels": {"a": "b"}, "annotations": {"c": "d"}},
        "spec": {"name": "x"},
    }
    assert (NAMESPACED.status, NAMESPACED.decode) == ("kind", "strict decode into examplev1.ThingSpec")


def test_cluster_scoped_body_kind_has_no_namespace_and_refuses_metadata() -> None:
    [obj] = CLUSTER.build(ComponentSpec("p", "clusterthing", {}), ctx()).objects
    assert obj == {
        "apiVersion": "example.com/v1",
        "kind": "ClusterThing",
        "metadata": {"name": "p"},
        "value": 0,
    }
    with pytest.raises(FieldError) as caught:
        CLUSTER.build(ComponentSpec("p", "clusterthing", {"Metadata": {}}), ctx())
    assert caught.value.message.startswith("Metadata: not authorable: launcher sets the object's kind")
