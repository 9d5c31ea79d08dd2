"""The farm's descriptor: the capability rendering keys handlers dispatch on.

A change of what a handler dispatches on changes how a subject renders without changing any
catalog byte, so profiled evidence records the identity of the entries that touch its subject.
The descriptor is append-only: an entry is never removed, only added.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from farm.core import yamlio

DESCRIPTOR: tuple[tuple[str, str], ...] = (
    ("expose", "controllerType"),
    ("certificates", "issuerRef.kind"),
)


def descriptor_entries(
    capability_keys: Iterable[str], descriptor: Iterable[tuple[str, str]] = DESCRIPTOR
) -> dict[str, list[str]]:
    """The entries whose capability is present in a subject (bare key or a scoped ``key.scope``)."""
    present = set(capability_keys)
    entries: dict[str, set[str]] = {}
    for capability, path in descriptor:
        touching = {key for key in present if key == capability or key.startswith(capability + ".")}
        for key in touching:
            entries.setdefault(key, set()).add(path)
    return {key: sorted(paths) for key, paths in entries.items()}


def identity_for(entries: dict[str, list[str]]) -> str:
    """sha256 over ``capability:path\\n`` lines, capabilities sorted, paths sorted; sha256("") if none."""
    lines = "".join(f"{key}:{path}\n" for key in sorted(entries) for path in sorted(set(entries[key])))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def descriptor_identity(
    capability_keys: Iterable[str], descriptor: Iterable[tuple[str, str]] = DESCRIPTOR
) -> str:
    return identity_for(descriptor_entries(capability_keys, descriptor))


def cluster_profile_identity(cluster_profile: bytes, source: str = "ClusterProfile") -> str:
    """The descriptor identity of a ClusterProfile document's capabilities.

    Read with the farm's yaml.v3 loader (``farm.core.yamlio``), as the core reads the document it
    renders: ``on:`` is the string key ``on`` and a plain ``=`` is the string ``=``, where
    PyYAML's YAML 1.1 resolver would make a boolean or refuse the value tag.
    """
    document = yamlio.load(cluster_profile, source=source) or {}
    spec = document.get("spec") if isinstance(document, dict) else None
    capabilities = spec.get("capabilities") if isinstance(spec, dict) else None
    return descriptor_identity([str(key) for key in capabilities] if isinstance(capabilities, dict) else [])
