"""Qualify a subject: render its targets through the fleet's jobs, then sign and record.

The render goes through ``scheduler.planner.plan_run`` (limited to the subject's target
requests) and the executor handed in, so a qualification renders exactly as a fleet run does.
Only when every target succeeded (or was cached) is a qualification statement signed.

Subjects and their resolved digests come from the catalog snapshot (``farm/profiles``):
(ClusterProfile, "name=value") per declared value, (ClusterProfile, "") otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

import yaml

from farm.catalog import CatalogError, CatalogSnapshot, TargetRequest
from farm.evidence.canonical import digest_of, sha256_hex
from farm.evidence.keys import Signer, load_configured_signer, load_configured_trust
from farm.evidence.qualification import Qualification, TargetOutput, sign_qualification
from farm.profiles.errors import ProfileError
from farm.profiles.selection import Selection, parse_selection
from farm.qualification.descriptor import descriptor_identity
from farm.qualification.states import Today
from farm.scheduler.fingerprint import core_version
from farm.scheduler.planner import plan_run
from farm.scheduler.progress import wait_for_run
from farm.scheduler.service import run_outputs
from farm.store import qualification as records
from farm.store.context import Storage
from farm.store.db import session_scope
from farm.store.models import utcnow

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
        valid=snapshot.cluster(cluster).problem is None,
        digests={selection: r.digest for selection, r in resolved.items()},
        identity=_identity_of(any_resolved.effective),
        core_version=core_version(),
        owned_paths_digest=digest_of({key: list(paths) for key, paths in any_resolved.owned.items()}),
    )


def _identity_of(cluster_profile: bytes) -> str:
    document = yaml.safe_load(cluster_profile) or {}
    capabilities = (document.get("spec") or {}).get("capabilities") or {}
    return descriptor_identity(list(capabilities) if isinstance(capabilities, dict) else [])


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
    planned = plan_run(
        storage,
        snapshot,
        source=source,
        trigger="qualification",
        batch_size=storage.settings.batch_size,
        target_requests=subject_requests(snapshot, cluster, selection),
    )
    execute(planned.queued)
    wait(planned.run_id)
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


def refresh_all(
    storage: Storage, snapshot: CatalogSnapshot, trusted_keyids: frozenset[str], cause: str
) -> None:
    """Recompute the state of every subject against ``snapshot`` (a fleet run after a catalog change)."""
    now = utcnow()
    with session_scope(storage.sessions) as session:
        known = {(s.cluster_profile, s.selection): s for s in records.subjects(session)}
        for cluster, selection in subjects_of(snapshot):
            known.setdefault((cluster, selection), records.ensure_subject(session, cluster, selection, now))
        for (cluster, _selection), subject in known.items():
            records.refresh_state(
                session, subject, today_for(snapshot, cluster), trusted_keyids, now, max_age(storage), cause
            )


DUE_STATES = ("stale", "expired", "failed", "unqualified")


def claim_due(storage: Storage, lease: timedelta) -> list[tuple[str, str]]:
    """Subjects that are stale, expired, failed or never qualified, each claimed for one enqueue.

    The claim is a conditional UPDATE (``records.claim_for_enqueue``): of two beats running at
    once, only one gets each subject.
    """
    now = utcnow()
    due = []
    with session_scope(storage.sessions) as session:
        candidates = [s for s in records.subjects(session) if s.state in DUE_STATES]
    for subject in candidates:
        with session_scope(storage.sessions) as session:
            if records.claim_for_enqueue(session, subject.id, now, lease):
                due.append((subject.cluster_profile, subject.selection))
    return due
