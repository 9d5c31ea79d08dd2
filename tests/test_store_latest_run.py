"""The baseline of a fleet (``latest_fleet_run``): its newest complete fleet run, on both
databases; a run recorded before runs named their fleet counts when its snapshot's manifest names
it and it is the newest."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session, sessionmaker

from farm.identity.canonical import sha256_hex
from farm.store.models import CatalogSnapshot, FleetRun
from farm.store.objects import LocalObjectStore
from farm.store.runs import latest_fleet_run

START = datetime(2026, 12, 1, tzinfo=UTC)


def _snapshot(sessions: sessionmaker[Session], objects: LocalObjectStore, fleet: str) -> str:
    """A stored snapshot whose manifest names ``fleet``."""
    manifest = json.dumps({"name": fleet}).encode()
    blob = objects.put(manifest)
    digest = sha256_hex(manifest)
    with sessions.begin() as session:
        session.add(CatalogSnapshot(digest=digest, source="tests", blob_digest=blob))
    return digest


def _run(
    sessions: sessionmaker[Session],
    snapshot: str,
    minute: int,
    *,
    fleet: str | None,
    state: str = "completed",
    kind: str = "fleet",
) -> str:
    with sessions.begin() as session:
        run = FleetRun(
            snapshot_digest=snapshot,
            core_version="test",
            state=state,
            kind=kind,
            fleet=fleet,
            created_at=START + timedelta(minutes=minute),
        )
        session.add(run)
        session.flush()
        return run.id


def _latest(
    sessions: sessionmaker[Session], objects: LocalObjectStore, fleet: str, **before: str
) -> str | None:
    with sessions() as session:
        run = latest_fleet_run(session, objects, fleet, **before)
        return None if run is None else run.id


def test_the_baseline_is_the_newest_complete_fleet_run_of_the_fleet_before_a_run(
    sessions: sessionmaker[Session], local_store: LocalObjectStore
) -> None:
    prod, staging = _snapshot(sessions, local_store, "prod"), _snapshot(sessions, local_store, "staging")
    assert _latest(sessions, local_store, "prod") is None
    first = _run(sessions, prod, 1, fleet="prod")
    second = _run(sessions, prod, 2, fleet="prod", state="completed_with_failures")
    _run(sessions, staging, 3, fleet="staging")
    _run(sessions, prod, 4, fleet="prod", kind="qualification")  # a partial run is never one
    _run(sessions, prod, 5, fleet="prod", state="running")
    current = _run(sessions, prod, 6, fleet="prod", state="running")

    assert _latest(sessions, local_store, "prod") == second
    assert _latest(sessions, local_store, "prod", before=current) == second
    assert _latest(sessions, local_store, "prod", before=second) == first
    assert _latest(sessions, local_store, "prod", before=first) is None


def test_a_run_without_a_fleet_name_counts_by_its_snapshot_only_when_it_is_newer(
    sessions: sessionmaker[Session], local_store: LocalObjectStore
) -> None:
    prod, staging = _snapshot(sessions, local_store, "prod"), _snapshot(sessions, local_store, "staging")
    old_unnamed = _run(sessions, prod, 1, fleet=None)
    assert _latest(sessions, local_store, "prod") == old_unnamed
    named = _run(sessions, prod, 2, fleet="prod")
    assert _latest(sessions, local_store, "prod") == named
    _run(sessions, staging, 3, fleet=None)  # another fleet's
    assert _latest(sessions, local_store, "prod") == named
    newer_unnamed = _run(sessions, prod, 4, fleet=None)
    assert _latest(sessions, local_store, "prod") == newer_unnamed
    assert _latest(sessions, local_store, "prod", before=newer_unnamed) == named
