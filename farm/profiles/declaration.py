"""Strict decoding of one ``ConfigurationProfile`` document (seed 004, reference 1.A)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from farm.core import yamlio
from farm.profiles.errors import ProfileError
from farm.profiles.selection import is_identifier

API_VERSION = "farm.dev/v1alpha1"
KIND = "ConfigurationProfile"
MAX_SAFE_INT = 2**53 - 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _Metadata(_Strict):
    name: str


class _Capability(_Strict):
    rendering: dict[str, Any]


class _Value(_Strict):
    name: str
    capabilities: dict[str, _Capability]


class _Spec(_Strict):
    clusterProfile: str
    description: str = ""
    default: str
    values: list[_Value]


class _Document(_Strict):
    apiVersion: str
    kind: str
    metadata: _Metadata
    spec: _Spec


@dataclass(frozen=True)
class ProfileValue:
    name: str
    fragment: dict[str, dict[str, Any]]  # capability key → rendering fragment


@dataclass(frozen=True)
class Declaration:
    name: str
    cluster_profile: str
    description: str
    default: str
    values: tuple[ProfileValue, ...]
    source: str

    def value(self, name: str) -> ProfileValue | None:
        return next((value for value in self.values if value.name == name), None)


def _fail(code: str, source: str, path: str, what: str) -> ProfileError:
    return ProfileError(code, f"{source}: {path}: {what}")


def _location(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(document)"


def _decode(data: bytes, source: str) -> _Document:
    try:
        documents = yamlio.load_all(data, source=source)
    except yamlio.YAMLError as exc:
        raise ProfileError("profile.invalid_yaml", str(exc)) from None
    if len(documents) != 1:
        raise _fail("profile.invalid_document", source, "(document)", "expected exactly one document")
    raw = documents[0]
    if not isinstance(raw, dict):
        raise _fail("profile.invalid_document", source, "(document)", "expected a map")
    if raw.get("apiVersion") != API_VERSION or raw.get("kind") != KIND:
        raise _fail(
            "profile.unknown_version",
            source,
            "apiVersion",
            f"expected apiVersion {API_VERSION} and kind {KIND}",
        )
    try:
        return _Document.model_validate(raw)
    except ValidationError as exc:
        error = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")[0]
        code = "profile.unknown_key" if error["type"] == "extra_forbidden" else "profile.invalid_field"
        what = "unknown field (not in the schema)" if code == "profile.unknown_key" else error["msg"]
        raise _fail(code, source, _location(tuple(error["loc"])), what) from None


def _check_identifier(text: str, source: str, path: str) -> None:
    if not is_identifier(text):
        raise _fail("profile.invalid_identifier", source, path, f"{text!r} must match [A-Za-z0-9._-]+")


def _check_fragment_value(value: Any, source: str, path: str) -> None:
    if value is None:
        raise _fail("profile.null_value", source, path, "null is not allowed in a fragment")
    if isinstance(value, (bool, str)):
        return
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INT:
            raise _fail("profile.unsupported_value", source, path, "integer beyond ±(2^53-1)")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _fail("profile.unsupported_value", source, path, "NaN or Inf is not allowed")
        if value.is_integer() and abs(value) > MAX_SAFE_INT:
            raise _fail("profile.unsupported_value", source, path, "integral float beyond 2^53")
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            _check_fragment_value(item, source, f"{path}[{index}]")
        return
    if isinstance(value, dict):
        _check_fragment_map(value, source, path)
        return
    raise _fail(
        "profile.unsupported_value", source, path, f"{type(value).__name__} is not allowed (quote it)"
    )


def _check_fragment_map(fragment: dict[Any, Any], source: str, path: str) -> None:
    if not fragment:
        raise _fail("profile.empty_map", source, path, "an empty map owns no path")
    for key, value in fragment.items():
        if not isinstance(key, str) or not key:
            raise _fail("profile.invalid_key", source, path, f"key {key!r} must be a non-empty string")
        if "." in key or key.startswith("$"):
            raise _fail(
                "profile.dotted_key",
                source,
                f"{path}.{key}",
                "a fragment key may not contain '.' or start with '$'; nest the map instead",
            )
        _check_fragment_value(value, source, f"{path}.{key}")


def leaf_paths(fragment: dict[str, Any], prefix: str = "") -> list[str]:
    """Leaf-flattened dotted paths: every non-map assignment (lists too) is a leaf; maps recurse."""
    paths: list[str] = []
    for key, value in fragment.items():
        path = f"{prefix}.{key}" if prefix else key
        paths.extend(leaf_paths(value, path) if isinstance(value, dict) else [path])
    return paths


def _leaf_set(value: ProfileValue) -> set[tuple[str, str]]:
    return {(cap, path) for cap, rendering in value.fragment.items() for path in leaf_paths(rendering)}


def parse_declaration(data: bytes, source: str) -> Declaration:
    """Decode and check one declaration; raise ``ProfileError`` naming ``source`` and the path."""
    document = _decode(data, source)
    spec = document.spec
    _check_identifier(document.metadata.name, source, "metadata.name")
    if not spec.clusterProfile:
        raise _fail("profile.invalid_field", source, "spec.clusterProfile", "must not be empty")
    if not spec.values:
        raise _fail("profile.no_values", source, "spec.values", "declare at least one value")
    seen: dict[str, str] = {}
    values = []
    for index, value in enumerate(spec.values):
        where = f"spec.values[{index}]"
        _check_identifier(value.name, source, f"{where}.name")
        if value.name.lower() in seen:
            raise _fail(
                "profile.value_case_collision",
                source,
                f"{where}.name",
                f"{value.name!r} collides with {seen[value.name.lower()]!r} (names are unique ignoring case)",
            )
        seen[value.name.lower()] = value.name
        if not value.capabilities:
            raise _fail("profile.empty_map", source, f"{where}.capabilities", "name at least one capability")
        fragment = {}
        for cap, capability in value.capabilities.items():
            if not cap:
                raise _fail("profile.invalid_key", source, f"{where}.capabilities", "empty capability key")
            _check_fragment_map(capability.rendering, source, f"{where}.capabilities.{cap}.rendering")
            fragment[cap] = capability.rendering
        values.append(ProfileValue(value.name, fragment))
    _check_identifier(spec.default, source, "spec.default")
    if spec.default not in {value.name for value in values}:
        raise _fail(
            "profile.default_not_declared",
            source,
            "spec.default",
            f"{spec.default!r} is not a declared value",
        )
    expected = _leaf_set(values[0])
    for index, value in enumerate(values[1:], start=1):
        actual = _leaf_set(value)
        if actual != expected:
            missing = sorted(f"{c}:{p}" for c, p in expected - actual)
            extra = sorted(f"{c}:{p}" for c, p in actual - expected)
            raise _fail(
                "profile.totality_violation",
                source,
                f"spec.values[{index}]",
                f"value {value.name!r} must assign every path of the union; missing {missing}, extra {extra}",
            )
    return Declaration(
        name=document.metadata.name,
        cluster_profile=spec.clusterProfile,
        description=spec.description,
        default=spec.default,
        values=tuple(values),
        source=source,
    )
