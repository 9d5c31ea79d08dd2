"""Presence-reporting property readers with the reference's exact wrong-type messages.

Each reader returns ``(value, present)``. A null and an absent key are the same: not present.
``parse_string_field`` also treats ``""`` as absent; callers that must refuse an empty string
(enums, ``claimName``) read the raw value instead. Messages name Go's type names, as the reference
does: ``port: must be an integer within int32 range, got 5000000000``.
"""

from __future__ import annotations

import math
from typing import Any

from farm.core.errors import FieldError

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def go_type_name(value: Any) -> str:
    """The Go dynamic type name a YAML-decoded value has (as in ``got int``)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return type(value).__name__


def go_value_repr(value: Any) -> str:
    """How Go's %v prints a decoded scalar."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "+Inf" if value > 0 else "-Inf"
        if value == int(value):
            return str(int(value)) if abs(value) < 1e21 else f"{value:g}"
        return repr(value)
    if value is None:
        return "<nil>"
    return str(value)


def _absent(value: Any) -> bool:
    return value is None


def parse_string_field(props: dict[str, Any], key: str, path: str | None = None) -> tuple[str, bool]:
    """A string property; ``""`` and null read as absent."""
    value = props.get(key)
    if _absent(value):
        return "", False
    if not isinstance(value, str):
        raise FieldError(f"{path or key}: must be a string, got {go_type_name(value)}")
    return value, value != ""


def required_string_field(props: dict[str, Any], key: str, parent: str, path: str | None = None) -> str:
    """A required string: a wrong type is a type error, absent/empty/null is ``<parent>: <key> is required``."""
    value, present = parse_string_field(props, key, path or (f"{parent}.{key}" if parent else key))
    if not present:
        raise FieldError(f"{parent}: {key} is required" if parent else f"{key} is required")
    return value


def parse_bool_field(props: dict[str, Any], key: str, path: str | None = None) -> tuple[bool, bool]:
    value = props.get(key)
    if _absent(value):
        return False, False
    if not isinstance(value, bool):
        raise FieldError(f"{path or key}: must be a boolean, got {go_type_name(value)}")
    return value, True


def _whole_number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return int(value)
    return None


def _parse_int_field(
    props: dict[str, Any], key: str, path: str | None, low: int, high: int, bits: int
) -> tuple[int, bool]:
    value = props.get(key)
    if _absent(value):
        return 0, False
    number = _whole_number(value)
    if number is None:
        if isinstance(value, float):
            raise FieldError(f"{path or key}: must be a whole number, got {go_value_repr(value)}")
        raise FieldError(f"{path or key}: must be an integer, got {go_type_name(value)}")
    if not low <= number <= high:
        raise FieldError(f"{path or key}: must be an integer within int{bits} range, got {number}")
    return number, True


def parse_int32_field(props: dict[str, Any], key: str, path: str | None = None) -> tuple[int, bool]:
    return _parse_int_field(props, key, path, INT32_MIN, INT32_MAX, 32)


def parse_int64_field(props: dict[str, Any], key: str, path: str | None = None) -> tuple[int, bool]:
    return _parse_int_field(props, key, path, INT64_MIN, INT64_MAX, 64)


def parse_object_field(
    props: dict[str, Any], key: str, path: str | None = None
) -> tuple[dict[str, Any], bool]:
    value = props.get(key)
    if _absent(value):
        return {}, False
    if not isinstance(value, dict):
        raise FieldError(f"{path or key}: must be an object, got {go_type_name(value)}")
    return value, True


def parse_list_field(props: dict[str, Any], key: str, path: str | None = None) -> tuple[list[Any], bool]:
    value = props.get(key)
    if _absent(value):
        return [], False
    if not isinstance(value, list):
        raise FieldError(f"{path or key}: must be a list, got {go_type_name(value)}")
    return value, True


def parse_object_list(
    props: dict[str, Any], key: str, path: str | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """A list whose entries must be objects; a wrong entry is named by its index."""
    items, present = parse_list_field(props, key, path)
    name = path or key
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise FieldError(f"{name}[{index}]: must be an object, got {go_type_name(item)}")
    return items, present


def parse_string_list(props: dict[str, Any], key: str, path: str | None = None) -> tuple[list[str], bool]:
    items, present = parse_list_field(props, key, path)
    name = path or key
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise FieldError(f"{name}[{index}]: must be a string, got {go_type_name(item)}")
    return items, present
