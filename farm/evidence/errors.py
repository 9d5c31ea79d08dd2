"""The one error type of the evidence package: a stable code plus a message that names what failed."""

from __future__ import annotations

import json
from typing import Any


class EvidenceError(ValueError):
    """Evidence that is malformed, forged or untrusted. ``code`` is stable (``signature.untrusted``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def strict_json_loads(data: bytes, code: str, what: str) -> Any:
    """Parse UTF-8 JSON, refusing duplicate keys, NaN/Infinity and invalid UTF-8."""

    def refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise EvidenceError(code, f"{what}: duplicate key {key!r}")
            result[key] = value
        return result

    def refuse_constant(name: str) -> Any:
        raise EvidenceError(code, f"{what}: {name} is not valid JSON")

    try:
        text = data.decode("utf-8")
        return json.loads(text, object_pairs_hook=refuse_duplicates, parse_constant=refuse_constant)
    except UnicodeDecodeError:
        raise EvidenceError(code, f"{what}: not UTF-8") from None
    except json.JSONDecodeError as error:
        raise EvidenceError(code, f"{what}: not JSON ({error.msg} at offset {error.pos})") from None


def require_exact_keys(obj: Any, keys: set[str], code: str, what: str) -> dict[str, Any]:
    """``obj`` must be a JSON object with exactly ``keys``; unknown and missing keys are named."""
    if not isinstance(obj, dict):
        raise EvidenceError(code, f"{what}: expected a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - keys)
    missing = sorted(keys - set(obj))
    if unknown:
        raise EvidenceError(code, f"{what}: unknown field(s) {', '.join(unknown)}")
    if missing:
        raise EvidenceError(code, f"{what}: missing field(s) {', '.join(missing)}")
    return obj
