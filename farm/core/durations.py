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
_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_MAX = 2**63 - 1


class DurationError(ValueError):
    pass


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string; raises DurationError with Go's message."""
    original = text
    if text in ("0", "+0", "-0"):
        return 0
    sign = 1
    if text[:1] in "+-":
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if not text:
        raise DurationError(f'time: invalid duration "{original}"')
    total = 0
    pos = 0
    while pos < len(text):
        match = _PART.match(text, pos)
        if not match:
            if re.match(r"(\d+\.?\d*|\.\d+)", text[pos:]) and not re.match(
                r"(\d+\.?\d*|\.\d+)[a-zµμ]", text[pos:]
            ):
                raise DurationError(f'time: missing unit in duration "{original}"')
            unit = re.match(r"[\d.]*([^\d.]*)", text[pos:])
            if unit and unit.group(1):
                raise DurationError(f'time: unknown unit "{unit.group(1)}" in duration "{original}"')
            raise DurationError(f'time: invalid duration "{original}"')
        number, unit = match.group(1), match.group(2)
        whole, _, frac = number.partition(".")
        scale = _UNITS[unit]
        value = int(whole or "0") * scale
        if frac:
            value += int(frac) * scale // (10 ** len(frac))
        total += value
        pos = match.end()
    if total > _MAX:
        raise DurationError(f'time: invalid duration "{original}"')
    return sign * total


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
