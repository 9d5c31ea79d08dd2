"""YAML reading (yaml.v3 semantics) and writing (encoding/json + yaml.v2 bytes)."""

from __future__ import annotations

import math

import pytest

from farm.core import yamlio


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("True", True),
        ("FALSE", False),
        ("yes", "yes"),
        ("on", "on"),
        ("off", "off"),
        ("y", "y"),
        ("~", None),
        ("null", None),
        ("42", 42),
        ("0x1F", 31),
        ("0o17", 15),
        ("017", 15),
        ("1_000", 1000),
        ("1.5", 1.5),
        ("1e3", 1000.0),
        (".5", 0.5),
        ("2024-01-02", "2024-01-02"),
        ("1:30", "1:30"),
        ("'123'", "123"),
        ('"true"', "true"),
    ],
)
def test_scalar_reading_follows_yaml_v3(text: str, value: object) -> None:
    loaded = yamlio.load(f"k: {text}\n")["k"]
    assert loaded == value and type(loaded) is type(value)


def test_infinity_and_nan_read_as_floats() -> None:
    loaded = yamlio.load("a: .inf\nb: -.Inf\nc: .nan\n")
    assert loaded["a"] == math.inf and loaded["b"] == -math.inf and math.isnan(loaded["c"])


def test_duplicate_key_is_refused_with_its_line() -> None:
    with pytest.raises(
        yamlio.YAMLError, match=r"app.yaml: yaml: line 3: mapping key 'a' already defined at line 1"
    ):
        yamlio.load("a: 1\nb: 2\na: 3\n", source="app.yaml")


def test_only_the_first_document_is_read() -> None:
    assert yamlio.load("a: 1\n---\nb: 2\n") == {"a": 1}


def test_invalid_yaml_names_the_source() -> None:
    with pytest.raises(yamlio.YAMLError, match=r"^cluster.yaml: yaml: line"):
        yamlio.load("a: [1, 2\n", source="cluster.yaml")


@pytest.mark.parametrize(
    ("keys", "ordered"),
    [
        (["spec", "kind", "apiVersion", "metadata"], ["apiVersion", "kind", "metadata", "spec"]),
        (["b", "B", "a", "A"], ["A", "B", "a", "b"]),
        (["a10", "a9", "a1"], ["a1", "a9", "a10"]),
        (["ab", "a"], ["a", "ab"]),
        (["a-b", "aa", "a_b"], ["a-b", "a_b", "aa"]),
        (
            ["apiVersion", "automountServiceAccountToken", "kind"],
            ["apiVersion", "automountServiceAccountToken", "kind"],
        ),
    ],
)
def test_keys_sort_with_yaml_v2_comparator(keys: list[str], ordered: list[str]) -> None:
    assert yamlio.sorted_keys(keys) == ordered


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ("1", 'v: "1"'),
        ("true", 'v: "true"'),
        ("yes", 'v: "yes"'),
        ("on", 'v: "on"'),
        ("", 'v: ""'),
        ("null", 'v: "null"'),
        ("1.5", 'v: "1.5"'),
        ("0x10", 'v: "0x10"'),
        ("2024-01-02", 'v: "2024-01-02"'),
        ("1:30", 'v: "1:30"'),
        ("65000:100", "v: 65000:100"),
        ("@daily", "v: '@daily'"),
        ("*", "v: '*'"),
        ("a: b", "v: 'a: b'"),
        ("a #b", "v: 'a #b'"),
        (" lead", "v: ' lead'"),
        ("- x", "v: '- x'"),
        ("-c", "v: -c"),
        ("1h0m0s", "v: 1h0m0s"),
        ("50%", "v: 50%"),
        ("0 2 * * *", "v: 0 2 * * *"),
        ("s3://bucket/path", "v: s3://bucket/path"),
        ("max-age=31536000; includeSubDomains; preload", "v: max-age=31536000; includeSubDomains; preload"),
    ],
)
def test_string_quoting_matches_yaml_v2(value: str, line: str) -> None:
    assert yamlio.dump_document({"v": value}) == line + "\n"


def test_block_scalars_for_multi_line_strings() -> None:
    assert yamlio.dump_document({"v": "a\nb\n"}) == "v: |\n  a\n  b\n"
    assert yamlio.dump_document({"v": "a\nb"}) == "v: |-\n  a\n  b\n"


def test_empty_containers_null_and_numbers() -> None:
    text = yamlio.dump_document({"s": {}, "l": [], "n": None, "i": 3, "f": 2.5, "w": 2.0, "b": False})
    assert text == 'b: false\nf: 2.5\ni: 3\nl: []\n"n": null\ns: {}\nw: 2\n'


def test_sequences_under_a_key_are_not_indented() -> None:
    text = yamlio.dump_document({"spec": {"containers": [{"name": "a", "args": ["x", "y"]}]}})
    assert text == 'spec:\n  containers:\n  - args:\n    - x\n    - "y"\n    name: a\n'


def test_long_strings_fold_at_80_columns() -> None:
    words = " ".join(["word"] * 30)
    text = yamlio.dump_document({"description": words})
    # libyaml (and so yaml.v2) breaks at the first space once the column passes 80.
    assert text == ("description: " + " ".join(["word"] * 14) + "\n  " + " ".join(["word"] * 16) + "\n")
    assert yamlio.load(text)["description"] == words


def test_documents_are_joined_by_separator_with_one_final_newline() -> None:
    assert yamlio.dump_documents([{"a": 1}, {"b": 2}]) == "a: 1\n---\nb: 2\n"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1234567.5, "1.2345675e+06"),
        (100000.5, "100000.5"),
        (0.0001, "0.0001"),
        (1e-05, "1e-05"),
        (1e21, "1e+21"),
    ],
)
def test_floats_print_like_go_g_format(value: float, text: str) -> None:
    assert yamlio.go_format_float(value) == text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a: !!str {b: 1}\n", {"a": {"b": 1}}),
        ("a: !!int [1]\n", {"a": [1]}),
        ("a: !!binary [1]\n", {"a": [1]}),
        ("a: !!map 5\n", {"a": "5"}),
        ("a: !!seq x\n", {"a": "x"}),
        ("a: !!map [1]\n", {"a": [1]}),
        ("a: !!seq {b: 1}\n", {"a": {"b": 1}}),
        ("a: !!set 1\n", {"a": "1"}),
    ],
)
def test_a_tag_that_does_not_match_its_node_reads_by_the_node_kind_as_yaml_v3_does(
    text: str, value: object
) -> None:
    assert yamlio.load(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a: !!str 8080\n", {"a": "8080"}),
        ("a: !!str true\n", {"a": "true"}),
        ("a: !!str ~\n", {"a": "~"}),
        ('a: !!int "5"\n', {"a": 5}),
        ("a: !!float 5\n", {"a": 5.0}),
        ('a: !!bool "true"\n', {"a": True}),
        ("a: !!null\n", {"a": None}),
        ("a: ! 5\n", {"a": 5}),
    ],
)
def test_an_explicitly_tagged_scalar_reads_as_its_tag_says(text: str, value: object) -> None:
    loaded = yamlio.load(text)
    assert loaded == value
    assert type(loaded["a"]) is type(value["a"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: !!int abc\n", "f.yaml: yaml: line 1: cannot decode !!str `abc` as a !!int"),
        ("a: !!bool yes\n", "f.yaml: yaml: line 1: cannot decode !!str `yes` as a !!bool"),
        ("a: !!int true\n", "f.yaml: yaml: line 1: cannot decode !!bool `true` as a !!int"),
    ],
)
def test_a_scalar_that_is_not_of_its_tags_type_is_refused_naming_the_line(text: str, message: str) -> None:
    with pytest.raises(yamlio.YAMLError) as caught:
        yamlio.load(text, source="f.yaml")
    assert str(caught.value) == message


def test_a_mapping_key_that_is_not_a_string_is_refused_naming_the_line() -> None:
    with pytest.raises(yamlio.YAMLError) as caught:
        yamlio.load("spec:\n  k:\n    1: x\n", source="app.yaml")
    assert str(caught.value) == 'app.yaml: yaml: line 3: mapping key 1 is not a string; quote it ("1")'


def test_a_manifest_source_key_that_is_not_a_string_becomes_its_string_form() -> None:
    loaded = yamlio.load_all("k:\n  1: a\n  true: b\n  1.5: c\n---\nx: 1\n", manifest=True)
    assert loaded == [{"k": {"1": "a", "true": "b", "1.5": "c"}}, {"x": 1}]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2.0**63, "9223372036854776000"),
        (2.0**64, "1.8446744073709552e+19"),
        (-(2.0**63), "-9.223372036854776e+18"),
        (1e20, "1e+20"),
        (3.0, "3"),
        (-0.0, "0"),
    ],
)
def test_a_whole_float_is_written_as_encoding_json_then_yaml_v2_write_it(value: float, text: str) -> None:
    assert yamlio.dump_document({"v": value}) == f"v: {text}\n"
    assert yamlio.dump_manifests([{"v": value, "s": "a\tb"}]) == f's: "a\\tb"\nv: {text}\n'


def test_a_multi_document_read_that_is_no_manifest_source_keeps_yaml_v3_and_refuses_a_number_key() -> None:
    assert yamlio.load_all("a: 9223372036854775808\n") == [{"a": 9223372036854775808}]
    with pytest.raises(yamlio.YAMLError, match="mapping key 1 is not a string"):
        yamlio.load_all("k:\n  1: a\n", source="profiles.yaml")
