"""The farm's descriptor: the capability rendering keys handlers dispatch on.

A change of what a handler dispatches on changes how a subject renders without changing any
catalog byte, so profiled evidence records the identity of the entries that touch its subject.
The descriptor is append-only: an entry is never removed, only added.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

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
