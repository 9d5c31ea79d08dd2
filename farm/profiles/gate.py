"""The profile gate (reference 1.C, R27–R30): a ResolvedClusterProfile is never trusted.

Whoever holds a stored or passed-in resolved ClusterProfile (the worker about to render a profiled
request, a verifier) calls ``check_resolved_profile`` with the inputs it was resolved from: the base
ClusterProfile and the declaration of the catalog snapshot. The gate checks its shape, then resolves
the recorded selection again and requires the recomputed bytes, so a recorded ``ownedPaths`` that
strips a lock, adds one, or names an undeclared value is refused, never believed.

Codes: ``profile.resolved_malformed`` (not a resolved ClusterProfile), ``profile.resolved_mismatch`` (a
``selectedProfile`` on a ClusterProfile with no declaration, or none on one that has one),
``profile.resolved_bad_selected`` (R28's structure) and ``profile.resolved_forged`` (the
recomputation disagrees).
"""

from __future__ import annotations

import json
from typing import Any

from farm.profiles.declaration import Declaration
from farm.profiles.errors import ProfileError
from farm.profiles.resolve import PRESENT, ResolvedClusterProfile, resolve
from farm.profiles.selection import Selection, is_identifier

MALFORMED = "profile.resolved_malformed"
MISMATCH = "profile.resolved_mismatch"
BAD_SELECTED = "profile.resolved_bad_selected"
FORGED = "profile.resolved_forged"


def check_resolved_profile(
    recorded: bytes,
    cluster_profile: bytes,
    cluster_source: str,
    declaration: Declaration | None,
    *,
    effective: bytes | None = None,
    expected_digest: str | None = None,
) -> ResolvedClusterProfile:
    """The recomputed resolution of ``recorded``'s selection, when ``recorded`` (a resolved
    ClusterProfile document) is exactly it.

    ``effective`` (the ClusterProfile bytes a request would render) and ``expected_digest`` are
    checked against the recomputation too when given. Raises ``ProfileError`` (codes above).
    """
    where = f"resolved ClusterProfile of {cluster_source}"
    body = _decode(recorded, where)
    selected = body.get("selectedProfile")
    if (selected is None) != (declaration is None):
        state = "declares no profile" if declaration is None else f"declares profile {declaration.name!r}"
        raise ProfileError(MISMATCH, f"{where}: selectedProfile does not match the catalog, which {state}")
    selection = _check_selected(selected, where) if selected is not None else None
    try:
        resolved = resolve(cluster_profile, cluster_source, declaration, selection)
    except ProfileError as error:
        raise ProfileError(
            FORGED, f"{where}: the recorded selection does not resolve: {error.message}"
        ) from None
    if selected is not None:
        _compare_owned(selected["ownedPaths"], resolved, where)
    if recorded != resolved.document:
        raise ProfileError(FORGED, f"{where}: it differs from a fresh resolution of the catalog")
    if effective is not None and effective != resolved.effective:
        raise ProfileError(FORGED, f"{where}: the ClusterProfile to render differs from the resolved one")
    if expected_digest is not None and expected_digest != resolved.digest:
        raise ProfileError(FORGED, f"{where}: digest {resolved.digest} is not the expected {expected_digest}")
    return resolved


def _decode(recorded: bytes, where: str) -> dict[str, Any]:
    try:
        body = json.loads(recorded)
    except (ValueError, UnicodeDecodeError) as error:
        raise ProfileError(MALFORMED, f"{where}: not JSON ({error})") from None
    if not isinstance(body, dict):
        raise ProfileError(MALFORMED, f"{where}: expected an object")
    return body


def _check_selected(selected: Any, where: str) -> Selection:
    """R28: name and value identifiers; ownedPaths a map of sorted, unique path lists with $present."""
    if not isinstance(selected, dict) or set(selected) != {"name", "value", "ownedPaths"}:
        raise ProfileError(
            BAD_SELECTED, f"{where}: selectedProfile must hold exactly name, value and ownedPaths"
        )
    for field in ("name", "value"):
        if not is_identifier(selected[field]):
            raise ProfileError(
                BAD_SELECTED, f"{where}: selectedProfile.{field} {selected[field]!r} is not an identifier"
            )
    owned = selected["ownedPaths"]
    if not isinstance(owned, dict) or not owned:
        raise ProfileError(BAD_SELECTED, f"{where}: selectedProfile.ownedPaths must be a non-empty map")
    for capability, paths in owned.items():
        _check_paths(capability, paths, where)
    return Selection(selected["name"], selected["value"])


def _check_paths(capability: str, paths: Any, where: str) -> None:
    at = f"{where}: selectedProfile.ownedPaths[{capability!r}]"
    if not capability:
        raise ProfileError(BAD_SELECTED, f"{at}: empty capability key")
    if not isinstance(paths, list) or not all(isinstance(path, str) for path in paths):
        raise ProfileError(BAD_SELECTED, f"{at}: must be a list of strings")  # never iterate a string
    if paths != sorted(set(paths)):
        raise ProfileError(BAD_SELECTED, f"{at}: must be sorted by code point, without duplicates")
    if PRESENT not in paths:
        raise ProfileError(BAD_SELECTED, f"{at}: must contain {PRESENT!r}")
    for path in paths:
        if path != PRESENT and (not path or path.startswith(".") or path.endswith(".") or ".." in path):
            raise ProfileError(BAD_SELECTED, f"{at}: {path!r} is not a dotted path")


def _compare_owned(recorded: dict[str, list[str]], resolved: ResolvedClusterProfile, where: str) -> None:
    recomputed = {capability: list(paths) for capability, paths in resolved.owned.items()}
    if recorded == recomputed:
        return
    for capability in sorted(set(recorded) | set(recomputed)):
        ours, theirs = set(recomputed.get(capability, ())), set(recorded.get(capability, ()))
        if ours != theirs:
            raise ProfileError(
                FORGED,
                f"{where}: ownedPaths of capability {capability!r} recorded as {sorted(theirs)},"
                f" the declaration owns {sorted(ours)}",
            )


def selection_of(recorded: bytes) -> str:
    """The ``name=value`` a resolved ClusterProfile records ("" when unprofiled); use after
    ``check_resolved_profile``."""
    selected = _decode(recorded, "resolved ClusterProfile").get("selectedProfile")
    return f"{selected['name']}={selected['value']}" if isinstance(selected, dict) else ""
