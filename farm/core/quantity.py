"""Kubernetes ``resource.Quantity`` parsing and canonical printing (``0.5`` -> ``500m``,
``1024Mi`` -> ``1Gi``, ``1.5Gi`` -> ``1536Mi``), as apimachinery's ``Quantity.String`` writes it.

Amounts are exact fractions, so the work is bounded before any arithmetic: a number of more than
``MAX_DIGITS`` characters or a decimal exponent beyond ``MAX_EXPONENT`` is refused (``1e999999999``
would otherwise build a number of a billion digits). Such values are far outside any resource.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_QUANTITY = re.compile(
    r"^([+-]?)([0-9]+\.?[0-9]*|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?\Z"
)
MAX_DIGITS = 64
MAX_EXPONENT = 100
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exp: suffix for suffix, exp in _DECIMAL.items()}
_BINARY_SUFFIX = {0: "", 10: "Ki", 20: "Mi", 30: "Gi", 40: "Ti", 50: "Pi", 60: "Ei"}
_NANO = Fraction(1, 10**9)


QUANTITY_SYNTAX_ERROR = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


class QuantityError(ValueError):
    pass


def _split(text: str) -> tuple[Fraction, str]:
    match = _QUANTITY.match(text)
    if not match:
        raise QuantityError(QUANTITY_SYNTAX_ERROR)
    sign, number, suffix = match.group(1), match.group(2), match.group(3) or ""
    if len(number) > MAX_DIGITS:
        raise QuantityError(f"quantities may have at most {MAX_DIGITS} digits, got {len(number)}")
    exponent_form = suffix not in _BINARY and suffix not in _DECIMAL  # "e3", "E-2"; not "E", "Ei"
    if exponent_form and _exponent_out_of_range(suffix[1:]):
        raise QuantityError(f"quantity exponents must be within -{MAX_EXPONENT} and {MAX_EXPONENT}")
    value = Fraction(number)
    if sign == "-":
        value = -value
    if suffix in _BINARY:
        return value * (2 ** _BINARY[suffix]), "binary"
    if suffix in _DECIMAL:
        return value * Fraction(10) ** _DECIMAL[suffix], "decimal"
    return value * Fraction(10) ** int(suffix[1:]), "exponent"


def _exponent_out_of_range(text: str) -> bool:
    digits = text.lstrip("+-").lstrip("0")
    return len(digits) > 4 or int(digits or "0") > MAX_EXPONENT


def is_quantity_syntax(text: str) -> bool:
    """Whether ``text`` has a quantity's syntax (what apimachinery's ParseQuantity accepts), the
    bounds this module adds on digits and exponents aside."""
    return _QUANTITY.match(text.strip()) is not None


def parse_quantity(value: str | int | float) -> Fraction:
    """The exact amount a quantity stands for (in base units)."""
    text = _to_text(value)
    amount, _ = _split(text)
    return amount


def _to_text(value: str | int | float) -> str:
    if isinstance(value, bool):
        raise QuantityError("quantity must be a string or a number")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError("quantity must be finite")
        return repr(value) if value != int(value) else str(int(value))
    return value.strip()


def _round_up_nano(amount: Fraction) -> Fraction:
    scaled = amount / _NANO
    return Fraction(math.ceil(scaled)) * _NANO


def canonical_quantity(value: str | int | float) -> str:
    """The string apimachinery prints for a parsed quantity."""
    amount, fmt = _split(_to_text(value))
    amount = _round_up_nano(amount)
    if amount == 0:
        return "0"
    if fmt == "binary":
        if -1024 < amount < 1024 or amount.denominator != 1:
            fmt = "decimal"
        else:
            return _binary_string(int(amount))
    return _decimal_string(amount, exponent_form=(fmt == "exponent"))


def _binary_string(number: int) -> str:
    exponent = 0
    while exponent < 60 and number % 1024 == 0 and number != 0:
        number //= 1024
        exponent += 10
    return f"{number}{_BINARY_SUFFIX[exponent]}"


def _decimal_string(amount: Fraction, exponent_form: bool) -> str:
    # amount = mantissa * 10^exponent with an integer mantissa and exponent >= -9, a multiple of 3.
    exponent = -9
    mantissa = amount / Fraction(10) ** exponent
    mantissa_int = int(mantissa)
    while exponent < 18 and mantissa_int % 1000 == 0 and mantissa_int != 0:
        mantissa_int //= 1000
        exponent += 3
    if exponent_form:
        return f"{mantissa_int}" if exponent == 0 else f"{mantissa_int}e{exponent}"
    return f"{mantissa_int}{_DECIMAL_SUFFIX[exponent]}"


def is_quantity(value: object) -> bool:
    try:
        parse_quantity(value)  # type: ignore[arg-type]
    except (QuantityError, TypeError):
        return False
    return True
