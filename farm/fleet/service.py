"""The fleet-run owner: every run of the farm starts here, and nowhere else.

A run has a kind (``fleet``: a catalog's targets; ``qualification``: one subject's targets) and
a trigger (``cli``, ``api``, ``schedule``). The service plans it (``farm.fleet.runs.begin``), hands
its jobs to the executor its caller chose (``farm.execution``), and applies the after-run steps:
after a fleet run, qualification on run (``FARM_QUALIFICATION_ON_RUN``), then publish on run
(``FARM_PUBLISH_TO``). The CLI, the API, the
daemon (which runs the CLI), the Celery tasks and the beat call these functions; none composes
the steps itself, so a run behaves the same whoever starts it.

Waiting and summaries are ``farm.fleet.progress``; what a run is compared with (the latest
complete fleet run of the same fleet) is ``farm.store.runs.latest_fleet_run``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from farm.catalog import CatalogSnapshot, load_catalog
from farm.fleet import runs
from farm.fleet.owners import process_owner
from farm.fleet.planner import PlannedRun
from farm.store.context import Storage
from farm.store.db import read_scope, session_scope
from farm.store.models import RunKind, Trigger
from farm.store.runs import latest_fleet_run, snapshot_manifest_digest
from farm.store.snapshots import persist_snapshot

if TYPE_CHECKING:
    from farm.evidence.keys import Signer
    from farm.qualification.service import SubjectResult

# The qualification and signing stacks are imported where a step needs them: a no-change fleet
# run (no after-run step to apply) loads neither.
ON_RUN_OFF, ON_RUN_REQUALIFY = "off", "requalify"

__all__ = [
    "Executor",
    "FleetRun",
    "RunKind",
    "Trigger",
    "begin_fleet_run",
    "finish_interrupted_runs",
    "finish_fleet_run",
    "plan_catalog",
    "qualify",
    "qualify_stored_subject",
    "schedule_due_qualifications",
    "start_fleet_run",
]


class Executor(Protocol):
    """What runs a run's jobs (``farm.execution``): called with (job id, batch key) pairs.
    ``prepare`` checks, before a run with work is recorded, what executing it needs (the local
    executor signs in this process tree: its key must exist and be trusted)."""

    name: str

    @property
    def blocking(self) -> bool: ...

    def __call__(self, jobs: runs.Jobs) -> None: ...

    def prepare(self, storage: Storage) -> None: ...


class SendsQualifications(Protocol):
    def send_qualification(self, snapshot_digest: str, cluster: str, selection: str) -> None: ...


@dataclass(frozen=True)
class FleetRun:
    """A fleet run started: its plan, and the subjects its after-run steps sent to re-qualify."""

    planned: PlannedRun
    requalified: list[tuple[str, str]] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.planned.run_id


def begin_fleet_run(
    storage: Storage, snapshot: CatalogSnapshot, *, trigger: Trigger, source: str, executor: Executor
) -> PlannedRun:
    """Plan a fleet run of ``snapshot`` (loaded from ``source``) for ``executor``; nothing is
    executed yet, and nothing is recorded when the executor cannot execute it."""
    return runs.begin(
        storage,
        snapshot,
        kind=RunKind.FLEET,
        trigger=trigger,
        source=source,
        before_work=lambda: executor.prepare(storage),
        owner=process_owner() if executor.blocking else None,
    )


def finish_interrupted_runs(storage: Storage, executor: Executor) -> list[str]:
    """Finish every run whose owner died (``farm.fleet.recovery``) with ``executor``: what
    ``farm run`` does before it plans its own run. Returns their ids."""
    from farm.fleet.recovery import finish_interrupted_runs as finish

    return finish(storage, executor, blocking=executor.blocking)


def finish_fleet_run(
    storage: Storage, snapshot: CatalogSnapshot, planned: PlannedRun, executor: Executor, *, trigger: Trigger
) -> FleetRun:
    """Hand a planned fleet run's jobs to ``executor``, then apply the after-run steps."""
    runs.execute(planned, executor)
    requalified = _after_fleet_run(storage, snapshot, planned, executor, trigger)
    _publish_on_run(storage, planned.run_id)
    return FleetRun(planned, requalified)


def start_fleet_run(
    storage: Storage, snapshot: CatalogSnapshot, *, trigger: Trigger, source: str, executor: Executor
) -> FleetRun:
    """Plan, execute and finish a fleet run of ``snapshot``. With a blocking executor (the local
    pool) its renders are done when this returns; with Celery they are sent."""
    planned = begin_fleet_run(storage, snapshot, trigger=trigger, source=source, executor=executor)
    return finish_fleet_run(storage, snapshot, planned, executor, trigger=trigger)


def plan_catalog(
    storage: Storage, folder: str | Path, *, trigger: Trigger = Trigger.CLI, executor: Executor | None = None
) -> tuple[CatalogSnapshot, PlannedRun]:
    """Load the catalog at ``folder`` and plan a fleet run of it (``begin_fleet_run``); without
    an executor, one whose workers check their own key (as Celery workers do)."""
    snapshot = load_catalog(folder, max_file_bytes=storage.settings.catalog_max_file_bytes)
    source = str(Path(folder).resolve())
    if executor is None:
        return snapshot, runs.begin(storage, snapshot, kind=RunKind.FLEET, trigger=trigger, source=source)
    return snapshot, begin_fleet_run(storage, snapshot, trigger=trigger, source=source, executor=executor)


def _after_fleet_run(
    storage: Storage, snapshot: CatalogSnapshot, planned: PlannedRun, executor: Executor, trigger: Trigger
) -> list[tuple[str, str]]:
    """Qualification on run (``FARM_QUALIFICATION_ON_RUN``): ``stale`` recomputes every subject's
    state against the run's catalog; ``requalify`` then qualifies each stale subject again (here
    on a local executor, as Celery tasks on Celery); ``off`` does nothing. Skipped when the
    fleet's previous complete run saw the same catalog, so a no-change re-run loads no keys."""
    settings = storage.settings
    if settings.qualification_on_run == ON_RUN_OFF:
        return []
    with read_scope(storage.sessions) as session:
        previous = latest_fleet_run(session, storage.objects, snapshot.name, before=planned.run_id)
        if previous is not None and previous.snapshot_digest == planned.snapshot_digest:
            return []
    from farm.evidence.keys import load_configured_trust
    from farm.qualification.service import claim_due, refresh_all

    trusted = frozenset(load_configured_trust(settings))
    refresh_all(storage, snapshot, trusted, "fleet run")
    if settings.qualification_on_run != ON_RUN_REQUALIFY:
        return []
    stale = claim_due(storage, states=("stale",))
    if executor.name == "celery":
        _send_qualifications(executor, snapshot.digest, stale)  # type: ignore[arg-type]
        return stale
    qualify(
        storage, snapshot, stale, executor=executor, trigger=trigger, source=f"fleet run {planned.run_id}"
    )
    return stale


def _publish_on_run(storage: Storage, run_id: str) -> None:
    """Publish on run (``FARM_PUBLISH_TO``), after qualification on run so the gate sees its
    states: the run's publish is recorded pending, and attempted now when the run is complete (a
    local executor); on Celery the process that finishes the run attempts it
    (``publish_finished_run``). A failed publish stays recorded for ``farm publish --retry``."""
    if not storage.settings.publish_to:
        return
    from farm.publish.service import configured_destination, record_run_publish

    destination = configured_destination(storage)
    assert destination is not None
    record_run_publish(storage, run_id, destination)
    publish_finished_run(storage, run_id)


def publish_finished_run(storage: Storage, run_id: str) -> None:
    """Attempt the publishes recorded for ``run_id`` once it is complete (each is claimed by one
    process: the finisher of the run and the after-run step may both call this)."""
    if not storage.settings.publish_to:
        return
    from farm.evidence.keys import load_configured_signer
    from farm.publish.service import attempt_pending_of_run

    attempt_pending_of_run(storage, load_configured_signer(storage.settings), run_id)


def _send_qualifications(
    sender: SendsQualifications, snapshot_digest: str, subjects: Sequence[tuple[str, str]]
) -> None:
    for cluster, selection in subjects:
        sender.send_qualification(snapshot_digest, cluster, selection)


def qualify(
    storage: Storage,
    snapshot: CatalogSnapshot,
    subjects: Sequence[tuple[str, str]],
    *,
    executor: Executor,
    trigger: Trigger,
    source: str,
) -> list[SubjectResult]:
    """Qualify each (cluster, selection) in turn, each in a qualification run of its own, with the
    farm's configured key and trust (loaded once)."""
    from farm.evidence.keys import load_configured_signer, load_configured_trust
    from farm.fleet.qualify import qualify_subject

    signer = load_configured_signer(storage.settings)
    trusted = frozenset(load_configured_trust(storage.settings))
    return [
        qualify_subject(
            storage,
            snapshot,
            cluster,
            selection,
            executor=executor,
            signer=signer,
            trusted_keyids=trusted,
            trigger=trigger,
            source=source,
        )
        for cluster, selection in subjects
    ]


def stored_catalog(storage: Storage, snapshot_digest: str) -> CatalogSnapshot:
    """The catalog snapshot ``snapshot_digest`` as a run recorded it (LookupError when unknown)."""
    from farm.catalog.stored import load_stored_catalog

    with read_scope(storage.sessions) as session:
        manifest = snapshot_manifest_digest(session, snapshot_digest)
    if manifest is None:
        raise LookupError(f"no catalog snapshot {snapshot_digest} is stored")
    return load_stored_catalog(
        storage.objects.get,
        snapshot_digest,
        manifest,
        max_file_bytes=storage.settings.catalog_max_file_bytes,
    )


def qualify_stored_subject(
    storage: Storage,
    snapshot_digest: str,
    cluster: str,
    selection: str,
    *,
    executor: Executor,
    signer: Signer,
    trusted_keyids: frozenset[str],
) -> SubjectResult:
    """Qualify one subject of a stored snapshot (a Celery worker's task: the message names the
    snapshot by digest, so what is qualified is what was recorded, never a folder's today)."""
    from farm.fleet.qualify import qualify_subject

    snapshot = stored_catalog(storage, snapshot_digest)
    return qualify_subject(
        storage,
        snapshot,
        cluster,
        selection,
        executor=executor,
        signer=signer,
        trusted_keyids=trusted_keyids,
        trigger=Trigger.SCHEDULE,
        source=f"snapshot {snapshot_digest}",
    )


def schedule_due_qualifications(
    storage: Storage,
    snapshot: CatalogSnapshot | None,
    trusted_keyids: frozenset[str],
    sender: SendsQualifications,
    *,
    source: str = "",
) -> list[tuple[str, str]]:
    """The beat's re-qualification: recover abandoned runs, bring every state up to ``snapshot``
    (today's catalog), claim the due subjects and send each to a worker, naming the stored
    snapshot they are qualified from. Without a catalog, nothing is claimed: a worker could not
    know what to render."""
    from farm.qualification.service import find_due, recover_abandoned_runs, subjects_of

    if snapshot is None:
        recover_abandoned_runs(storage)
        return []
    with session_scope(storage.sessions) as session:
        persist_snapshot(session, storage.objects, snapshot, source)
    due = find_due(storage, snapshot, trusted_keyids)
    known = set(subjects_of(snapshot))
    due = [subject for subject in due if subject in known]
    _send_qualifications(sender, snapshot.digest, due)
    return due
