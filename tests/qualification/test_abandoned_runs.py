"""A qualification whose process died does not stay ``qualifying`` forever: the beat's finder
(``service.find_due``) errors its run once nobody can finish it, and the subject is due again."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from farm.catalog import CatalogSnapshot, load_catalog
from farm.evidence.keys import Signer, load_configured_signer
from farm.fleet.jobs import run_job
from farm.fleet.planner import PlannedRun, plan_run
from farm.fleet.qualify import qualify_subject
from farm.fleet.service import Trigger
from farm.qualification import recorded, service
from farm.settings import load_settings
from farm.store import qualification as records
from farm.store.context import Storage, open_storage
from farm.store.db import session_scope
from farm.store.models import QualificationRun, RunKind, utcnow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"
CLUSTER, SELECTION = "prod-nginx", "ingress-class=internal"


@pytest.fixture
def farm(tmp_path: Path, database_url: str) -> Iterator[tuple[Storage, Signer, CatalogSnapshot]]:
    settings = load_settings(
        home=tmp_path / "farm", database_url=database_url, object_store=str(tmp_path / "objects")
    )
    storage = open_storage(settings)
    shutil.copytree(EXAMPLE, tmp_path / "fleet")
    yield storage, load_configured_signer(settings), load_catalog(tmp_path / "fleet")
    storage.close()


def _execute(storage: Storage, signer: Signer):
    def execute(queued) -> None:
        for job_id, key in queued:
            run_job(storage, signer, job_id, worker="test", expected_batch_key=key)

    return execute


def _start_and_die(
    storage: Storage, snapshot: CatalogSnapshot, trusted: frozenset[str], *, render: bool, signer: Signer
) -> tuple[int, PlannedRun]:
    """What ``qualify_subject`` leaves behind when its process is killed after the renders were
    planned (and, with ``render``, done): a run ``running`` that nobody will finish."""
    today = service.today_for(snapshot, CLUSTER)
    now = utcnow()
    with session_scope(storage.sessions) as session:
        subject = recorded.ensure_subject(session, CLUSTER, SELECTION, now)
        run = records.start_run(session, subject, today.digests[SELECTION], now)
        recorded.refresh_state(session, subject, today, trusted, now, service.max_age(storage), "qualify")
        run_id = run.id
    planned = plan_run(
        storage,
        snapshot,
        trigger=Trigger.CLI,
        source="tests",
        kind=RunKind.QUALIFICATION,
        target_requests=service.subject_requests(snapshot, CLUSTER, SELECTION),
    )
    with session_scope(storage.sessions) as session:
        records.attach_fleet_run(session, run_id, planned.run_id)
    if render:
        _execute(storage, signer)(planned.queued)
    return run_id, planned


def _run_state(storage: Storage, run_id: int) -> str:
    with session_scope(storage.sessions) as session:
        return session.scalars(select(QualificationRun.state).where(QualificationRun.id == run_id)).one()


def _subject(storage: Storage, snapshot: CatalogSnapshot, trusted: frozenset[str]) -> tuple[str, str]:
    """The stored (state, reason), after checking it equals a recomputation from the records."""
    with session_scope(storage.sessions) as session:
        subject = next(
            s for s in records.subjects(session) if (s.cluster_profile, s.selection) == (CLUSTER, SELECTION)
        )
        derived, _ = recorded.recompute(
            session,
            subject,
            service.today_for(snapshot, CLUSTER),
            trusted,
            utcnow(),
            service.max_age(storage),
        )
        assert (derived.state, derived.reason) == (subject.state, subject.reason)
        return subject.state, subject.reason


def test_a_qualification_left_running_by_a_dead_process_is_errored_by_the_finder_and_qualified_again(
    farm: tuple[Storage, Signer, CatalogSnapshot],
) -> None:
    storage, signer, snapshot = farm
    trusted = frozenset({signer.keyid})
    run_id, _ = _start_and_die(storage, snapshot, trusted, render=True, signer=signer)
    service.refresh_all(storage, snapshot, trusted, "test")
    assert _subject(storage, snapshot, trusted)[0] == "qualifying"  # stuck: the run reads in flight

    due = service.find_due(storage, snapshot, trusted, abandoned_after=timedelta(0))
    assert (CLUSTER, SELECTION) in due
    assert _run_state(storage, run_id) == "errored"
    assert _subject(storage, snapshot, trusted) == ("unqualified", "")

    result = qualify_subject(
        storage,
        snapshot,
        CLUSTER,
        SELECTION,
        executor=_execute(storage, signer),
        signer=signer,
        trusted_keyids=trusted,
        trigger=Trigger.CLI,
        source="tests",
    )
    assert result.state == "qualified"
    assert _subject(storage, snapshot, trusted) == ("qualified", "")


def test_a_qualification_whose_fleet_run_is_still_rendering_is_left_running(
    farm: tuple[Storage, Signer, CatalogSnapshot],
) -> None:
    storage, signer, snapshot = farm
    trusted = frozenset({signer.keyid})
    run_id, _ = _start_and_die(storage, snapshot, trusted, render=False, signer=signer)
    due = service.find_due(storage, snapshot, trusted, abandoned_after=timedelta(0))
    assert (CLUSTER, SELECTION) not in due
    assert _run_state(storage, run_id) == "running"
    assert _subject(storage, snapshot, trusted)[0] == "qualifying"


def test_a_run_never_given_a_fleet_run_is_recovered_only_after_the_timeout(
    farm: tuple[Storage, Signer, CatalogSnapshot],
) -> None:
    storage, signer, snapshot = farm
    digest = service.today_for(snapshot, CLUSTER).digests[SELECTION]
    now = utcnow()
    with session_scope(storage.sessions) as session:
        subject = recorded.ensure_subject(session, CLUSTER, SELECTION, now)
        old = records.start_run(session, subject, digest, now - service.ABANDONED_AFTER * 2).id
        young = records.start_run(session, subject, digest, now).id
    assert service.recover_abandoned_runs(storage) == [old]
    assert (_run_state(storage, old), _run_state(storage, young)) == ("errored", "running")
    assert service.recover_abandoned_runs(storage) == []  # once: the UPDATE is conditional


def test_a_qualification_that_raises_errors_its_run_at_once(
    farm: tuple[Storage, Signer, CatalogSnapshot],
) -> None:
    storage, signer, snapshot = farm
    trusted = frozenset({signer.keyid})

    def broken(_queued) -> None:
        raise ConnectionError("broker went away")

    with pytest.raises(ConnectionError):
        qualify_subject(
            storage,
            snapshot,
            CLUSTER,
            SELECTION,
            executor=broken,
            signer=signer,
            trusted_keyids=trusted,
            trigger=Trigger.CLI,
            source="tests",
        )
    with session_scope(storage.sessions) as session:
        states = list(session.scalars(select(QualificationRun.state)))
    assert states == ["errored"]
    assert _subject(storage, snapshot, trusted) == ("unqualified", "")
