"""Catalog snapshots in storage: every document a blob, the render requests packed, then the rows.

A snapshot's own blob (its manifest) names every document and every target's request by digest,
and the request pack of each application (``farm.core.request.pack_requests``): one blob holding
the descriptors of that application's targets, so storing a snapshot writes one request blob per
application, not one per target, and an unchanged application's pack is already stored. A target
row names its request's digest and the pack holding it. A job message carries only ids; a worker
reads the requests of its targets from here, so a replayed or forged message cannot change what
gets rendered, and a request whose bytes do not match its digest is refused.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from hashlib import sha256

from sqlalchemy import insert
from sqlalchemy.orm import Session

from farm.catalog import CatalogSnapshot, TargetRequest
from farm.catalog.snapshot import manifest_head
from farm.core.request import RenderRequest, decode_request, pack_requests, unpack_request
from farm.store import models
from farm.store.objects import ObjectStore
from farm.store.repository import insert_ignoring_conflict


def snapshot_blobs(snapshot: CatalogSnapshot) -> list[bytes]:
    """Every blob of a snapshot: documents, each application's request pack, the manifest last."""
    return [*snapshot.documents(), *snapshot.request_packs.values(), snapshot.manifest]


def persist_requests(objects: ObjectStore, target_requests: Sequence[TargetRequest]) -> str:
    """Make the requests of targets outside the snapshot's own (a qualification subject under a
    value the fleet does not select) fetchable: their documents, then one pack of their
    descriptors. The digest of that pack, which the targets' rows name."""
    blobs: dict[str, bytes] = {}
    for entry in target_requests:
        for document in entry.request.documents():
            blobs.setdefault(sha256(document).hexdigest(), document)
    pack = pack_requests(entry.request for entry in target_requests)
    return objects.put_many([*blobs.values(), pack])[-1]


def persist_snapshot(session: Session, objects: ObjectStore, snapshot: CatalogSnapshot, source: str) -> bool:
    """Store a snapshot once per digest: its blobs (durable, in one batch), then its rows.

    True when this call stored it; a snapshot already recorded costs one primary-key read.
    """
    if session.get(models.CatalogSnapshot, snapshot.digest) is not None:
        restore_lost_blobs(objects, snapshot)
        return False
    return _insert_snapshot(session, snapshot, source, objects.put_many(snapshot_blobs(snapshot))[-1])


def restore_lost_blobs(objects: ObjectStore, snapshot: CatalogSnapshot) -> None:
    """Store again the blobs of a snapshot recorded earlier that the object store no longer holds
    (a store lost, or restored from an older backup): without its request packs, every target of
    its runs would fail as forged. One look-up of its blobs' digests when none is missing."""
    wanted = manifest_references(snapshot.manifest) | {snapshot.digest}  # the manifest's own digest
    if objects.missing(wanted):
        objects.put_many(snapshot_blobs(snapshot))


@contextmanager
def persisting_snapshot(
    session: Session, objects: ObjectStore, snapshot: CatalogSnapshot, source: str
) -> Iterator[None]:
    """``persist_snapshot`` around the body: the blobs are written on a thread while the body
    runs (a plan asks the caches meanwhile: creating the files mostly waits in the kernel), the
    rows inserted once both are done, so no row names a blob before it is durable. The body must
    not use ``objects`` for the snapshot's blobs, nor ``session`` on another thread."""
    if session.get(models.CatalogSnapshot, snapshot.digest) is not None:
        restore_lost_blobs(objects, snapshot)
        yield
        return
    blobs = snapshot_blobs(snapshot)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="farm-snapshot-blobs") as pool:
        written = pool.submit(objects.put_many, blobs)
        yield  # an exception of the body leaves the pool's block once the write has ended
    _insert_snapshot(session, snapshot, source, written.result()[-1])


def _insert_snapshot(session: Session, snapshot: CatalogSnapshot, source: str, manifest_blob: str) -> bool:
    inserted = insert_ignoring_conflict(
        session,
        models.CatalogSnapshot,
        {
            "digest": snapshot.digest,
            "source": source,
            "blob_digest": manifest_blob,
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
    """Every blob a snapshot manifest names: its documents (the resolved ClusterProfiles and
    envelopes of its declared values too) and its request packs (a manifest written before packs
    names each target's request blob instead).

    A snapshot's blobs stay live while its row exists, so ``farm gc`` never takes a document
    (``kurel.yaml``, a values file) that a queued job of a run of that snapshot still needs.
    """
    content = manifest_head(manifest)  # the targets only for a manifest written before packs
    if "requestPacks" not in content:
        content = json.loads(manifest)
    digests = {content["fleet"], *content["clusters"].values(), *content["profiles"].values()}
    for app in content["applications"].values():
        digests.update(d for d in (app["app"], app["package"], app["values"]) if d is not None)
        digests.update(app["clusterValues"].values())
        digests.update(chart["digest"] for chart in app.get("charts", ()))  # chart archives
    if "requestPacks" in content:
        digests.update(content["requestPacks"].values())
    else:
        digests.update(target[3] for target in content["targets"])
    digests.update(content.get("resolved", ()))  # every declared value's resolved documents
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


class RequestReader:
    """Reads render requests out of storage, every blob verified against its digest.

    It holds the last request pack it read (a job's targets share their application's pack, and
    ``farm audit`` reads targets in application order), so a pack is fetched once per job, not once
    per target; documents are read once per process.
    """

    def __init__(self, objects: ObjectStore) -> None:
        self.objects = objects
        self._pack: tuple[str, bytes] | None = None

    def descriptor(self, digest: str, pack: str | None = None) -> bytes:
        """The descriptor of request ``digest``, read out of the request pack ``pack`` (or, for a
        row written before packs, its own blob), verified: it hashes to ``digest``.

        Raises ``BlobCorruptError``/``BlobMissingError`` (object storage) or ``RequestError`` (a
        pack that does not hold the request, or holds other bytes under its digest).
        """
        if pack is None:
            return self.objects.get(digest)
        if self._pack is None or self._pack[0] != pack:
            self._pack = (pack, self.objects.get(pack))
        return unpack_request(self._pack[1], digest)

    def request(self, digest: str, pack: str | None = None) -> RenderRequest:
        """The render request ``digest`` (in ``pack``); raises as ``descriptor``, or
        ``RequestError`` for a descriptor that is not a request."""
        descriptor = self.descriptor(digest, pack)  # verified: it hashes to ``digest``
        return decode_request(descriptor, lambda document: _documents.get(self.objects, document), digest)


def load_request(objects: ObjectStore, digest: str, pack: str | None = None) -> RenderRequest:
    """The render request ``digest`` (in ``pack``), as ``RequestReader.request`` reads it."""
    return RequestReader(objects).request(digest, pack)
