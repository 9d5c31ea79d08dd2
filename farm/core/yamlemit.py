"""A direct block-style writer for the documents manifests are made of.

``yamlio`` writes through PyYAML: a Python representer builds a node graph and libyaml emits it.
For the documents a render produces (string-keyed maps, lists, short single-line strings, numbers,
booleans, multi-line strings as literal blocks) the node graph costs more than the rest of the
render. This module writes those documents straight to text with the same rules, and declines
(returns ``None``) for anything whose layout depends on libyaml's finer analysis: non-ASCII or
control characters, lines that would fold at 80 columns, long keys, ``|+`` blocks, top-level
scalars, other types. ``yamlio`` then writes that document through PyYAML, so the bytes never
depend on which path wrote them (tests/core/test_yamlemit.py compares the two on generated
documents).
"""

from __future__ import annotations

import math
import re
from typing import Any

from farm.core import yamlscalars

_WIDTH = 80
_MAX_SIMPLE_KEY = 100  # libyaml writes keys over 128 characters as complex keys ("? key")
_PRINTABLE_ASCII = re.compile(r"[ -~]*\Z").match
_STYLE_CACHE: dict[str, str | None] = {}
_STYLE_CACHE_LIMIT = 100_000
_LEADING_INDICATORS = frozenset(",[]{}#&*!|>'\"%@`")


class _Decline(Exception):
    """The document needs libyaml's analysis: write it through PyYAML instead."""


def _printable(text: str) -> bool:
    return _PRINTABLE_ASCII(text) is not None


def _plain_allowed(text: str) -> bool:
    """libyaml's analysis of a single-line ASCII scalar in block context: may it be plain?"""
    first = text[0]
    if first == " " or text[-1] == " " or first in _LEADING_INDICATORS:
        return False
    if first in "-?:" and (len(text) == 1 or text[1] == " "):
        return False
    if text.startswith(("---", "...")):
        return False
    return not (text[-1] == ":" or ": " in text or " #" in text)


def _string(text: str, column: int, *, key: bool = False) -> str:
    """One single-line string scalar, styled as ``yamlio``'s representer and libyaml would."""
    if key and len(text) > _MAX_SIMPLE_KEY:
        raise _Decline
    if " " in text and column + len(text) + 2 > _WIDTH:
        raise _Decline  # libyaml may fold it at a space
    try:
        styled = _STYLE_CACHE[text]
    except KeyError:
        styled = _style(text)
        if len(_STYLE_CACHE) < _STYLE_CACHE_LIMIT:
            _STYLE_CACHE[text] = styled
    if styled is None:
        raise _Decline
    return styled


def _style(text: str) -> str | None:
    """The written form of a single-line string wherever it fits on its line; None to decline."""
    if not text:
        return '""'
    if not _printable(text):
        return None
    if yamlscalars.needs_double_quotes(text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if _plain_allowed(text):
        return text
    return "'" + text.replace("'", "''") + "'"


def _scalar(value: Any, column: int) -> str:
    if isinstance(value, str):
        if "\n" in value:
            raise _Decline  # handled by the caller as a literal block
        return _string(value, column)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if type(value) is int:
        return str(value)
    if type(value) is float:
        if not math.isfinite(value):
            raise _Decline  # yamlio reports it with its path
        text = yamlscalars.go_float_text(value)
        if not _plain_allowed(text):
            raise _Decline
        return text
    raise _Decline


def _literal(text: str, indent: int) -> str:
    """A multi-line string as a literal block whose lines sit at ``indent``."""
    if not _printable(text.replace("\n", "")) or text[0] == "\n" or text[-1] == " ":
        raise _Decline
    if " \n" in text:
        raise _Decline  # a space before a line break: libyaml double-quotes it
    if text.endswith("\n\n"):
        raise _Decline  # "|+" keeps trailing breaks and may end the document with "..."
    header = "|2" if text[0] == " " else "|"
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    else:
        header += "-"
    pad = " " * indent
    body = "".join(pad + line + "\n" if line else "\n" for line in lines)
    return header + "\n" + body


def _is_collection(value: Any) -> bool:
    return isinstance(value, (dict, list, tuple))


def _mapping(value: dict[Any, Any], indent: int, out: list[str], *, first_inline: bool) -> None:
    pad = " " * indent
    for position, key in enumerate(yamlscalars.sorted_keys(value)):
        if type(key) is not str:
            raise _Decline
        lead = "" if first_inline and position == 0 else pad
        written_key = _string(key, indent, key=True)
        out.append(lead + written_key + ":")
        _value(value[key], indent, indent + len(written_key) + 2, out, in_sequence=False)


def _sequence(value: list[Any] | tuple[Any, ...], indent: int, out: list[str], *, first_inline: bool) -> None:
    pad = " " * indent
    for position, item in enumerate(value):
        out.append(("" if first_inline and position == 0 else pad) + "-")
        _value(item, indent, indent + 2, out, in_sequence=True)


def _value(value: Any, indent: int, column: int, out: list[str], *, in_sequence: bool) -> None:
    """Write ``value`` after a ``key:`` (at ``indent``) or a ``-`` (at ``indent``)."""
    if _is_collection(value):
        if not value:
            out.append(" {}\n" if isinstance(value, dict) else " []\n")
        elif isinstance(value, dict):
            if in_sequence:
                out.append(" ")
                _mapping(value, indent + 2, out, first_inline=True)
            else:
                out.append("\n")
                _mapping(value, indent + 2, out, first_inline=False)
        elif in_sequence:
            out.append(" ")
            _sequence(value, indent + 2, out, first_inline=True)
        else:
            out.append("\n")
            _sequence(value, indent, out, first_inline=False)  # sequences under a key: no indent
    elif isinstance(value, str) and "\n" in value:
        out.append(" " + _literal(value, indent + 2))
    else:
        out.append(" " + _scalar(value, column) + "\n")


def dump_document(document: Any) -> str | None:
    """``document`` written as ``yamlio.dump_document`` writes it, or None where this writer
    declines (the caller then writes it through PyYAML)."""
    out: list[str] = []
    try:
        if isinstance(document, dict) and document:
            _mapping(document, 0, out, first_inline=False)
        elif isinstance(document, (list, tuple)) and document:
            _sequence(document, 0, out, first_inline=False)
        else:
            return None
    except _Decline:
        return None
    return "".join(out)
