"""Canonical JSON: the one serializer behind every digest."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# The bytes are json.dumps' (the module's definition), whichever writer writes them: orjson for a
# value with no float, json.dumps otherwise.
def _json_dumps(value: object) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)  # every code point a str may hold but surrogates
_FLOATLESS = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=24,
)


@settings(max_examples=400, deadline=None)
@given(_FLOATLESS)
def test_a_value_without_a_float_has_json_dumps_bytes_checked_or_not(value: object) -> None:
    expected = _json_dumps(value)
    assert canonical_json(value) == expected
    assert canonical_json(value, checked=False, floatless=True) == expected


def test_every_control_character_and_line_separator_is_written_as_json_dumps_writes_it() -> None:
    text = "".join(chr(code) for code in range(0x80)) + "\u2028\u2029\ufeff€𝄞"
    assert canonical_json({text: [text]}) == _json_dumps({text: [text]})


@pytest.mark.parametrize("number", [1e16, 1e-07, 1e-05, 0.1, -0.0, 123456789.125, 5e-324])
def test_a_float_is_written_as_python_writes_it_wherever_it_sits(number: float) -> None:
    value = {"a": [1, {"b": number}], "c": "d"}
    assert canonical_json(value) == _json_dumps(value)
    assert repr(number).encode() in canonical_json(value)


def test_an_integer_beyond_64_bits_is_written_whole_even_on_a_caller_s_word() -> None:
    value = {"n": 2**64 + 1, "m": -(2**63) - 1}
    assert canonical_json(value) == b'{"m":-9223372036854775809,"n":18446744073709551617}'
    assert canonical_json(value, checked=False, floatless=True) == canonical_json(value)


def test_a_statement_with_a_float_in_its_predicate_writes_it_as_python_writes_it() -> None:
    from farm.evidence.statement import Subject, build_statement

    subject = Subject("render:app/cluster", "a" * 64)
    with_float = build_statement([subject], "https://example.test/p", {"seconds": 1e-05})
    without = build_statement([subject], "https://example.test/p", {"seconds": 3})
    assert b'"seconds":1e-05' in with_float.to_bytes()
    assert (with_float.floatless, without.floatless) == (False, True)
    assert without.to_bytes() == _json_dumps(without.to_json())


def test_a_digest_checked_before_is_still_told_apart_from_its_near_misses() -> None:
    digest = hashlib.sha256(b"seen").hexdigest()
    for _ in range(3):  # asked again, it answers from the digests seen lately
        assert is_hex_digest(digest)
    for near in (digest.upper(), digest + "\n", digest[:-1], digest[:-1] + "g", " " + digest[1:]):
        assert not is_hex_digest(near)
    assert not is_hex_digest(digest.encode())
    assert is_hex_digest(type("Text", (str,), {})(digest))  # a str subclass is checked, not looked up


def test_the_digests_seen_lately_are_bounded() -> None:
    from farm.identity import canonical

    for number in range(3 * canonical._HEX_DIGESTS_KEPT):
        assert is_hex_digest(hashlib.sha256(str(number).encode()).hexdigest())
    assert len(canonical._HEX_DIGESTS_SEEN) <= canonical._HEX_DIGESTS_KEPT
