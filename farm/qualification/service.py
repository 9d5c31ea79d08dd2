"""Qualify a subject: render its targets through the fleet's jobs, then sign and record.

The render goes through ``scheduler.planner.plan_run`` (limited to the subject's target
requests) and the executor handed in, so a qualification renders exactly as a fleet run does.
Only when every target succeeded (or was cached) is a qualification statement signed.

Subjects and their resolved digests come from the catalog snapshot (``farm/profiles``):
(ClusterProfile, "name=value") per declared value, (ClusterProfile, "") otherwise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select

from farm.catalog import CatalogError, CatalogSnapshot, TargetRequest
from farm.evidence.canonical import digest_of, sha256_hex
from farm.evidence.keys import Signer, load_configured_signer, load_configured_trust
from farm.evidence.qualification import Qualification, TargetOutput, sign_qualification
from farm.profiles.errors import ProfileError
from farm.profiles.selection import Selection, parse_selection
from farm.qualification.descriptor import cluster_profile_identity, descriptor_identity
from farm.qualification.states import Today
from farm.scheduler.executors import CeleryQueue, run_local
from farm.scheduler.fingerprint import core_version
from farm.scheduler.planner import plan_run
from farm.scheduler.progress import wait_for_run
from farm.scheduler.service import run_outputs
from farm.store import qualification as records
from farm.store.context import Storage
from farm.store.db import session_scope
from farm.store.models import QualificationRun, utcnow

Execute = Callable[[Sequence[tuple[str, str]]], None]


@dataclass(frozen=True)
class SubjectResult:
    cluster: str
    selection: str
    state: str
    reason: str
    run_id: str


def subjects_of(snapshot: CatalogSnapshot) -> list[tuple[str, str]]:
    """Every (ClusterProfile, selection) subject of the snapshot; "" when unprofiled."""
    return [(cluster, f"{name}={value}" if name else "") for cluster, name, value in snapshot.subjects()]


def _selection(text: str) -> Selection | None:
    return parse_selection(text) if text else None


def subject_requests(snapshot: CatalogSnapshot, cluster: str, selection: str) -> list[TargetRequest]:
    """The requests of every target of ``cluster`` under ``selection`` (the profiles half builds them)."""
    return snapshot.subject_requests(cluster, _selection(selection))


def today_for(snapshot: CatalogSnapshot, cluster: str) -> Today:
    """What today's catalog says about the subjects of ``cluster``: each selection's resolved digest."""
    if cluster not in {entry.name for entry in snapshot.clusters}:
        return Today(False, False, {}, descriptor_identity([]), core_version())
    if snapshot.cluster(cluster).problem is not None:  # refused by the loader: never parsed again
        return Today(True, False, {}, descriptor_identity([]), core_version())
    selections = [selection for name, selection in subjects_of(snapshot) if name == cluster]
    try:
        resolved = {
            selection: snapshot.resolved_for(cluster, _selection(selection)) for selection in selections
        }
    except (ProfileError, CatalogError, ValueError):
        return Today(True, False, {}, descriptor_identity([]), core_version())
    any_resolved = next(iter(resolved.values()))
    return Today(
        declared=True,
        valid=True,
        digests={selection: r.digest for selection, r in resolved.items()},
        identity=cluster_profile_identity(any_resolved.effective, f"{cluster}.yaml"),
        core_version=core_version(),
        owned_paths_digest=digest_of({key: list(paths) for key, paths in any_resolved.owned.items()}),
    )


def max_age(storage: Storage) -> timedelta:
    return timedelta(days=storage.settings.qualification_max_age_days)


def qualify_subject(
    storage: Storage,
    snapshot: CatalogSnapshot,
    cluster: str,
    selection: str,
    *,
    execute: Execute,
    wait: Callable[[str], None],
    signer: Signer,
    trusted_keyids: frozenset[str],
    source: str,
) -> SubjectResult:
    """Render every target of one subject and record the outcome (signed evidence on success)."""
    today = today_for(snapshot, cluster)
    digest = today.digests[selection]
    now = utcnow()
    with session_scope(storage.sessions) as session:
        subject = records.ensure_subject(session, cluster, selection, now)
        run = records.start_run(session, subject, digest, now)
        records.refresh_state(session, subject, today, trusted_keyids, now, max_age(storage), "qualify")
        qualification_run_id = run.id
    try:
        planned = plan_run(
            storage,
            snapshot,
            source=source,
            trigger="qualification",
            batch_size=storage.settings.batch_size,
            target_requests=subject_requests(snapshot, cluster, selection),
        )
        with session_scope(storage.sessions) as session:
            records.attach_fleet_run(session, qualification_run_id, planned.run_id)
        execute(planned.queued)
        wait(planned.run_id)
    except BaseException:
        with contextlib.suppress(Exception):  # if storage is what failed, the finder recovers it
            _abandon(storage, qualification_run_id, today, trusted_keyids, cluster, selection)
        raise
    outputs = run_outputs(storage, planned.run_id)
    succeeded = bool(outputs) and all(
        o.output_digest is not None and o.error_code is None for o in outputs.values()
    )
    now = utcnow()
    envelope = None
    qualification = None
    if succeeded:
        qualification = Qualification(
            cluster=cluster,
            selection=selection,
            subject_digest=digest,
            descriptor_identity=today.identity,
            run_id=planned.run_id,
            outputs=tuple(
                TargetOutput(f"{app}/{cl}", out.output_digest or "")
                for (app, cl), out in sorted(outputs.items())
            ),
        )
        envelope = sign_qualification(signer, qualification)
        storage.objects.put(envelope)  # the blob first, then the row that points at it
    with session_scope(storage.sessions) as session:
        subject = records.ensure_subject(session, cluster, selection, now)
        records.finish_run(session, qualification_run_id, "passed" if succeeded else "failed")
        if qualification is not None and envelope is not None:
            records.record_evidence(
                session,
                subject,
                qualification,
                envelope_digest=sha256_hex(envelope),
                signer_keyid=signer.keyid,
                core_version=today.core_version,
                owned_paths_digest=today.owned_paths_digest,
                attested_at=now,
            )
        records.refresh_state(session, subject, today, trusted_keyids, now, max_age(storage), "qualified")
        return SubjectResult(cluster, selection, subject.state, subject.reason, planned.run_id)


def _abandon(
    storage: Storage, run_id: int, today: Today, trusted_keyids: frozenset[str], cluster: str, selection: str
) -> None:
    """A qualification that raised: its run is ``errored`` (not left ``running``), state refreshed."""
    now = utcnow()
    with session_scope(storage.sessions) as session:
        records.error_run(session, run_id)
        subject = records.ensure_subject(session, cluster, selection, now)
        records.refresh_state(
            session, subject, today, trusted_keyids, now, max_age(storage), "qualification errored"
        )


def qualify_subjects(
    storage: Storage,
    snapshot: CatalogSnapshot,
    subjects: Sequence[tuple[str, str]],
    *,
    execute: Execute,
    source: str,
) -> list[SubjectResult]:
    """Qualify each (cluster, selection) in turn with the farm's configured key and trust
    (``farm qualify`` and the API's trigger)."""
    signer = load_configured_signer(storage.settings)
    trusted = frozenset(load_configured_trust(storage.settings))
    return [
        qualify_subject(
            storage,
            snapshot,
            cluster,
            selection,
            execute=execute,
            wait=lambda run_id: wait_for_run(storage, run_id),
            signer=signer,
            trusted_keyids=trusted,
            source=source,
        )
        for cluster, selection in subjects
    ]


def record_errored(
    storage: Storage, snapshot: CatalogSnapshot, subjects: Sequence[tuple[str, str]], since: datetime
) -> None:
    """A qualification of ``subjects`` begun at ``since`` raised: each subject it never got to
    (no run of it since then; one that raised mid-way errored its own run) gets an errored run."""
    now = utcnow()
    with session_scope(storage.sessions) as session:
        for cluster, selection in subjects:
            subject = records.ensure_subject(session, cluster, selection, now)
            started = session.scalar(
                select(QualificationRun.id).where(
                    QualificationRun.subject_id == subject.id, QualificationRun.created_at >= since
                )
            )
            if started is None:
                run = records.start_run(
                    session, subject, today_for(snapshot, cluster).digests[selection], now
                )
                records.error_run(session, run.id)


def refresh_all(
    storage: Storage, snapshot: CatalogSnapshot, trusted_keyids: frozenset[str], cause: str
) -> dict[tuple[str, str], tuple[str, str]]:
    """Recompute the state of every subject against ``snapshot`` (a fleet run after a catalog
    change); every subject of the snapshot gets a row. Returns subject → (state, reason)."""
    now = utcnow()
    todays: dict[str, Today] = {}
    board = {}
    with session_scope(storage.sessions) as session:
        known = {(s.cluster_profile, s.selection): s for s in records.subjects(session)}
        for cluster, selection in subjects_of(snapshot):
            known.setdefault((cluster, selection), records.ensure_subject(session, cluster, selection, now))
        for (cluster, selection), subject in known.items():
            if cluster not in todays:
                todays[cluster] = today_for(snapshot, cluster)
            records.refresh_state(
                session, subject, todays[cluster], trusted_keyids, now, max_age(storage), cause
            )
            board[(cluster, selection)] = (subject.state, subject.reason)
    return board


DUE_STATES = ("stale", "expired", "failed", "unqualified")
CLAIM_LEASE = timedelta(hours=1)
# A qualification records its outcome moments after its fleet run finishes; one still running this
# long after that (or this long after it started, with no fleet run planned) lost its process.
ABANDONED_AFTER = timedelta(minutes=10)


def claim_due(
    storage: Storage, lease: timedelta = CLAIM_LEASE, states: Sequence[str] = DUE_STATES
) -> list[tuple[str, str]]:
    """Subjects in ``states`` (default: stale, expired, failed or never qualified), each claimed
    for one enqueue.

    The claim is a conditional UPDATE (``records.claim_for_enqueue``): of two beats running at
    once, only one gets each subject.
    """
    now = utcnow()
    due = []
    with session_scope(storage.sessions) as session:
        candidates = [s for s in records.subjects(session) if s.state in states]
    for subject in candidates:
        with session_scope(storage.sessions) as session:
            if records.claim_for_enqueue(session, subject.id, now, lease):
                due.append((subject.cluster_profile, subject.selection))
    return due


def recover_abandoned_runs(storage: Storage, after: timedelta = ABANDONED_AFTER) -> list[int]:
    """Qualification runs whose process died (``records.abandoned_runs``) become ``errored``,
    so their subject stops reading ``qualifying``/``requalifying`` and is due again."""
    with session_scope(storage.sessions) as session:
        candidates = [run.id for run in records.abandoned_runs(session, utcnow() - after)]
    recovered = []
    for run_id in candidates:
        with session_scope(storage.sessions) as session:
            if records.error_run(session, run_id):
                recovered.append(run_id)
    return recovered


def find_due(
    storage: Storage,
    snapshot: CatalogSnapshot | None,
    trusted_keyids: frozenset[str],
    lease: timedelta = CLAIM_LEASE,
    abandoned_after: timedelta = ABANDONED_AFTER,
) -> list[tuple[str, str]]:
    """The beat's finder: recover abandoned runs, bring every state up to ``snapshot`` (today's
    catalog, when the beat has one), then claim the due subjects."""
    recover_abandoned_runs(storage, abandoned_after)
    if snapshot is not None:
        refresh_all(storage, snapshot, trusted_keyids, "beat")
    return claim_due(storage, lease)


ON_RUN_OFF, ON_RUN_REQUALIFY = "off", "requalify"  # and "stale", the default


def after_fleet_run(
    storage: Storage, snapshot: CatalogSnapshot, source: str, executor: str
) -> list[tuple[str, str]]:
    """What a fleet run of ``snapshot`` does to qualification (``FARM_QUALIFICATION_ON_RUN``).

    ``stale``: every subject's state is recomputed against the run's catalog, so a subject whose
    evidence is no longer current (its ClusterProfile, declaration or value changed) goes
    ``stale`` with its reason. ``requalify``: then every stale subject is claimed and qualified
    again: on the local executor here, after the run's own renders; on Celery as one
    ``farm.qualification.qualify`` task each on the core's queue. ``off``: nothing.
    Returns the subjects sent to re-qualification.
    """
    settings = storage.settings
    if settings.qualification_on_run == ON_RUN_OFF:
        return []
    trusted = frozenset(load_configured_trust(settings))
    refresh_all(storage, snapshot, trusted, "fleet run")
    if settings.qualification_on_run != ON_RUN_REQUALIFY:
        return []
    return _requalify(storage, snapshot, source, executor, trusted)


def _requalify(
    storage: Storage, snapshot: CatalogSnapshot, source: str, executor: str, trusted: frozenset[str]
) -> list[tuple[str, str]]:
    """Claim every stale subject and qualify it again on ``executor``."""
    settings = storage.settings
    stale = claim_due(storage, states=("stale",))
    if executor == "celery":
        queue = CeleryQueue(settings)
        for cluster, selection in stale:
            queue.send_qualification(cluster, selection)
        return stale
    signer = load_configured_signer(settings)
    for cluster, selection in stale:
        qualify_subject(
            storage,
            snapshot,
            cluster,
            selection,
            execute=lambda queued: run_local(settings, queued),
            wait=lambda _run_id: None,
            signer=signer,
            trusted_keyids=trusted,
            source=source,
        )
    return stale
