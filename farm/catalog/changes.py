"""Which input documents changed between two catalog snapshots, and which keys in each.

Pure: documents come in through a ``fetch(digest) -> bytes`` handed in, so the same code serves a
live catalog (its documents in memory) and a stored snapshot (its manifest and the object store).
The key diff is a small recursive walk of the parsed YAML rather than a library: its output is the
``spec.a[0].b`` path a person reads in a catalog file, and an added or removed subtree is one entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

Fetch = Callable[[str], bytes]
ADDED, REMOVED, CHANGED = "added", "removed", "changed"
_ABSENT = object()


@dataclass(frozen=True)
class KeyChange:
    """One key of a document: ``old`` is None when it was added, ``new`` when it was removed."""

    path: str
    old: Any
    new: Any
    kind: str = CHANGED

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "old": self.old, "new": self.new}

    def __str__(self) -> str:
        if self.kind == ADDED:
            return f"{self.path}: added {_short(self.new)}"
        if self.kind == REMOVED:
            return f"{self.path}: removed (was {_short(self.old)})"
        return f"{self.path}: {_short(self.old)} → {_short(self.new)}"


@dataclass(frozen=True)
class DocumentChange:
    """One input document added, removed or changed, by its path in the catalog."""

    path: str
    kind: str
    keys: tuple[KeyChange, ...] = ()
    clusters: frozenset[str] = field(default_factory=frozenset)  # ClusterProfiles a declaration names

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "keys": [key.as_json() for key in self.keys]}


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True).strip()
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _join(path: str, key: Any) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else str(key)


def key_changes(old: Any, new: Any, path: str = "") -> list[KeyChange]:
    """Every path whose value differs between two parsed documents, parents before children."""
    if isinstance(old, dict) and isinstance(new, dict):
        changes: list[KeyChange] = []
        for key in [*old, *(k for k in new if k not in old)]:
            changes += key_changes(old.get(key, _ABSENT), new.get(key, _ABSENT), _join(path, key))
        return changes
    if isinstance(old, list) and isinstance(new, list):
        changes = []
        for index in range(max(len(old), len(new))):
            before = old[index] if index < len(old) else _ABSENT
            after = new[index] if index < len(new) else _ABSENT
            changes += key_changes(before, after, _join(path, index))
        return changes
    if old is _ABSENT:
        return [KeyChange(path or "(document)", None, new, ADDED)]
    if new is _ABSENT:
        return [KeyChange(path or "(document)", old, None, REMOVED)]
    if old == new and type(old) is type(new):
        return []
    return [KeyChange(path or "(document)", old, new)]


def _parsed(data: bytes) -> Any:
    """A document's YAML (a list of documents for a multi-document file); its text if not YAML."""
    try:
        documents = list(yaml.safe_load_all(data))
    except yaml.YAMLError:
        return data.decode(errors="replace")
    return documents[0] if len(documents) == 1 else documents


def document_paths(manifest: Mapping[str, Any]) -> dict[str, str]:
    """A snapshot manifest's input documents: path in the catalog (default folder names) → digest."""
    paths = {"fleet.yaml": manifest["fleet"]}
    for name, entry in manifest["applications"].items():
        for key, file in (("app", "app.yaml"), ("package", "kurel.yaml"), ("values", "values.yaml")):
            if entry.get(key):
                paths[f"applications/{name}/{file}"] = entry[key]
        for cluster, digest in entry.get("clusterValues", {}).items():
            paths[f"applications/{name}/values/{cluster}.yaml"] = digest
    for name, digest in manifest["clusters"].items():
        paths[f"clusters/{name}.yaml"] = digest
    for source, digest in manifest.get("profiles", {}).items():
        paths[source] = digest
    return paths


def _declared_clusters(parsed: Any) -> set[str]:
    documents = parsed if isinstance(parsed, list) else [parsed]
    return {
        str(doc["spec"]["clusterProfile"])
        for doc in documents
        if isinstance(doc, dict) and isinstance(doc.get("spec"), dict) and doc["spec"].get("clusterProfile")
    }


def document_changes(
    old: Mapping[str, Any], new: Mapping[str, Any], fetch_old: Fetch, fetch_new: Fetch
) -> list[DocumentChange]:
    """The input documents that differ between manifests ``old`` and ``new``, by path."""
    before, after = document_paths(old), document_paths(new)
    profile_paths = set(old.get("profiles", {})) | set(new.get("profiles", {}))
    changes = []
    for path in sorted(set(before) | set(after)):
        if before.get(path) == after.get(path):
            continue
        old_doc = _parsed(fetch_old(before[path])) if path in before else _ABSENT
        new_doc = _parsed(fetch_new(after[path])) if path in after else _ABSENT
        kind = ADDED if old_doc is _ABSENT else REMOVED if new_doc is _ABSENT else CHANGED
        keys = () if kind != CHANGED else tuple(key_changes(old_doc, new_doc))
        clusters: set[str] = set()
        if path in profile_paths:
            clusters = {
                c for doc in (old_doc, new_doc) if doc is not _ABSENT for c in _declared_clusters(doc)
            }
        changes.append(DocumentChange(path, kind, keys, frozenset(clusters)))
    return changes


@dataclass(frozen=True)
class ChangedInputs:
    """What the cause of a target's new request is read against: the documents that changed."""

    documents: tuple[DocumentChange, ...] = ()

    def cluster_profile_changed(self, cluster: str) -> bool:
        return any(d.path == f"clusters/{cluster}.yaml" for d in self.documents)

    def declarations_of(self, cluster: str) -> tuple[str, ...]:
        return tuple(d.path for d in self.documents if cluster in d.clusters)

    def of_cluster(self, cluster: str) -> list[DocumentChange]:
        """The changed documents a subject of ``cluster`` reads: its ClusterProfile and declarations."""
        return [d for d in self.documents if d.path == f"clusters/{cluster}.yaml" or cluster in d.clusters]
