"""Qualification bookkeeping: subjects, what today's catalog says of them, and the records of a
qualification (begun, recorded with signed evidence, abandoned), and the beat's finder.

A qualification's renders are a run of kind ``qualification`` started by the fleet-run owner
(``farm.fleet``), limited to the subject's targets, so it renders exactly as a fleet run does;
this module records what it gave. Only when every target rendered (or was cached) is a
qualification statement signed.

Subjects and their resolved digests come from the catalog snapshot (``farm/profiles``):
(ClusterProfile, "name=value") per declared value, (ClusterProfile, "") otherwise; they are
written ``CLUSTER[:PROFILE=VALUE]`` everywhere (``farm.qualification.subjects``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from farm.catalog import CatalogError, CatalogSnapshot, TargetRequest
from farm.evidence.keys import Signer
from farm.evidence.qualification import Qualification, TargetOutput, sign_qualification
from farm.identity.canonical import digest_of, sha256_hex
from farm.identity.fingerprint import core_version
from farm.profiles.errors import ProfileError
from farm.profiles.selection import Selection, parse_selection
from farm.qualification import recorded
from farm.qualification.descriptor import cluster_profile_identity, descriptor_identity
from farm.qualification.states import Today
from farm.store import qualification as records
from farm.store.context import Storage
from farm.store.db import session_scope
from farm.store.models import utcnow


class TargetOutcome(Protocol):
    """What a qualification reads of each of its run's targets."""

    output_digest: str | None
    error_code: str | None


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


def _selections_of(snapshot: CatalogSnapshot, cluster: str) -> list[str]:
    """The selections of ``cluster``'s subjects (``subjects_of`` for one ClusterProfile, without
    walking every other: a refresh asks this of each ClusterProfile of the fleet)."""
    declaration = snapshot.declarations.get(cluster)
    if declaration is None:
        return [""]
    return [f"{declaration.name}={value.name}" for value in declaration.values]


def today_for(snapshot: CatalogSnapshot, cluster: str) -> Today:
    """What today's catalog says about the subjects of ``cluster``: each selection's resolved digest."""
    try:
        entry = snapshot.cluster(cluster)
    except KeyError:
        return Today(False, False, {}, descriptor_identity([]), core_version())
    if entry.problem is not None:  # refused by the loader: never parsed again
        return Today(True, False, {}, descriptor_identity([]), core_version())
    selections = _selections_of(snapshot, cluster)
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


@dataclass(frozen=True)
class OpenQualification:
    """A qualification begun: its run row and what today's catalog says of its subject."""

    run_id: int
    cluster: str
    selection: str
    today: Today
    snapshot_digest: str  # the snapshot ``today`` was read from: each transition it makes names it

    @property
    def subject_digest(self) -> str:
        return self.today.digests[self.selection]


def open_qualification(
    storage: Storage, snapshot: CatalogSnapshot, cluster: str, selection: str, trusted_keyids: frozenset[str]
) -> OpenQualification:
    """Record that a qualification of (cluster, selection) begins: a running qualification run."""
    today = today_for(snapshot, cluster)
    now = utcnow()
    with session_scope(storage.sessions) as session:
        subject = recorded.ensure_subject(session, cluster, selection, now)
        run = records.start_run(session, subject, today.digests[selection], now)
        recorded.refresh_state(
            session, subject, today, trusted_keyids, now, max_age(storage), "qualify", snapshot.digest
        )
        return OpenQualification(run.id, cluster, selection, today, snapshot.digest)


def attach_fleet_run(storage: Storage, opened: OpenQualification, fleet_run_id: str) -> None:
    with session_scope(storage.sessions) as session:
        records.attach_fleet_run(session, opened.run_id, fleet_run_id)


def close_qualification(
    storage: Storage,
    opened: OpenQualification,
    fleet_run_id: str,
    outputs: Mapping[tuple[str, str], TargetOutcome],
    *,
    signer: Signer,
    trusted_keyids: frozenset[str],
) -> SubjectResult:
    """Record the outcome of a qualification whose renders are done: signed evidence when every
    target rendered (or was cached), a failed run otherwise; the subject's state recomputed."""
    cluster, selection, today = opened.cluster, opened.selection, opened.today
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
            subject_digest=opened.subject_digest,
            descriptor_identity=today.identity,
            run_id=fleet_run_id,
            outputs=tuple(
                TargetOutput(f"{app}/{cl}", out.output_digest or "")
                for (app, cl), out in sorted(outputs.items())
            ),
        )
        envelope = sign_qualification(signer, qualification)
        storage.objects.put(envelope)  # the blob first, then the row that points at it
    with session_scope(storage.sessions) as session:
        subject = recorded.ensure_subject(session, cluster, selection, now)
        records.finish_run(session, opened.run_id, "passed" if succeeded else "failed")
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
        recorded.refresh_state(
            session,
            subject,
            today,
            trusted_keyids,
            now,
            max_age(storage),
            "qualified",
            opened.snapshot_digest,
        )
        return SubjectResult(cluster, selection, subject.state, subject.reason, fleet_run_id)


def abandon_qualification(
    storage: Storage, opened: OpenQualification, trusted_keyids: frozenset[str]
) -> None:
    """A qualification that raised: its run is ``errored`` (not left ``running``), state refreshed."""
    now = utcnow()
    with session_scope(storage.sessions) as session:
        records.error_run(session, opened.run_id)
        subject = recorded.ensure_subject(session, opened.cluster, opened.selection, now)
        recorded.refresh_state(
            session,
            subject,
            opened.today,
            trusted_keyids,
            now,
            max_age(storage),
            "qualification errored",
            opened.snapshot_digest,
        )


def record_errored(
    storage: Storage, snapshot: CatalogSnapshot, subjects: Sequence[tuple[str, str]], since: datetime
) -> None:
    """A qualification of ``subjects`` begun at ``since`` raised: each subject it never got to
    (no run of it since then; one that raised mid-way errored its own run) gets an errored run."""
    now = utcnow()
    with session_scope(storage.sessions) as session:
        for cluster, selection in subjects:
            subject = recorded.ensure_subject(session, cluster, selection, now)
            if not records.started_since(session, subject, since):
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

    def today_of(cluster: str) -> Today:
        if cluster not in todays:
            todays[cluster] = today_for(snapshot, cluster)
        return todays[cluster]

    with session_scope(storage.sessions) as session:
        known = {(s.cluster_profile, s.selection): s for s in records.subjects(session)}
        for cluster, selection in subjects_of(snapshot):
            if (cluster, selection) not in known:
                known[(cluster, selection)] = recorded.ensure_subject(session, cluster, selection, now)
        subjects = list(known.values())
        recorded.refresh_states(
            session, subjects, today_of, trusted_keyids, now, max_age(storage), cause, snapshot.digest
        )
        return {(s.cluster_profile, s.selection): (s.state, s.reason) for s in subjects}


DUE_STATES = ("stale", "expired", "failed", "unqualified")
# A qualification records its outcome moments after its fleet run finishes; one still running this
# long after that (or this long after it started, with no fleet run planned) lost its process.
ABANDONED_AFTER = timedelta(minutes=10)


def claim_lease(storage: Storage) -> timedelta:
    """How long a subject sent to be qualified stays claimed (FARM_QUALIFICATION_CLAIM_LEASE_SECONDS)."""
    return timedelta(seconds=storage.settings.qualification_claim_lease_seconds)


def claim_due(
    storage: Storage, lease: timedelta | None = None, states: Sequence[str] = DUE_STATES
) -> list[tuple[str, str]]:
    """Subjects in ``states`` (default: stale, expired, failed or never qualified), each claimed
    for one enqueue for ``lease`` (default: the setting, ``claim_lease``).

    The claim is a conditional UPDATE (``records.claim_for_enqueue``): of two beats running at
    once, only one gets each subject.
    """
    now = utcnow()
    lease = lease if lease is not None else claim_lease(storage)
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
    lease: timedelta | None = None,
    abandoned_after: timedelta = ABANDONED_AFTER,
) -> list[tuple[str, str]]:
    """The beat's finder: recover abandoned runs, bring every state up to ``snapshot`` (today's
    catalog, when the beat has one), then claim the due subjects."""
    recover_abandoned_runs(storage, abandoned_after)
    if snapshot is not None:
        refresh_all(storage, snapshot, trusted_keyids, "beat")
    return claim_due(storage, lease)
