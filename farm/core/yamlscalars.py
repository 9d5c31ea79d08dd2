"""The scalar rules the reference's YAML reading and writing share: Go's number parsing
(``strconv.ParseInt`` with base 0, ``ParseFloat``), yaml.v3's special floats, and yaml.v2's writing
rules (its key order, which strings it double-quotes, how it prints a float).

``yamlio`` (reading, and writing through PyYAML) and ``yamlemit`` (the direct writer) both follow
these rules, so they live here, below both: neither of the two imports the other for them.
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Iterable
from decimal import Decimal

# --------------------------------------------------------------------------------------------
# Go number parsing (strconv.ParseInt / ParseUint with base 0, ParseFloat)
# --------------------------------------------------------------------------------------------

_GO_INT_RE = re.compile(r"^[+-]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
YAML_STYLE_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
# No integer of 64 bits has more significant digits than this in any base (binary: 64).
_MAX_INT_DIGITS = 64
_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


def go_parse_int(text: str) -> int | None:
    """strconv.ParseInt(text, 0, 64), falling back to ParseUint; None when neither accepts it."""
    if not _GO_INT_RE.match(text):
        return None
    sign = -1 if text[0] == "-" else 1
    body = text.lstrip("+-")
    low = body.lower()
    if low[:2] in ("0x", "0o", "0b"):
        digits, base = body[2:], {"x": 16, "o": 8, "b": 2}[low[1]]
    elif len(body) > 1 and body[0] == "0":
        digits, base = body[1:], 8
    else:
        digits, base = body, 10
    digits = digits.lstrip("0") or "0"
    if len(digits) > _MAX_INT_DIGITS:
        return None  # out of range for Go, and never handed to int() (Python bounds its digits)
    value = sign * int(digits, base)
    if _INT64_MIN <= value <= _INT64_MAX:
        return value
    if text[0] not in "+-" and value <= _UINT64_MAX:
        return value
    return None


_GO_FLOAT_RE = re.compile(
    r"^[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|inf|infinity|nan)\Z",
    re.IGNORECASE,
)


def go_parse_float(text: str) -> float | None:
    """strconv.ParseFloat(text, 64) for the decimal forms (hex floats are not produced by humans)."""
    if not _GO_FLOAT_RE.match(text):
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    if math.isinf(value) and "inf" not in text.lower():
        return None  # out of range: Go reports ErrRange
    return value


V3_SPECIAL_FLOATS = {
    ".nan": math.nan,
    ".NaN": math.nan,
    ".NAN": math.nan,
    ".inf": math.inf,
    ".Inf": math.inf,
    ".INF": math.inf,
    "+.inf": math.inf,
    "+.Inf": math.inf,
    "+.INF": math.inf,
    "-.inf": -math.inf,
    "-.Inf": -math.inf,
    "-.INF": -math.inf,
}


# --------------------------------------------------------------------------------------------
# Writing rules of yaml.v2 (key order, quoting, float format)
# --------------------------------------------------------------------------------------------


def _is_letter(ch: str) -> bool:
    return ch.isalpha()


def v2_key_less(a: str, b: str) -> bool:
    """yaml.v2's keyList.Less for two string keys."""
    ar, br = a, b
    i = 0
    while i < len(ar) and i < len(br):
        if ar[i] == br[i]:
            i += 1
            continue
        al, bl = _is_letter(ar[i]), _is_letter(br[i])
        if al and bl:
            return ar[i] < br[i]
        if al or bl:
            return bl
        # Neither is a letter: compare the digit runs that start here as numbers.
        j = i
        while j > 0 and ar[j - 1].isdigit() and br[j - 1].isdigit():
            j -= 1  # runs that began before i count too
        an = bn = 0
        ai = j
        while ai < len(ar) and ar[ai].isdigit():
            an = an * 10 + int(ar[ai])
            ai += 1
        bi = j
        while bi < len(br) and br[bi].isdigit():
            bn = bn * 10 + int(br[bi])
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return ar[i] < br[i]
    return len(ar) < len(br)


class _V2Key:
    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key

    def __lt__(self, other: _V2Key) -> bool:
        return v2_key_less(self.key, other.key)


_SORT_CACHE: dict[tuple[str, ...], tuple[str, ...]] = {}


def sorted_keys(keys: Iterable[str]) -> list[str]:
    """Keys in yaml.v2's order. ASCII keys without digits sort like their code points except that
    non-letters precede letters, so the common case is cached by key tuple."""
    key_tuple = tuple(keys)
    cached = _SORT_CACHE.get(key_tuple)
    if cached is None:
        cached = tuple(sorted(key_tuple, key=_V2Key))
        if len(_SORT_CACHE) < 50_000:
            _SORT_CACHE[key_tuple] = cached
    return list(cached)


_BASE60_FLOAT = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?\Z")
_V2_BOOL_WORDS = frozenset(
    [
        "y",
        "Y",
        "yes",
        "Yes",
        "YES",
        "true",
        "True",
        "TRUE",
        "on",
        "On",
        "ON",
        "n",
        "N",
        "no",
        "No",
        "NO",
        "false",
        "False",
        "FALSE",
        "off",
        "Off",
        "OFF",
    ]
)
_V2_MAP_WORDS = _V2_BOOL_WORDS | {"", "~", "null", "Null", "NULL", "<<"} | set(V3_SPECIAL_FLOATS)
_TIMESTAMP_RE = re.compile(
    r"^\d{4}-\d{1,2}-\d{1,2}"
    r"(?:(?:[Tt]|[ \t]+)\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d*)?(?:[ \t]*(?:Z|[-+]\d{1,2}(?::?\d{2})?))?)?\Z",
    re.ASCII,
)


def _v2_resolves_to_non_string(text: str) -> bool:
    """Whether yaml.v2's resolver reads ``text`` (unquoted) as anything but a string."""
    if text in _V2_MAP_WORDS:
        return True
    first = text[0]
    if first == ".":
        return go_parse_float(text) is not None
    if first in "+-0123456789":
        if _is_v2_timestamp(text):
            return True
        plain = text.replace("_", "")
        if go_parse_int(plain) is not None:
            return True
        if YAML_STYLE_FLOAT.match(plain) and go_parse_float(plain) is not None:
            return True
    return False


def _is_v2_timestamp(text: str) -> bool:
    if len(text) < 5 or not text[:4].isdigit() or text[4] != "-":
        return False
    return _v2_timestamp_parses(text)


_DATE_ONLY = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})\Z", re.ASCII)
_DATE_TIME = re.compile(
    r"^(\d{4})-(\d{1,2})-(\d{1,2})([Tt ])(\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?\Z",
    re.ASCII,
)


def _v2_timestamp_parses(text: str) -> bool:
    """Go time.Parse against yaml.v2's allowed layouts (RFC3339-ish, space-separated, date)."""
    m = _DATE_ONLY.match(text)
    if m:
        return _valid_date(int(m[1]), int(m[2]), int(m[3]))
    m = _DATE_TIME.match(text)
    if not m:
        return False
    sep, zone = m[4], m[9]
    if sep in "Tt" and zone is None:
        return False  # the T layouts require a zone
    if sep == " " and zone is not None:
        return False  # the space layout has no zone
    if not _valid_date(int(m[1]), int(m[2]), int(m[3])):
        return False
    return int(m[5]) < 24 and int(m[6]) < 60 and int(m[7]) < 60


def _valid_date(year: int, month: int, day: int) -> bool:
    if not 1 <= month <= 12:
        return False
    return 1 <= day <= calendar.monthrange(year, month)[1]


def needs_double_quotes(text: str) -> bool:
    """yaml.v2 stringv: a string that would not read back as a string is double-quoted."""
    return _v2_resolves_to_non_string(text) or bool(_BASE60_FLOAT.match(text))


_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1


def go_float_text(value: float) -> str:
    """How the reference writes a finite float64 of an object: encoding/json writes a whole float
    below 1e21 as the shortest digits that read back as it, in fixed notation (2**63 as
    9223372036854776000); sigs.k8s.io/yaml reads that text back with yaml.v2, as an integer where
    an int64 or a uint64 holds it, else as a float, printed with ``go_format_float`` (2**64 as
    1.8446744073709552e+19, -2**63-1 as -9.223372036854776e+18)."""
    if value == int(value) and abs(value) < 1e21:
        digits = int(Decimal(repr(value)))
        if _INT64_MIN <= digits <= _UINT64_MAX:
            return str(digits)
    return go_format_float(value)


def go_format_float(value: float) -> str:
    """strconv.FormatFloat(value, 'g', -1, 64), the way yaml.v2 prints a float64."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)  # type: ignore[operator]
    digits = stripped
    point = len(digits) + exponent  # type: ignore[operator]
    prefix = "-" if sign else ""
    decimal_exp = point - 1
    if decimal_exp < -4 or decimal_exp >= 6:  # Go uses eprec = 6 for shortest formatting
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if decimal_exp < 0 else '+'}{abs(decimal_exp):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{prefix}{digits}{'0' * (point - len(digits))}"
    return f"{prefix}{digits[:point]}.{digits[point:]}"
