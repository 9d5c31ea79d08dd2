"""``farm audit``: re-render cached targets from their stored requests and compare digests.

Same core version and other bytes is nondeterminism; another core version is drift. Each
re-render runs in a render child within the workers' bounds (FARM_RENDER_TIMEOUT_SECONDS,
FARM_RENDER_MEMORY_MIB): a render the bounds stop is that target's ``stopped`` verdict, with the
bound's code (``render.timeout``, ``render.memory``, ``render.crashed``) and message.
"""

from __future__ import annotations

import difflib
import random
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from farm.build.bounded import BoundExceeded
from farm.build.fetch import RequestRefused, fetch_checked_request
from farm.build.step import RenderJob, RenderOutcome, render_bounds, render_requests
from farm.evidence.audit_record import sign_audit_record
from farm.evidence.batch import provenance_of_subject
from farm.evidence.dsse import parse_envelope
from farm.evidence.keys import Signer
from farm.evidence.statement import parse_statement
from farm.identity.canonical import sha256_hex
from farm.identity.fingerprint import core_version
from farm.store.audit_records import record_audit
from farm.store.context import Storage
from farm.store.db import read_scope, session_scope
from farm.store.outputs import evidence_envelope, first_evidence_of
from farm.store.runs import TargetRow, newest_runs, run_by_id, targets_of_run
from farm.store.snapshots import RequestReader


class AuditError(ValueError):
    """An audit that cannot start (nothing to audit, no such run)."""


MATCH, DRIFT, NONDETERMINISM = "match", "drift", "nondeterminism"
REFUSED = "refused"  # the stored request cannot be trusted (forged, missing, another action key)
STOPPED = "stopped"  # the re-render was stopped by a render bound (its diff is "code: message")


@dataclass(frozen=True)
class AuditedTarget:
    target_id: str
    application: str
    cluster_profile: str
    expected: str
    observed: str
    signed_core: str
    verdict: str
    diff: str = ""

    def entry(self) -> dict[str, str]:
        return {
            "target_id": self.target_id,
            "application": self.application,
            "clusterProfile": self.cluster_profile,
            "expected": self.expected,
            "observed": self.observed,
            "signedCoreVersion": self.signed_core,
            "verdict": self.verdict,
        }


def sample(rows: list[TargetRow], size: int | None, seed: int) -> list[TargetRow]:
    """A deterministic sample for ``seed`` (all rows when ``size`` is None)."""
    ordered = sorted(rows, key=lambda row: row.target_id)
    if size is None or size >= len(ordered):
        return ordered
    return sorted(random.Random(seed).sample(ordered, size), key=lambda row: row.target_id)


def cached_targets(storage: Storage, run_id: str) -> list[TargetRow]:
    with storage.sessions() as session:
        return [row for row in targets_of_run(session, run_id) if row.output_digest and row.request_digest]


def _signed_core(storage: Storage, digest: str) -> str:
    with storage.sessions() as session:
        record = first_evidence_of(session, digest)
        if record is None:
            return ""
        statement = parse_statement(parse_envelope(evidence_envelope(storage.objects, record)).payload)
    return provenance_of_subject(statement, record.subject_index).inputs.core_version


def audit_target(storage: Storage, snapshot_digest: str, row: TargetRow) -> AuditedTarget:
    """Re-render one target from its stored request (verified as the worker verifies it, against
    the action key it was planned with on the core that signed it) and judge the bytes."""
    expected = row.output_digest or ""
    signed_core = _signed_core(storage, expected)
    audited = AuditedTarget(
        row.target_id, row.application, row.cluster_profile, expected, "", signed_core, MATCH
    )
    try:
        request = fetch_checked_request(
            storage.objects,
            RequestReader(storage.objects),
            snapshot_digest=snapshot_digest,
            cluster=row.cluster_profile,
            request_digest=row.request_digest or "",
            action_key=row.action_key,
            version=signed_core,
            pack=row.request_pack,
        )
    except RequestRefused as refused:
        return replace(audited, verdict=REFUSED, diff=f"{refused.code}: {refused.message}")
    (outcome,) = render_requests([RenderJob(request)], render_bounds(storage.settings))
    if isinstance(outcome, BoundExceeded):
        return replace(audited, verdict=STOPPED, diff=f"{outcome.code}: {outcome.message}")
    manifests = _bytes_of(outcome)
    observed = sha256_hex(manifests)
    if observed == expected:
        return replace(audited, observed=observed)
    verdict = NONDETERMINISM if signed_core == core_version() else DRIFT
    old = storage.objects.get(expected).decode(errors="replace").splitlines(keepends=True)
    new = manifests.decode(errors="replace").splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(old, new, f"signed/{expected[:12]}", f"rendered/{observed[:12]}"))
    return replace(audited, observed=observed, verdict=verdict, diff=diff)


def _bytes_of(outcome: RenderOutcome) -> bytes:
    """The bytes a re-render gave; a failed render's bytes name its error (never the output's)."""
    if outcome.manifests is not None:
        return outcome.manifests
    return f"render failed: {outcome.code}: {outcome.message}\n".encode()


@dataclass(frozen=True)
class AuditReport:
    run_id: str
    seed: int | None
    targets: tuple[AuditedTarget, ...]
    envelope_digest: str

    def count(self, verdict: str) -> int:
        return sum(1 for t in self.targets if t.verdict == verdict)


def run_audit(storage: Storage, signer: Signer, run_id: str, *, size: int | None, seed: int) -> AuditReport:
    """Audit a (seeded) sample of the run's cached targets, sign the record, store it."""
    rows = sample(cached_targets(storage, run_id), size, seed)
    if not rows:
        raise AuditError(f"run {run_id} has no target with a stored output to audit; run `farm run` first")
    with read_scope(storage.sessions) as session:
        run = run_by_id(session, run_id)
    if run is None:
        raise AuditError(f"run {run_id} does not exist (farm runs lists them)")
    audited = tuple(audit_target(storage, run.snapshot_digest, row) for row in rows)
    recorded_seed = None if size is None else seed
    envelope = sign_audit_record(
        signer,
        run_id=run_id,
        seed=recorded_seed,
        core_version=core_version(),
        audited_at=datetime.now(UTC).isoformat(),
        entries=[t.entry() for t in audited],
    )
    digest = storage.objects.put(envelope)
    report = AuditReport(run_id, recorded_seed, audited, digest)
    with session_scope(storage.sessions) as session:
        record_audit(
            session,
            envelope_digest=digest,
            run_id=run_id,
            signer_keyid=signer.keyid,
            seed=recorded_seed,
            audited=len(audited),
            nondeterministic=report.count(NONDETERMINISM),
            drifted=report.count(DRIFT),
        )
    return report


def latest_run(storage: Storage) -> str | None:
    with storage.sessions() as session:
        runs = newest_runs(session, 1)
    return runs[0].id if runs else None


def scheduled_audit(
    storage: Storage, signer: Signer, size: int, *, now: datetime | None = None
) -> AuditReport | None:
    """The beat's audit: ``size`` targets of the latest run, seeded by the hour it runs in (so each
    audit looks at another sample, and the record names the seed that reproduces it). None when
    nothing is recorded yet."""
    run_id = latest_run(storage)
    if run_id is None:
        return None
    seed = int((now or datetime.now(UTC)).timestamp()) // 3600
    try:
        return run_audit(storage, signer, run_id, size=size, seed=seed)
    except AuditError:
        return None
