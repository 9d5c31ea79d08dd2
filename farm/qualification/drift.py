"""What drifted when a subject went stale: the documents of its ClusterProfile (the ClusterProfile
and the declarations naming it) that differ between the snapshot its evidence was made from and
the snapshot its state was derived against, key by key."""

from __future__ import annotations

from farm.catalog.changes import ChangedInputs, DocumentChange, document_changes
from farm.store.context import Storage
from farm.store.db import read_scope
from farm.store.objects import ObjectStoreError
from farm.store.queries import snapshot_manifest
from farm.store.runs import run_by_id


def drifted_documents(
    storage: Storage, cluster: str, evidence_run_id: str, snapshot_digest: str
) -> list[DocumentChange]:
    """The documents of ``cluster`` that changed from the snapshot of fleet run
    ``evidence_run_id`` to snapshot ``snapshot_digest``; empty when either is no longer stored."""
    with read_scope(storage.sessions) as session:
        run = run_by_id(session, evidence_run_id)
        if run is None:
            return []
        before = snapshot_manifest(session, storage.objects, run.snapshot_digest)
        after = snapshot_manifest(session, storage.objects, snapshot_digest)
    if before is None or after is None:
        return []
    try:
        changes = document_changes(before, after, storage.objects.get, storage.objects.get)
    except ObjectStoreError:  # a document collected since: the timeline says only "stale"
        return []
    return ChangedInputs(tuple(changes)).of_cluster(cluster)
