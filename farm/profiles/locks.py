"""The lock check (reference 1.D): an owned path must read the same before and after a merge."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from farm.core.capabilities import merge_rendering, resolve_capability
from farm.core.documents import load_application_data
from farm.core.render import load_app_document
from farm.core.request import RenderRequest
from farm.core.yamlio import DocumentMemo
from farm.profiles.errors import ProfileError
from farm.profiles.resolve import PRESENT, canonical

ABSENT = ("absent",)
BLOCKED = ("blocked",)


def observe(rendering: Any, path: str) -> tuple[str, ...]:
    """Three-valued: ("present", canonical bytes), ("absent",) or ("blocked",) by a non-map."""
    node = rendering
    for part in path.split("."):
        if not isinstance(node, dict):
            return BLOCKED
        if part not in node:
            return ABSENT
        node = node[part]
    return ("present", canonical(node).decode("utf-8"))


def check_locks(
    owned: Mapping[str, tuple[str, ...] | list[str]],
    resolved: Mapping[str, Any],
    merged: Mapping[str, Any],
    *,
    application: str,
) -> None:
    """Raise ``profile.lock_divergence`` when ``merged`` (capability → rendering after the
    application's trait properties) differs from ``resolved`` at any owned path."""
    for cap, paths in owned.items():
        if (cap in resolved) != (cap in merged):
            raise _divergence(application, cap, PRESENT)
        for path in paths:
            if path == PRESENT:
                continue
            if observe(resolved.get(cap), path) != observe(merged.get(cap), path):
                raise _divergence(application, cap, path)


def _divergence(application: str, cap: str, path: str) -> ProfileError:
    return ProfileError(
        "profile.lock_divergence",
        f"application {application}: capability {cap!r} path {path!r} is owned by the selected"
        " profile; the application's trait properties may not change it",
    )


def check_request_locks(request: RenderRequest, memo: DocumentMemo | None = None) -> None:
    """The lock check of one profiled request, before anything renders or is written: every
    trait bound to an owned capability must leave each owned path as the profile set it.
    Raises ``ProfileError`` (``profile.lock_divergence``); an unprofiled request does nothing."""
    if request.resolved_profile is None:
        return
    resolved = json.loads(request.resolved_profile)
    owned = resolved["selectedProfile"]["ownedPaths"]
    capabilities = {
        key: (entry or {}).get("rendering") or {} for key, entry in resolved["capabilities"].items()
    }
    application = load_application_data(load_app_document(request, memo), source=request.app_source)
    for component in application.spec.components or []:
        for trait in component.traits or []:
            properties = trait.properties or {}
            bound = resolve_capability(capabilities, trait.type, properties)
            if bound is None or bound[0] not in owned:
                continue
            key, rendering = bound
            merged = merge_rendering(rendering, properties)
            check_locks(
                {key: owned[key]}, {key: rendering}, {key: merged}, application=application.metadata.name
            )
