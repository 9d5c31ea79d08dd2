"""Resolution of a ClusterProfile under a selection (reference 1.B): effective bytes + the resolved
ClusterProfile document (its canonical JSON, whose digest is the qualification subject)."""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from farm.core import yamlio
from farm.core.documents import load_cluster_profile
from farm.profiles.declaration import Declaration, leaf_paths
from farm.profiles.errors import ProfileError
from farm.profiles.selection import Selection

ENVELOPE_API_VERSION = "farm.dev/v1alpha1"
ENVELOPE_KIND = "ResolvedClusterProfile"
PRESENT = "$present"


@dataclass(frozen=True)
class ResolvedClusterProfile:
    effective: bytes  # the ClusterProfile bytes the core renders
    document: bytes  # canonical JSON of the ResolvedClusterProfile
    digest: str  # sha256 hex of document: the qualification subject
    selected: Selection | None
    owned: dict[str, tuple[str, ...]]  # capability key → owned paths ({} when unprofiled)


def canonical(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def owned_paths(declaration: Declaration) -> dict[str, list[str]]:
    """Union of leaf paths over all values plus ``$present`` per capability, sorted by code point."""
    union: dict[str, set[str]] = {}
    for value in declaration.values:
        for cap, rendering in value.fragment.items():
            union.setdefault(cap, {PRESENT}).update(leaf_paths(rendering))
    return {cap: sorted(paths) for cap, paths in sorted(union.items())}


def merge(base: Any, fragment: dict[str, Any]) -> dict[str, Any]:
    """The launcher merge: maps recurse; lists and scalars replace whole."""
    result = dict(base) if isinstance(base, dict) else {}
    for key, value in fragment.items():
        if isinstance(value, dict):
            result[key] = merge(result.get(key), value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _select(declaration: Declaration, selection: Selection | None, cluster: str) -> Selection:
    chosen = selection or Selection(declaration.name, declaration.default)
    if chosen.name != declaration.name:
        raise ProfileError(
            "profile.unknown_profile",
            f"cluster {cluster}: no profile {chosen.name!r} (declared: {declaration.name!r}"
            f" in {declaration.source})",
        )
    if declaration.value(chosen.value) is None:
        names = ", ".join(value.name for value in declaration.values)
        raise ProfileError(
            "profile.unknown_value",
            f"cluster {cluster}: profile {declaration.name!r} has no value {chosen.value!r}"
            f" (declared: {names})",
        )
    return chosen


def resolve(
    cluster_profile: bytes,
    cluster_source: str,
    declaration: Declaration | None,
    selection: Selection | None,
) -> ResolvedClusterProfile:
    """Resolve ``cluster_profile`` under ``selection`` (None: the declaration's default)."""
    profile = load_cluster_profile(cluster_profile, cluster_source)
    cluster = profile.metadata.name
    raw = yamlio.load(cluster_profile, source=cluster_source)
    capabilities = dict((raw.get("spec") or {}).get("capabilities") or {})
    if declaration is None:
        if selection is not None:
            raise ProfileError(
                "profile.no_declaration",
                f"{cluster_source}: selection {selection} on ClusterProfile {cluster},"
                " which declares no profile",
            )
        document = _document(cluster, profile.spec.gitopsEngine, capabilities, None)
        return ResolvedClusterProfile(
            cluster_profile, document, hashlib.sha256(document).hexdigest(), None, {}
        )
    chosen = _select(declaration, selection, cluster)
    value = declaration.value(chosen.value)
    assert value is not None
    for other in declaration.values:
        for cap in other.fragment:
            if cap not in capabilities:
                raise ProfileError(
                    "profile.capability_absent",
                    f"{declaration.source}: value {other.name!r} names capability {cap!r},"
                    f" which ClusterProfile {cluster} ({cluster_source}) does not have",
                )
    for cap, rendering in value.fragment.items():
        entry = dict(capabilities[cap] or {})
        entry["rendering"] = merge(entry.get("rendering"), rendering)
        capabilities[cap] = entry
    effective_raw = dict(raw)
    effective_raw["spec"] = {**(raw.get("spec") or {}), "capabilities": capabilities}
    owned = owned_paths(declaration)
    selected = {"name": chosen.name, "value": chosen.value, "ownedPaths": owned}
    document = _document(cluster, profile.spec.gitopsEngine, capabilities, selected)
    return ResolvedClusterProfile(
        effective=yamlio.dump_document(effective_raw).encode("utf-8"),
        document=document,
        digest=hashlib.sha256(document).hexdigest(),
        selected=chosen,
        owned={cap: tuple(paths) for cap, paths in owned.items()},
    )


def _document(
    cluster: str, engine: str, capabilities: dict[str, Any], selected: dict[str, Any] | None
) -> bytes:
    body: dict[str, Any] = {
        "apiVersion": ENVELOPE_API_VERSION,
        "kind": ENVELOPE_KIND,
        "clusterProfile": cluster,
        "gitopsEngine": engine,
        "capabilities": capabilities,
    }
    if selected is not None:
        body["selectedProfile"] = selected
    return canonical(body)
