"""Qualification runs: the renders of one subject as a run of kind ``qualification``, recorded
by ``farm.qualification``. Called by the fleet-run owner (``farm.fleet.service``) only."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from farm.catalog import CatalogSnapshot
from farm.evidence.keys import Signer
from farm.fleet import runs
from farm.fleet.diff import run_outputs
from farm.fleet.owners import process_owner
from farm.qualification.service import (
    SubjectResult,
    abandon_qualification,
    attach_fleet_run,
    close_qualification,
    open_qualification,
    subject_requests,
)
from farm.store.context import Storage
from farm.store.models import RunKind, Trigger


def qualify_subject(
    storage: Storage,
    snapshot: CatalogSnapshot,
    cluster: str,
    selection: str,
    *,
    executor: Callable[[runs.Jobs], None],
    signer: Signer,
    trusted_keyids: frozenset[str],
    trigger: Trigger,
    source: str,
) -> SubjectResult:
    """Render every target of one subject in a run of its own, wait for it, and record the
    outcome (signed evidence when every target rendered or was cached)."""
    opened = open_qualification(storage, snapshot, cluster, selection, trusted_keyids)
    try:
        planned = runs.begin(
            storage,
            snapshot,
            kind=RunKind.QUALIFICATION,
            trigger=trigger,
            source=source,
            target_requests=subject_requests(snapshot, cluster, selection),
            owner=process_owner() if getattr(executor, "blocking", False) else None,
        )
        attach_fleet_run(storage, opened, planned.run_id)
        runs.execute(planned, executor)
        runs.wait(storage, planned.run_id)
    except BaseException:
        with contextlib.suppress(Exception):  # if storage is what failed, the finder recovers it
            abandon_qualification(storage, opened, trusted_keyids)
        raise
    outputs = run_outputs(storage, planned.run_id)
    return close_qualification(
        storage, opened, planned.run_id, outputs, signer=signer, trusted_keyids=trusted_keyids
    )
