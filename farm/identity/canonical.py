"""Canonical JSON and sha256 digests: the one definition behind every digest the farm computes.

Choice: **sorted-key compact JSON**, not RFC 8785 (JCS). The bytes are
``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)``
encoded as UTF-8. Keys are sorted by Unicode code point (Python's ``str`` order), not by UTF-16
code units as in JCS. Numbers are written as Python writes them, so ``3`` and ``3.0`` give
different bytes (``3`` vs ``3.0``) and so do ``True`` and ``1``; strings are never Unicode-normalised.
This is deliberate: the digest records exactly what an input was, and two inputs that a
renderer could treat differently never share a digest.

Only JSON's own types are accepted: ``dict`` with ``str`` keys, ``list``, ``str``, ``int``,
``float`` (finite), ``bool`` and ``None``. Anything else (tuples, non-string keys, NaN, ±Inf,
bytes, sets) raises ``CanonicalJSONError`` naming the path of the offending value, because
``json.dumps`` would otherwise silently turn ``{1: "x"}`` into ``{"1": "x"}``.

Digests are sha256, written as 64 lowercase hex characters with no ``sha256:`` prefix.

The bytes are written by orjson where it writes exactly these bytes: for a value that holds no
float (orjson writes ``1e-7`` and ``0.00001`` where Python writes ``1e-07`` and ``1e-05``) and no
integer beyond 64 bits (orjson refuses those). Every other value goes through ``json.dumps``.
Keys sorted by code point and by UTF-8 bytes are in the same order, and both escape exactly
``"``, ``\\`` and the control characters, the same way (``tests/test_evidence_canonical.py``
compares the two). Written by orjson, a pool worker's instructions per rendered target fell by
about 5 % (docs/performance.md).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import orjson

_HEX_DIGEST = re.compile(r"^[0-9a-f]{64}$")


class CanonicalJSONError(ValueError):
    """A value that has no canonical JSON form; the message names its path (``$.a[2].b``)."""


def canonical_json(value: Any, *, checked: bool = True, floatless: bool = False) -> bytes:
    """The canonical bytes of ``value`` (see the module docstring).

    ``checked=False`` skips the walk that refuses non-JSON values, for values built only from
    parts already checked (a statement whose predicate ``build_statement`` checked, an envelope).
    ``floatless=True`` is such a caller's word that ``value`` holds no float either (names,
    digests, counts): it is then written by orjson without a walk.
    """
    if checked:
        floatless = not _check_json_value(value, "$", set())
    if floatless:
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # an integer beyond 64 bits: json.dumps writes it
            pass
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def check_json_value(value: Any) -> bool:
    """Raise ``CanonicalJSONError`` naming the path of the first value with no canonical JSON form;
    whether ``value`` holds a float."""
    return _check_json_value(value, "$", set())


def sha256_hex(data: bytes) -> str:
    """The sha256 of ``data`` as 64 lowercase hex characters."""
    return hashlib.sha256(data).hexdigest()


def digest_of(value: Any) -> str:
    """sha256 of the canonical JSON of ``value``."""
    return sha256_hex(canonical_json(value))


def is_hex_digest(text: object) -> bool:
    """True for exactly 64 lowercase hex characters (uppercase is refused, not normalised)."""
    if type(text) is not str:
        return isinstance(text, str) and _HEX_DIGEST.fullmatch(text) is not None
    if text in _HEX_DIGESTS_SEEN:
        return True
    if _HEX_DIGEST.fullmatch(text) is None:
        return False
    if len(_HEX_DIGESTS_SEEN) >= _HEX_DIGESTS_KEPT:
        _HEX_DIGESTS_SEEN.clear()
    _HEX_DIGESTS_SEEN.add(text)
    return True


# The digests found well-formed lately: a worker checks each of a target's digests several times
# (its inputs, its statement, its blob's key), and a set look-up costs a seventh of the pattern's.
_HEX_DIGESTS_SEEN: set[str] = set()
_HEX_DIGESTS_KEPT = 4096


def require_hex_digest(text: object, what: str) -> str:
    """Return ``text`` if it is a lowercase sha256 hex digest, else raise naming ``what``."""
    if not is_hex_digest(text):
        raise ValueError(f"{what}: expected 64 lowercase hex characters (a sha256 digest), got {text!r}")
    return str(text)


_PLAIN = frozenset({str, int, bool, type(None)})  # JSON values that need no further look


def _check_json_value(value: Any, path: str, open_containers: set[int]) -> bool:
    """Raise for a value with no canonical JSON form; whether it holds a float."""
    if type(value) in _PLAIN or isinstance(value, (str, bool, int)):
        return False
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CanonicalJSONError(f"{path}: {value!r} has no JSON form")
        return True
    if isinstance(value, (list, dict)):
        if id(value) in open_containers:
            raise CanonicalJSONError(f"{path}: the value contains itself (a cycle)")
        open_containers.add(id(value))
        floats = _check_container(value, path, open_containers)
        open_containers.discard(id(value))
        return floats
    raise CanonicalJSONError(f"{path}: {type(value).__name__} is not a JSON type")


def _check_container(value: list[Any] | dict[Any, Any], path: str, open_containers: set[int]) -> bool:
    # the path of an item is only built for an item that needs a closer look
    floats = False
    if isinstance(value, list):
        for index, item in enumerate(value):
            if type(item) not in _PLAIN:
                floats |= _check_json_value(item, f"{path}[{index}]", open_containers)
        return floats
    for key, item in value.items():
        if not isinstance(key, str):
            raise CanonicalJSONError(f"{path}: key {key!r} is not a string")
        if type(item) not in _PLAIN:
            floats |= _check_json_value(item, f"{path}.{key}", open_containers)
    return floats
