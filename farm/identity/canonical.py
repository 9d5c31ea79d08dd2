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
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

_HEX_DIGEST = re.compile(r"^[0-9a-f]{64}$")


class CanonicalJSONError(ValueError):
    """A value that has no canonical JSON form; the message names its path (``$.a[2].b``)."""


def canonical_json(value: Any, *, checked: bool = True) -> bytes:
    """The canonical bytes of ``value`` (see the module docstring).

    ``checked=False`` skips the walk that refuses non-JSON values, for values built only from
    parts already checked (a statement whose predicate ``build_statement`` checked, an envelope).
    """
    if checked:
        check_json_value(value)
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def check_json_value(value: Any) -> None:
    """Raise ``CanonicalJSONError`` naming the path of the first value with no canonical JSON form."""
    _check_json_value(value, "$", set())


def sha256_hex(data: bytes) -> str:
    """The sha256 of ``data`` as 64 lowercase hex characters."""
    return hashlib.sha256(data).hexdigest()


def digest_of(value: Any) -> str:
    """sha256 of the canonical JSON of ``value``."""
    return sha256_hex(canonical_json(value))


def is_hex_digest(text: object) -> bool:
    """True for exactly 64 lowercase hex characters (uppercase is refused, not normalised)."""
    return isinstance(text, str) and _HEX_DIGEST.fullmatch(text) is not None


def require_hex_digest(text: object, what: str) -> str:
    """Return ``text`` if it is a lowercase sha256 hex digest, else raise naming ``what``."""
    if not is_hex_digest(text):
        raise ValueError(f"{what}: expected 64 lowercase hex characters (a sha256 digest), got {text!r}")
    return str(text)


_PLAIN = frozenset({str, int, bool, type(None)})  # JSON values that need no further look


def _check_json_value(value: Any, path: str, open_containers: set[int]) -> None:
    if type(value) in _PLAIN or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CanonicalJSONError(f"{path}: {value!r} has no JSON form")
        return
    if isinstance(value, (list, dict)):
        if id(value) in open_containers:
            raise CanonicalJSONError(f"{path}: the value contains itself (a cycle)")
        open_containers.add(id(value))
        _check_container(value, path, open_containers)
        open_containers.discard(id(value))
        return
    raise CanonicalJSONError(f"{path}: {type(value).__name__} is not a JSON type")


def _check_container(value: list[Any] | dict[Any, Any], path: str, open_containers: set[int]) -> None:
    # the path of an item is only built for an item that needs a closer look
    if isinstance(value, list):
        for index, item in enumerate(value):
            if type(item) not in _PLAIN:
                _check_json_value(item, f"{path}[{index}]", open_containers)
        return
    for key, item in value.items():
        if not isinstance(key, str):
            raise CanonicalJSONError(f"{path}: key {key!r} is not a string")
        if type(item) not in _PLAIN:
            _check_json_value(item, f"{path}.{key}", open_containers)
