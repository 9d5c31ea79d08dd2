"""Canonical JSON: the one serializer behind every digest."""

from __future__ import annotations

import hashlib

import pytest

from farm.identity.canonical import (
    CanonicalJSONError,
    canonical_json,
    digest_of,
    is_hex_digest,
    require_hex_digest,
    sha256_hex,
)


def test_keys_are_sorted_and_output_is_compact_utf8() -> None:
    assert canonical_json({"b": 1, "a": [1, "é"], "c": None}) == '{"a":[1,"é"],"b":1,"c":null}'.encode()


def test_key_order_does_not_change_the_digest() -> None:
    assert digest_of({"a": 1, "b": {"y": 2, "x": 3}}) == digest_of({"b": {"x": 3, "y": 2}, "a": 1})


@pytest.mark.parametrize(
    ("left", "right"),
    [(3, 3.0), (True, 1), ("3", 3), (1000000, 1e6), (0.0, -0.0), ("\u00e9", "e\u0301")],
)
def test_values_that_python_considers_equal_keep_distinct_digests(left: object, right: object) -> None:
    assert digest_of(left) != digest_of(right)


def test_digest_is_sha256_of_the_canonical_bytes() -> None:
    value = {"z": [1, 2], "a": "x"}
    assert (
        digest_of(value)
        == hashlib.sha256(canonical_json(value)).hexdigest()
        == sha256_hex(canonical_json(value))
    )


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"a": [1, float("nan")]}, "$.a[1]"),
        ({"a": {"b": float("inf")}}, "$.a.b"),
        ({"a": {1: "x"}}, "$.a: key 1"),
        ({"a": (1, 2)}, "$.a: tuple"),
        ({"a": b"bytes"}, "$.a: bytes"),
        ({"a": {1, 2}}, "$.a: set"),
    ],
)
def test_non_json_values_are_refused_naming_their_path(value: object, path: str) -> None:
    with pytest.raises(CanonicalJSONError, match=path.replace("[", r"\[").replace("$", r"\$")):
        canonical_json(value)


def test_a_cycle_is_refused() -> None:
    cyclic: dict[str, object] = {}
    cyclic["self"] = cyclic
    with pytest.raises(CanonicalJSONError, match="cycle"):
        canonical_json(cyclic)


def test_shared_but_acyclic_values_are_fine() -> None:
    shared = [1]
    assert canonical_json({"a": shared, "b": shared}) == b'{"a":[1],"b":[1]}'


def test_hex_digest_must_be_lowercase_and_64_characters() -> None:
    digest = sha256_hex(b"x")
    assert is_hex_digest(digest)
    assert not is_hex_digest(digest.upper())
    assert not is_hex_digest("sha256:" + digest)
    with pytest.raises(ValueError, match="application_digest"):
        require_hex_digest(digest.upper(), "application_digest")
