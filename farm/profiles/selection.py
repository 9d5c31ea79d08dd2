"""The selection wire form ``name=value`` (R16), the same on every surface."""

from __future__ import annotations

import re
from dataclasses import dataclass

from farm.profiles.errors import ProfileError

IDENTIFIER = re.compile(r"[A-Za-z0-9._-]+")


def is_identifier(text: object) -> bool:
    return isinstance(text, str) and IDENTIFIER.fullmatch(text) is not None


@dataclass(frozen=True)
class Selection:
    name: str
    value: str

    def __str__(self) -> str:
        return f"{self.name}={self.value}"


def parse_selection(text: str, *, source: str = "selection") -> Selection:
    """Parse ``name=value``: exactly one ``=``, both sides ``[A-Za-z0-9._-]+``, no whitespace."""
    parts = text.split("=")
    if len(parts) != 2 or not all(is_identifier(part) for part in parts):
        raise ProfileError(
            "profile.invalid_selection",
            f"{source}: {text!r} is not a selection; write name=value (both sides [A-Za-z0-9._-]+, one '=')",
        )
    return Selection(parts[0], parts[1])
