"""Scenario on a copy of examples/fleet (unprofiled subjects until the profiles half lands)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from farm.catalog import load_catalog
from farm.evidence.keys import Signer, load_configured_signer
from farm.fleet.jobs import run_job
from farm.fleet.qualify import qualify_subject
from farm.fleet.service import Trigger
from farm.qualification import service
from farm.settings import load_settings
from farm.store import qualification as records
from farm.store.context import Storage, open_storage
from farm.store.db import session_scope

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"


@pytest.fixture
def farm(tmp_path: Path, database_url: str) -> Iterator[tuple[Storage, Signer]]:
    settings = load_settings(
        home=tmp_path / "farm", database_url=database_url, object_store=str(tmp_path / "objects")
    )
    storage = open_storage(settings)
    yield storage, load_configured_signer(settings)
    storage.close()


def _qualify_all(storage: Storage, signer: Signer, root: Path) -> dict[tuple[str, str], str]:
    snapshot = load_catalog(root)

    def execute(queued) -> None:
        for job_id, key in queued:
            run_job(storage, signer, job_id, worker="test", expected_batch_key=key)

    return {
        (cluster, selection): qualify_subject(
            storage,
            snapshot,
            cluster,
            selection,
            executor=execute,
            signer=signer,
            trusted_keyids=frozenset({signer.keyid}),
            trigger=Trigger.CLI,
            source="tests",
        ).state
        for cluster, selection in service.subjects_of(snapshot)
    }


def _board(storage: Storage, signer: Signer, root: Path) -> dict[tuple[str, str], tuple[str, str]]:
    service.refresh_all(storage, load_catalog(root), frozenset({signer.keyid}), "catalog change")
    with session_scope(storage.sessions) as session:
        return {(s.cluster_profile, s.selection): (s.state, s.reason) for s in records.subjects(session)}


def test_qualify_edit_requalify_and_revert_on_the_example_fleet(
    farm: tuple[Storage, Signer], tmp_path: Path
) -> None:
    storage, signer = farm
    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, root)
    states = _qualify_all(storage, signer, root)
    assert states and set(states.values()) == {"qualified"}

    cluster_file = root / "clusters" / "prod-gateway.yaml"
    original = cluster_file.read_bytes()
    cluster_file.write_bytes(original.replace(b"name: internal-ca", b"name: other-ca"))  # base edit
    board = _board(storage, signer, root)
    stale = {subject for subject, (state, _) in board.items() if state == "stale"}
    assert stale and {cluster for cluster, _ in stale} == {"prod-gateway"}
    assert all(reason == "digest_drift" for subject, (_, reason) in board.items() if subject in stale)
    assert all(state == "qualified" for subject, (state, _) in board.items() if subject not in stale)

    assert set(_qualify_all(storage, signer, root).values()) == {"qualified"}

    cluster_file.write_bytes(original)  # the old catalog: the first evidence is current again
    assert {state for state, _ in _board(storage, signer, root).values()} == {"qualified"}


def test_two_concurrent_beats_find_each_due_subject_once(
    farm: tuple[Storage, Signer], tmp_path: Path
) -> None:
    import threading
    from datetime import timedelta

    storage, signer = farm
    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, root)
    _board(storage, signer, root)  # every subject recorded, unqualified
    barrier = threading.Barrier(2)
    found: list[list[tuple[str, str]]] = []

    def beat() -> None:
        barrier.wait(timeout=30)
        found.append(service.claim_due(storage, timedelta(hours=1)))

    threads = [threading.Thread(target=beat) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    everything = [subject for batch in found for subject in batch]
    assert sorted(everything) == sorted(service.subjects_of(load_catalog(root)))
    assert service.claim_due(storage, timedelta(hours=1)) == []
