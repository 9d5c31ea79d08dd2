"""Go ``time.ParseDuration`` and ``Duration.String`` (``1h`` prints as ``1h0m0s``)."""

from __future__ import annotations

import re

_UNITS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_MAX = 2**63 - 1


class DurationError(ValueError):
    pass


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string; raises DurationError with Go's message."""
    original, rest = text, text
    negative = False
    if rest[:1] in ("+", "-"):
        negative = rest[0] == "-"
        rest = rest[1:]
    if rest == "0":
        return 0
    if rest == "":
        raise DurationError(f'time: invalid duration "{original}"')
    total = 0
    while rest:
        if not (rest[0] == "." or "0" <= rest[0] <= "9"):
            raise DurationError(f'time: invalid duration "{original}"')
        number = re.match(r"([0-9]*)(?:\.([0-9]*))?", rest)
        assert number is not None
        whole, fraction = number.group(1), number.group(2)
        if not whole and not fraction:
            raise DurationError(f'time: invalid duration "{original}"')
        rest = rest[number.end() :]
        unit_match = re.match(r"[^0-9.]*", rest)
        unit = unit_match.group(0) if unit_match else ""
        if not unit:
            raise DurationError(f'time: missing unit in duration "{original}"')
        if unit not in _UNITS:
            raise DurationError(f'time: unknown unit "{unit}" in duration "{original}"')
        rest = rest[len(unit) :]
        scale = _UNITS[unit]
        if len(whole.lstrip("0")) > 19:  # beyond int64 before any unit: Go's overflow
            raise DurationError(f'time: invalid duration "{original}"')
        total += int(whole or "0") * scale
        if fraction:
            fraction = fraction[:30]  # Go stops reading digits long before nanoseconds change
            total += int(fraction) * scale // (10 ** len(fraction))
        if total > _MAX:
            raise DurationError(f'time: invalid duration "{original}"')
    return -total if negative else total


def _format_fraction(value: int, precision: int) -> tuple[str, int]:
    digits = ""
    printed = False
    for _ in range(precision):
        digit = value % 10
        printed = printed or digit != 0
        if printed:
            digits = str(digit) + digits
        value //= 10
    return ("." + digits if printed else ""), value


def format_duration(nanoseconds: int) -> str:
    """Go's Duration.String."""
    if nanoseconds == 0:
        return "0s"
    negative = nanoseconds < 0
    u = -nanoseconds if negative else nanoseconds
    if u < 1_000_000_000:
        if u < 1_000:
            text = f"{u}ns"
        elif u < 1_000_000:
            frac, whole = _format_fraction(u, 3)
            text = f"{whole}{frac}µs"
        else:
            frac, whole = _format_fraction(u, 6)
            text = f"{whole}{frac}ms"
    else:
        frac, seconds_total = _format_fraction(u, 9)
        seconds = seconds_total % 60
        minutes_total = seconds_total // 60
        text = f"{seconds}{frac}s"
        if minutes_total > 0:
            minutes = minutes_total % 60
            hours = minutes_total // 60
            text = f"{minutes}m{text}"
            if hours > 0:
                text = f"{hours}h{text}"
    return "-" + text if negative else text


def normalize_duration(text: str) -> str:
    return format_duration(parse_duration(text))
