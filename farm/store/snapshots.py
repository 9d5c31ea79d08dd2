"""Catalog snapshots in storage: every document and every render request a blob, then the rows.

A snapshot's own blob (its manifest) names every document and every target's request by digest;
each request's blob is its descriptor (``farm.core.request``). A job message carries only ids; a
worker reads the requests of its targets from here, so a replayed or forged message cannot change
what gets rendered, and a request blob whose bytes do not match its digest is refused.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from hashlib import sha256

from sqlalchemy import insert
from sqlalchemy.orm import Session

from farm.catalog import CatalogSnapshot, TargetRequest
from farm.core.request import RenderRequest, decode_request
from farm.store import models
from farm.store.objects import ObjectStore
from farm.store.repository import insert_ignoring_conflict


def snapshot_blobs(snapshot: CatalogSnapshot) -> list[bytes]:
    """Every blob of a snapshot: documents, each distinct request descriptor, the manifest last."""
    requests = {tr.request.digest: tr.request.descriptor_bytes for tr in snapshot.target_requests}
    return [*snapshot.documents(), *requests.values(), snapshot.manifest]


def persist_requests(objects: ObjectStore, target_requests: Sequence[TargetRequest]) -> None:
    """Make the requests of targets outside the snapshot's own (a qualification subject under a
    value the fleet does not select) fetchable: their documents, then their descriptors."""
    blobs: dict[str, bytes] = {}
    for entry in target_requests:
        for document in entry.request.documents():
            blobs.setdefault(sha256(document).hexdigest(), document)
        blobs.setdefault(entry.request.digest, entry.request.descriptor_bytes)
    if blobs:
        objects.put_many(list(blobs.values()))


def persist_snapshot(session: Session, objects: ObjectStore, snapshot: CatalogSnapshot, source: str) -> bool:
    """Store a snapshot once per digest: its blobs (durable, in one batch), then its rows.

    True when this call stored it; a snapshot already recorded costs one primary-key read.
    """
    if session.get(models.CatalogSnapshot, snapshot.digest) is not None:
        return False
    digests = objects.put_many(snapshot_blobs(snapshot))
    inserted = insert_ignoring_conflict(
        session,
        models.CatalogSnapshot,
        {
            "digest": snapshot.digest,
            "source": source,
            "blob_digest": digests[-1],
            "created_at": models.utcnow(),
        },
    )
    if inserted:
        _insert_documents(session, snapshot)
    return inserted


def _insert_documents(session: Session, snapshot: CatalogSnapshot) -> None:
    applications = [
        {
            "snapshot_digest": snapshot.digest,
            "name": app.name,
            "digest": app.digest,
            "values_digest": app.content()["values"],
            "blob_digest": app.document_digests["app"],
        }
        for app in snapshot.applications
    ]
    clusters = [
        {
            "snapshot_digest": snapshot.digest,
            "name": cluster.name,
            "digest": cluster.digest,
            "blob_digest": cluster.digest,
            "valid": cluster.problem is None,
            "error_code": cluster.problem.code if cluster.problem else None,
            "error_message": cluster.problem.message if cluster.problem else None,
        }
        for cluster in snapshot.clusters
    ]
    if applications:
        session.execute(insert(models.Application), applications)
    if clusters:
        session.execute(insert(models.ClusterProfile), clusters)


def manifest_references(manifest: bytes) -> set[str]:
    """Every blob a snapshot manifest names: its documents (the resolved ClusterProfiles of its
    declared values too) and its targets' requests.

    A snapshot's blobs stay live while its row exists, so ``farm gc`` never takes a document
    (``kurel.yaml``, a values file) that a queued job of a run of that snapshot still needs.
    """
    content = json.loads(manifest)
    digests = {content["fleet"], *content["clusters"].values(), *content["profiles"].values()}
    for app in content["applications"].values():
        digests.update(d for d in (app["app"], app["package"], app["values"]) if d is not None)
        digests.update(app["clusterValues"].values())
    digests.update(target[3] for target in content["targets"])
    digests.update(content.get("resolved", ()))  # every declared value's resolved ClusterProfile
    return digests


class BlobCache:
    """Verified blobs of this process, keyed by digest, bounded by their total size.

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


_documents = BlobCache(max_bytes=64 * 1024 * 1024)


def load_request(objects: ObjectStore, digest: str) -> RenderRequest:
    """The render request stored under ``digest``, every blob verified against its digest.

    Raises ``BlobCorruptError``/``BlobMissingError`` (object storage) or ``RequestError`` (a blob
    that is not a request). Documents are read once per process (a batch shares its application).
    """
    descriptor = objects.get(digest)
    return decode_request(descriptor, lambda document: _documents.get(objects, document))
