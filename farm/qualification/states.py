"""The qualification state of a subject, as a pure function of its records.

The stored state is only ever a cache of ``derive_state``; a test recomputes it from scratch and
requires agreement. Inputs: whether the subject is declared and valid today, today's digests and
identity, the subject's evidence and runs (oldest first), the trusted signers and the clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from farm.evidence.qualification import DIGEST_DRIFT, IDENTITY_DRIFT, Qualification, currentness

UNQUALIFIED = "unqualified"
QUALIFYING = "qualifying"
QUALIFIED = "qualified"
FAILED = "failed"
STALE = "stale"
EXPIRED = "expired"
REQUALIFYING = "requalifying"
RETIRED = "retired"
INVALID = "invalid"
STATES = (UNQUALIFIED, QUALIFYING, QUALIFIED, FAILED, STALE, EXPIRED, REQUALIFYING, RETIRED, INVALID)

REASON_DIGEST_DRIFT = DIGEST_DRIFT
REASON_OWNERSHIP_CHANGE = "ownership_change"
REASON_IDENTITY_DRIFT = IDENTITY_DRIFT
REASON_RENDERER_CHANGED = "renderer_changed"
REASON_SIGNER_UNTRUSTED = "signer_untrusted"


@dataclass(frozen=True)
class EvidenceRecord:
    qualification: Qualification
    attested_at: datetime
    signer_keyid: str
    core_version: str
    owned_paths_digest: str = ""  # digest of the declaration's ownership surface when attested


@dataclass(frozen=True)
class RunRecord:
    digest: str  # envelope digest under test
    state: str  # queued | running | passed | failed | errored


@dataclass(frozen=True)
class Today:
    declared: bool
    valid: bool
    digests: Mapping[str, str]  # selection -> resolved envelope digest for this ClusterProfile
    identity: str
    core_version: str
    owned_paths_digest: str = ""


@dataclass(frozen=True)
class Derived:
    state: str
    reason: str = ""
    current_evidence: int | None = None  # index into the evidence sequence


def derive_state(
    selection: str,
    today: Today,
    evidence: Sequence[EvidenceRecord],
    runs: Sequence[RunRecord],
    trusted_keyids: frozenset[str],
    now: datetime,
    max_age: timedelta,
) -> Derived:
    """The state of subject ``selection`` of one ClusterProfile."""
    if not today.declared:
        return Derived(RETIRED)
    if not today.valid:
        return Derived(INVALID)
    digest = today.digests.get(selection)
    in_flight = any(run.state in ("queued", "running") and run.digest == digest for run in runs)
    current = _latest_current(selection, today, evidence, trusted_keyids)
    finished = [run for run in runs if run.digest == digest and run.state in ("passed", "failed")]
    if finished and finished[-1].state == "failed":
        return Derived(REQUALIFYING if in_flight else FAILED)
    if current is not None:
        if now - evidence[current].attested_at > max_age:
            return Derived(REQUALIFYING if in_flight else EXPIRED, current_evidence=current)
        return Derived(QUALIFIED, current_evidence=current)
    if not evidence:
        return Derived(QUALIFYING if in_flight else UNQUALIFIED)
    reason = _stale_reason(selection, today, evidence[-1], trusted_keyids)
    return Derived(REQUALIFYING if in_flight else STALE, reason)


def _latest_current(
    selection: str, today: Today, evidence: Sequence[EvidenceRecord], trusted: frozenset[str]
) -> int | None:
    for index in range(len(evidence) - 1, -1, -1):
        record = evidence[index]
        if record.qualification.selection != selection or record.signer_keyid not in trusted:
            continue
        if record.core_version != today.core_version:
            continue
        if currentness(record.qualification, today.digests, today.identity).current:
            return index
    return None


def _stale_reason(selection: str, today: Today, latest: EvidenceRecord, trusted: frozenset[str]) -> str:
    if latest.signer_keyid not in trusted:
        return REASON_SIGNER_UNTRUSTED
    verdict = currentness(latest.qualification, today.digests, today.identity)
    if verdict.reason == DIGEST_DRIFT and latest.owned_paths_digest != today.owned_paths_digest:
        return REASON_OWNERSHIP_CHANGE
    if not verdict.current:
        return verdict.reason
    return REASON_RENDERER_CHANGED
