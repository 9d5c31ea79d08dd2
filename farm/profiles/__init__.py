"""Configuration profiles (seed 004): declarations, selection, resolution, owned paths, locks.

Pure: bytes in, values out; no database, no network. It may import ``farm.core``; the core never
imports it.

Interface used by the qualification half:

- ``parse_declaration(data: bytes, source: str) -> Declaration`` decodes one
  ``ConfigurationProfile`` document strictly; every broken rule raises ``ProfileError`` with a
  stable ``code`` (``profile.*``) and a message naming ``source`` and the path in it.
- ``parse_selection(text: str) -> Selection`` takes the one wire form ``name=value``.
- ``resolve(cluster_profile, cluster_source, declaration, selection) -> ResolvedClusterProfile``:
  ``effective`` (the ClusterProfile bytes the core renders, fragment applied last), ``document``
  (canonical JSON bytes recording ``selectedProfile {name, value, ownedPaths}`` when profiled),
  ``digest`` (sha256 hex of the document: the qualification subject) and ``selected``
  (the Selection, or None for an unprofiled ClusterProfile). ``selection=None`` on a declaration
  means its default.
- ``check_locks(owned_paths, before, after)`` (farm.profiles.locks) raises ``ProfileError``
  ``profile.lock_divergence`` when a merged result changes an owned path.

On ``farm.catalog.snapshot.CatalogSnapshot`` (catalog wiring):

- ``declarations: dict[str, Declaration]`` cluster name → its declaration;
- ``subjects() -> list[tuple[str, str, str]]`` every (cluster, profile name, value) for declared
  values and (cluster, "", "") for clusters without a declaration;
- ``resolved_for(cluster: str, selection: Selection | None) -> ResolvedClusterProfile``;
- ``subject_requests(cluster: str, selection: Selection | None) -> list[TargetRequest]`` the
  requests of every target of that cluster rendered under that selection.
"""

from farm.profiles.declaration import (
    Declaration,
    ProfileError,
    ProfileValue,
    parse_declaration,
)
from farm.profiles.resolve import ResolvedClusterProfile, owned_paths, resolve
from farm.profiles.selection import Selection, parse_selection

__all__ = [
    "Declaration",
    "ProfileError",
    "ProfileValue",
    "ResolvedClusterProfile",
    "Selection",
    "owned_paths",
    "parse_declaration",
    "parse_selection",
    "resolve",
]
