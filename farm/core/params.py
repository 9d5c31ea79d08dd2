"""kurel.yaml parameters: values files, ``--set``, defaults and ``${param}`` substitution.

Substitution touches scalar values only (never mapping keys). A value that is exactly ``${p}``
becomes the parameter's typed value; a ``${p}`` inside a longer string is replaced by its text.
Without a kurel.yaml nothing is substituted and ``${...}`` stays literal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from farm.core import yamlio
from farm.core.documents import Package, Parameter
from farm.core.errors import ParameterError
from farm.core.fields import go_type_name

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_.-]*)\}")


def parse_values_file(
    data: bytes | str | None, source: str = "values.yaml", memo: yamlio.DocumentMemo | None = None
) -> dict[str, Any]:
    if data is None:
        return {}
    try:
        values = yamlio.load(data, source=source, memo=memo)
    except yamlio.YAMLError as exc:
        raise ParameterError(str(exc)) from None
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise ParameterError(f"{source}: values must be a mapping, got {go_type_name(values)}")
    return values


def parse_set_flags(sets: tuple[str, ...] | list[str]) -> dict[str, str]:
    result: dict[str, str] = {}
    for entry in sets:
        key, sep, value = entry.partition("=")
        if not sep or not key:
            raise ParameterError(f"--set {entry!r}: expected key=value")
        result[key] = value
    return result


def _coerce_set(param: Parameter, text: str) -> Any:
    if param.type == "string":
        return text
    if param.type == "integer":
        try:
            return int(text, 10)
        except ValueError:
            raise ParameterError(
                f"--set {param.name}={text}: parameter {param.name!r} must be an integer"
            ) from None
    if text in ("true", "false"):
        return text == "true"
    raise ParameterError(
        f"--set {param.name}={text}: parameter {param.name!r} must be a boolean (true or false)"
    )


def _check_typed(param: Parameter, value: Any, origin: str) -> Any:
    expected = {"string": str, "integer": int, "boolean": bool}[param.type]
    ok = isinstance(value, expected) and not (param.type == "integer" and isinstance(value, bool))
    if not ok:
        raise ParameterError(
            f"{origin}: parameter {param.name!r} must be of type {param.type}, got {go_type_name(value)}"
        )
    return value


def merge_values(layers: Sequence[tuple[str, dict[str, Any]]]) -> tuple[dict[str, Any], dict[str, str]]:
    """The values of several files layered in order, and the file each value came from.

    The one rule for layered values (a catalog's ``values.yaml`` under ``values/<cluster>.yaml``):
    a later file's mapping is merged into an earlier one key by key, recursively, as helm merges
    values files; any other value of a later file replaces the earlier one, ``null`` included.
    """
    merged: dict[str, Any] = {}
    origins: dict[str, str] = {}
    for source, values in layers:
        merged = _deep_merge(merged, values)
        origins.update(dict.fromkeys(values, source))
    return merged, origins


def _deep_merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    result = dict(base)
    for key, value in overlay.items():
        earlier = result.get(key)
        both_mappings = isinstance(earlier, dict) and isinstance(value, dict)
        result[key] = _deep_merge(earlier, value) if both_mappings else value
    return result


def resolve_parameters(
    package: Package,
    values: dict[str, Any],
    sets: dict[str, str],
    values_source: str | Mapping[str, str] = "values.yaml",
) -> dict[str, Any]:
    """The final value of every declared parameter, in declaration order.

    ``values_source`` names the values file in messages: one name, or the file of each key.
    """
    declared = {p.name: p for p in package.spec.parameters or []}

    def origin(key: str) -> str:
        if isinstance(values_source, str):
            return values_source
        return values_source.get(key, "values.yaml")

    for key in values:
        if key not in declared:
            raise ParameterError(f"{origin(key)}: undeclared parameter {key!r}")
    for key in sets:
        if key not in declared:
            raise ParameterError(f"--set {key}: undeclared parameter {key!r}")
    resolved: dict[str, Any] = {}
    for param in package.spec.parameters or []:
        if param.name in sets:
            resolved[param.name] = _coerce_set(param, sets[param.name])
        elif param.name in values and values[param.name] is not None:
            resolved[param.name] = _check_typed(param, values[param.name], origin(param.name))
        elif param.default is not None:
            default = param.default
            if param.type == "string" and isinstance(default, str):
                default = _substitute_text(default, resolved)
            resolved[param.name] = _check_typed(param, default, f"kurel.yaml default of {param.name!r}")
        elif param.required:
            raise ParameterError(f"parameter {param.name!r} is required but has no value")
    return resolved


def _substitute_text(text: str, params: dict[str, Any]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in params:
            return match.group(0)
        value = params[name]
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return _REFERENCE.sub(replace, text)


def substitute(document: Any, params: dict[str, Any]) -> Any:
    """Replace ``${p}`` in every scalar value of ``document`` (keys are left alone)."""
    if isinstance(document, dict):
        return {key: substitute(value, params) for key, value in document.items()}
    if isinstance(document, list):
        return [substitute(item, params) for item in document]
    if isinstance(document, str) and "${" in document:
        whole = _REFERENCE.fullmatch(document)
        if whole and whole.group(1) in params:
            return params[whole.group(1)]
        return _substitute_text(document, params)
    return document
