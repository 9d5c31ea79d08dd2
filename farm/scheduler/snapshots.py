"""Catalog snapshots in storage: every document a blob, one manifest blob naming them all.

A job message carries only ids; the worker reads the documents of its target from here, so a
replayed or forged message cannot change what gets rendered.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy.orm import Session

from farm.catalog import CatalogSnapshot
from farm.evidence.canonical import canonical_json
from farm.store import models
from farm.store.objects import ObjectStore
from farm.store.repository import insert_ignoring_conflict


def _put_optional(objects: ObjectStore, data: bytes | None) -> str | None:
    return objects.put(data) if data is not None else None


def _manifest(snapshot: CatalogSnapshot, objects: ObjectStore) -> dict[str, Any]:
    applications = {}
    for app in snapshot.applications:
        applications[app.name] = {
            "app": objects.put(app.app_yaml),
            "package": _put_optional(objects, app.package_yaml),
            "values": _put_optional(objects, app.values_yaml),
            "clusterValues": {name: objects.put(data) for name, data in app.cluster_values},
        }
    clusters = {cluster.name: {"profile": objects.put(cluster.profile_yaml)} for cluster in snapshot.clusters}
    return {
        "name": snapshot.name,
        "digest": snapshot.digest,
        "fleet": objects.put(snapshot.fleet_yaml),
        "applications": applications,
        "clusters": clusters,
        "targets": [[t.application, t.cluster, t.namespace] for t in snapshot.targets],
    }


def persist_snapshot(session: Session, objects: ObjectStore, snapshot: CatalogSnapshot, source: str) -> str:
    """Write the snapshot's blobs, then its rows (once per digest). Returns the snapshot digest."""
    manifest_digest = objects.put(canonical_json(_manifest(snapshot, objects)))
    inserted = insert_ignoring_conflict(
        session,
        models.CatalogSnapshot,
        {
            "digest": snapshot.digest,
            "source": source,
            "blob_digest": manifest_digest,
            "created_at": models.utcnow(),
        },
    )
    if inserted:
        _insert_documents(session, snapshot, objects)
    return snapshot.digest


def _insert_documents(session: Session, snapshot: CatalogSnapshot, objects: ObjectStore) -> None:
    for app in snapshot.applications:
        session.add(
            models.Application(
                snapshot_digest=snapshot.digest,
                name=app.name,
                digest=app.digest,
                values_digest=_put_optional(objects, app.values_yaml),
                blob_digest=objects.put(app.app_yaml),
            )
        )
    for cluster in snapshot.clusters:
        session.add(
            models.ClusterProfile(
                snapshot_digest=snapshot.digest,
                name=cluster.name,
                digest=cluster.digest,
                blob_digest=objects.put(cluster.profile_yaml),
                valid=cluster.problem is None,
                error_code=cluster.problem.code if cluster.problem else None,
                error_message=cluster.problem.message if cluster.problem else None,
            )
        )


@dataclass(frozen=True)
class TargetDocuments:
    """The documents one target renders from, read back from storage."""

    application: str
    cluster: str
    namespace: str | None
    app_yaml: bytes
    package_yaml: bytes | None
    values_yaml: bytes | None
    profile_yaml: bytes


class SnapshotNotFound(LookupError):
    pass


@dataclass(frozen=True)
class _Manifest:
    documents: dict[str, Any]
    namespaces: dict[tuple[str, str], str | None]  # (application, cluster) → namespace flag


@lru_cache(maxsize=32)
def _manifest_of(objects: ObjectStore, manifest_digest: str) -> _Manifest:
    documents = json.loads(objects.get(manifest_digest))
    namespaces: dict[tuple[str, str], str | None] = {}
    for application, cluster, namespace in documents["targets"]:
        namespaces.setdefault((application, cluster), namespace)
    return _Manifest(documents, namespaces)


class _BlobCache:
    """Verified document blobs of this process, keyed by digest, bounded by their total size.

    Safe because a blob is content-addressed and never rewritten: the bytes of a digest, once
    read and verified by ``ObjectStore.get``, are the bytes of that digest forever.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self.blobs: OrderedDict[str, bytes] = OrderedDict()

    def get(self, objects: ObjectStore, digest: str) -> bytes:
        data = self.blobs.get(digest)
        if data is not None:
            self.blobs.move_to_end(digest)
            return data
        data = objects.get(digest)
        if len(data) <= self.max_bytes:
            self.blobs[digest] = data
            self.size += len(data)
            while self.size > self.max_bytes:
                _, dropped = self.blobs.popitem(last=False)
                self.size -= len(dropped)
        return data

    def clear(self) -> None:
        self.blobs.clear()
        self.size = 0


_documents = _BlobCache(max_bytes=64 * 1024 * 1024)


def manifest_documents(
    objects: ObjectStore, manifest_digest: str, application: str, cluster: str
) -> TargetDocuments:
    """The documents of one target, from the snapshot manifest blob ``manifest_digest``.

    The manifest and the document blobs are read (and verified) once per process.
    """
    manifest = _manifest_of(objects, manifest_digest)
    app = manifest.documents["applications"][application]
    values_digest = app["clusterValues"].get(cluster, app["values"])
    return TargetDocuments(
        application=application,
        cluster=cluster,
        namespace=manifest.namespaces.get((application, cluster)),
        app_yaml=_documents.get(objects, app["app"]),
        package_yaml=_documents.get(objects, app["package"]) if app["package"] else None,
        values_yaml=_documents.get(objects, values_digest) if values_digest else None,
        profile_yaml=_documents.get(objects, manifest.documents["clusters"][cluster]["profile"]),
    )


def target_documents(
    session: Session, objects: ObjectStore, snapshot_digest: str, application: str, cluster: str
) -> TargetDocuments:
    row = session.get(models.CatalogSnapshot, snapshot_digest)
    if row is None or row.blob_digest is None:
        raise SnapshotNotFound(f"catalog snapshot {snapshot_digest} is not in the store")
    return manifest_documents(objects, row.blob_digest, application, cluster)
