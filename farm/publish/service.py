"""One publish end to end: a run's outputs, gated, delivered, recorded and signed.

A publish is recorded ``pending`` before its first attempt; each attempt claims it (a
conditional UPDATE, so two processes never push it at once), delivers, and finishes it ``done``
with its signed record, or ``failed`` with the error and when to try again. Attempts are retried
here with exponential backoff (``FARM_PUBLISH_ATTEMPTS``, ``FARM_PUBLISH_BACKOFF_SECONDS``); one
still failed after them stays recorded, and ``farm publish --retry`` resumes it. What a publish
writes is derived from the run each time, so an attempt after a failure writes the same files.
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from farm.catalog import CatalogSnapshot
from farm.evidence.keys import Signer, TrustedSigners, load_configured_trust, public_key_pem
from farm.evidence.verify import verify_render_evidence
from farm.identity.canonical import canonical_json
from farm.publish.errors import PublishError, has_credentials, scrub
from farm.publish.gate import REQUIRE_NONE, REQUIRE_QUALIFIED, REQUIREMENTS, unqualified_reasons
from farm.publish.layout import FOLDERS, LAYOUTS, BranchTree, ClusterOutputs, Output, branch_trees
from farm.publish.record import publish_predicate, sign_publish_record
from farm.store import publishes as rows
from farm.store.context import Storage
from farm.store.db import read_scope, session_scope
from farm.store.models import Publish, PublishState, RunKind, utcnow
from farm.store.objects import ObjectStoreError
from farm.store.outputs import evidence_envelope, first_evidence_of
from farm.store.runs import COMPLETE_RUN_STATES, TargetRow, run_by_id, targets_of_run

log = logging.getLogger(__name__)

GIT, OCI = "git", "oci"
KINDS = (GIT, OCI)
CLAIM_LEASE = timedelta(minutes=10)
MAX_BACKOFF_SECONDS = 3600.0


@dataclass(frozen=True)
class Destination:
    """Where a publish goes and how: ``kind`` git or oci, ``address`` a git URL or REGISTRY/REPO."""

    kind: str
    address: str
    layout: str = FOLDERS
    branch: str = "main"
    require: str = REQUIRE_NONE

    def options(self) -> str:
        return canonical_json(
            {"layout": self.layout, "branch": self.branch, "require": self.require}
        ).decode()

    def shown(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "address": scrub(self.address),
            "layout": self.layout,
            "branch": self.branch,
        }


def checked_destination(
    kind: str, address: str, *, layout: str = FOLDERS, branch: str = "main", require: str = REQUIRE_NONE
) -> Destination:
    """A destination, refused (``publish.destination``) when it cannot be one or holds a password."""
    if kind not in KINDS:
        raise PublishError("publish.destination", f"--to {kind}: expected git URL or oci REGISTRY/REPO")
    if not address:
        raise PublishError("publish.destination", f"--to {kind}: the address is empty")
    if has_credentials(address):
        raise PublishError(
            "publish.destination",
            f"{scrub(address)}: credentials in the URL would be stored and shown; give them through "
            "git's credential helper, the ssh agent or the environment instead",
        )
    if layout not in LAYOUTS:
        raise PublishError("publish.destination", f"layout {layout!r}: expected one of {', '.join(LAYOUTS)}")
    if require not in REQUIREMENTS:
        raise PublishError("publish.destination", f"--require {require!r}: expected none or qualified")
    return Destination(kind, address, layout, branch, require)


def destination_of(row: Publish) -> Destination:
    options = json.loads(row.options)
    return Destination(row.kind, row.destination, options["layout"], options["branch"], options["require"])


@dataclass(frozen=True)
class ClusterDecision:
    cluster: str
    published: bool
    reason: str
    outputs: tuple[Output, ...] = ()

    def entry(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "published": self.published,
            "reason": self.reason,
            "outputs": [{"application": o.application, "digest": o.digest} for o in self.outputs],
        }


@dataclass(frozen=True)
class PublishOutcome:
    publish_id: int
    state: str
    reference: dict[str, str] = field(default_factory=dict)
    changed: bool = False
    clusters: tuple[ClusterDecision, ...] = ()
    error: str = ""


# ---------------------------------------------------------------------------------------------
# What a run publishes
# ---------------------------------------------------------------------------------------------


def _run_snapshot(storage: Storage, run_id: str) -> tuple[str, CatalogSnapshot]:
    from farm.fleet.service import stored_catalog

    with read_scope(storage.sessions) as session:
        run = run_by_id(session, run_id)
        if run is None:
            raise PublishError("publish.run", f"run {run_id} does not exist (farm runs lists them)")
        if run.kind != RunKind.FLEET.value or run.state not in COMPLETE_RUN_STATES:
            raise PublishError(
                "publish.run",
                f"run {run_id} is a {run.kind} run in state {run.state}: only a complete fleet run "
                "publishes (farm status shows it)",
            )
        digest = run.snapshot_digest
    return digest, stored_catalog(storage, digest)


def _outputs(storage: Storage, targets: list[TargetRow]) -> tuple[Output, ...]:
    """Each target's manifests (its blob, checked against its digest) and DSSE envelope."""
    outputs = []
    with read_scope(storage.sessions) as session:
        for target in targets:
            digest = target.output_digest or ""
            record = first_evidence_of(session, digest)
            if record is None:
                raise PublishError("publish.evidence_missing", f"output {digest} has no evidence record")
            envelope = evidence_envelope(storage.objects, record)
            outputs.append(Output(target.application, digest, storage.objects.get(digest), envelope))
    return tuple(outputs)


def decide(
    storage: Storage, run_id: str, snapshot: CatalogSnapshot, require: str, trusted: TrustedSigners
) -> list[ClusterDecision]:
    """Each cluster of the run: published with its outputs, or skipped and why."""
    with read_scope(storage.sessions) as session:
        targets = targets_of_run(session, run_id)
    by_cluster: dict[str, list[TargetRow]] = defaultdict(list)
    for target in targets:
        by_cluster[target.cluster_profile].append(target)
    clusters = sorted(by_cluster)
    gated = (
        unqualified_reasons(storage, snapshot, clusters, frozenset(trusted))
        if require == REQUIRE_QUALIFIED
        else {}
    )
    decisions = []
    for cluster in clusters:
        failed = [t for t in by_cluster[cluster] if t.output_digest is None]
        if failed:
            names = ", ".join(f"{t.application} ({t.error_code})" for t in failed[:5])
            decisions.append(
                ClusterDecision(cluster, False, f"{len(failed)} target(s) have no output: {names}")
            )
        elif cluster in gated:
            decisions.append(ClusterDecision(cluster, False, gated[cluster]))
        else:
            outputs = _outputs(storage, by_cluster[cluster])
            refused = _unverified(outputs, trusted, cluster)
            decisions.append(ClusterDecision(cluster, not refused, refused, () if refused else outputs))
    return decisions


def _unverified(outputs: tuple[Output, ...], trusted: TrustedSigners, cluster: str) -> str:
    """Why the cluster's outputs may not publish (fail closed): the first output whose envelope
    does not verify against its bytes and the trusted signers; "" when every one does."""
    for output in outputs:
        target = f"{cluster}/{output.application}"
        _, failures = verify_render_evidence(output.digest, output.envelope, trusted, target=target)
        if failures:
            return f"output {output.digest} does not verify ({failures[0]}): farm verify --all says more"
    return ""


def _public_keys(trusted: TrustedSigners) -> dict[str, str]:
    """Every trusted key, PEM by key id: a skipped cluster's files, published before, may be
    signed by an older key still trusted."""
    return {keyid: public_key_pem(trusted[keyid]) for keyid in trusted}


def commit_message(
    run_id: str, snapshot_digest: str, decisions: list[ClusterDecision], tree: BranchTree
) -> str:
    lines = [f"farm publish: run {run_id}", "", f"run: {run_id}", f"snapshot: sha256:{snapshot_digest}"]
    for decision in decisions:
        if decision.cluster in tree.clusters:
            lines += [f"{decision.cluster}/{o.application}.yaml: sha256:{o.digest}" for o in decision.outputs]
        elif not decision.published:
            lines.append(f"skipped {decision.cluster}: {decision.reason}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Attempts
# ---------------------------------------------------------------------------------------------


def _deliver(
    storage: Storage, run_id: str, destination: Destination, trusted: TrustedSigners
) -> tuple[dict[str, str], bool, str, list[ClusterDecision]]:
    """Deliver once: (reference, changed, snapshot digest, decisions)."""
    snapshot_digest, snapshot = _run_snapshot(storage, run_id)
    decisions = decide(storage, run_id, snapshot, destination.require, trusted)
    published = [ClusterOutputs(d.cluster, d.outputs) for d in decisions if d.published]
    if destination.kind == OCI:
        reference, changed = _to_oci(storage, destination, run_id, published, _public_keys(trusted))
    else:
        clusters = sorted({entry.name for entry in snapshot.clusters} | {d.cluster for d in decisions})
        trees = branch_trees(
            destination.layout, destination.branch, published, clusters, _public_keys(trusted)
        )
        reference, changed = _to_git(destination, trees, run_id, snapshot_digest, decisions)
    return reference, changed, snapshot_digest, decisions


def _to_git(
    destination: Destination,
    trees: dict[str, BranchTree],
    run_id: str,
    snapshot_digest: str,
    decisions: list[ClusterDecision],
) -> tuple[dict[str, str], bool]:
    from farm.publish.git import publish_to_git

    result = publish_to_git(
        destination.address, trees, lambda tree: commit_message(run_id, snapshot_digest, decisions, tree)
    )
    return result.heads, bool(result.committed)


def _to_oci(
    storage: Storage,
    destination: Destination,
    run_id: str,
    published: list[ClusterOutputs],
    public_keys: dict[str, str],
) -> tuple[dict[str, str], bool]:
    from farm.publish.oci import publish_to_oci

    password = storage.settings.publish_oci_password
    pushed = publish_to_oci(
        destination.address,
        run_id,
        published,
        public_keys,
        username=storage.settings.publish_oci_username,
        password=password.get_secret_value() if password is not None else "",
    )
    return pushed.reference, pushed.changed


def attempt(storage: Storage, signer: Signer, publish_id: int) -> PublishOutcome | None:
    """One attempt of a pending or failed publish; None when another process holds it or it is
    done. A failure is recorded on the publish (with when to try again) and returned."""
    now = utcnow()
    with session_scope(storage.sessions) as session:
        if not rows.claim_publish(session, publish_id, now=now, lease=CLAIM_LEASE):
            return None
        row = rows.publish_by_id(session, publish_id)
        assert row is not None
        run_id, destination, attempts = row.run_id, destination_of(row), row.attempts
    trusted = load_configured_trust(storage.settings)
    try:
        reference, changed, snapshot_digest, decisions = _deliver(storage, run_id, destination, trusted)
    except (ObjectStoreError, LookupError) as error:  # a blob or the run's catalog unreadable
        return _failed(storage, publish_id, attempts, PublishError("publish.run", f"run {run_id}: {error}"))
    except PublishError as error:
        return _failed(storage, publish_id, attempts, error)
    predicate = publish_predicate(
        run_id=run_id,
        snapshot_digest=snapshot_digest,
        destination=destination.shown(),
        reference=reference,
        changed=changed,
        clusters=[d.entry() for d in decisions],
        published_at=datetime.now(UTC).isoformat(),
    )
    envelope_digest = storage.objects.put(sign_publish_record(signer, predicate))
    with session_scope(storage.sessions) as session:
        rows.finish_publish(
            session,
            publish_id,
            reference=canonical_json(reference).decode(),
            envelope_digest=envelope_digest,
        )
    log.info(
        "publish %s of run %s to %s: done (%s)",
        publish_id,
        run_id,
        scrub(destination.address),
        "changed" if changed else "unchanged",
    )
    return PublishOutcome(publish_id, PublishState.DONE.value, reference, changed, tuple(decisions))


def _failed(storage: Storage, publish_id: int, attempts: int, error: PublishError) -> PublishOutcome:
    """Record the attempt failed, with when the next one is due; the outcome says why."""
    delay = min(storage.settings.publish_backoff_seconds * 2 ** (attempts - 1), MAX_BACKOFF_SECONDS)
    with session_scope(storage.sessions) as session:
        rows.fail_publish(
            session, publish_id, error=str(error), next_attempt_at=utcnow() + timedelta(seconds=delay)
        )
    log.info("publish %s failed (attempt %s): %s", publish_id, attempts, error)
    return PublishOutcome(publish_id, PublishState.FAILED.value, error=str(error))


def attempt_with_backoff(storage: Storage, signer: Signer, publish_id: int) -> PublishOutcome | None:
    """Up to ``FARM_PUBLISH_ATTEMPTS`` attempts, waiting ``FARM_PUBLISH_BACKOFF_SECONDS``, then
    twice that, … between them; a failure that retrying cannot mend is not retried."""
    outcome = None
    for number in range(storage.settings.publish_attempts):
        if number:
            time.sleep(storage.settings.publish_backoff_seconds * 2 ** (number - 1))
        outcome = attempt(storage, signer, publish_id)
        if outcome is None or outcome.state == PublishState.DONE.value or not _retryable(outcome):
            return outcome
    return outcome


def _retryable(outcome: PublishOutcome) -> bool:
    return outcome.error.startswith(("publish.push_failed", "publish.oci_failed"))


def publish_run(storage: Storage, signer: Signer, run_id: str, destination: Destination) -> PublishOutcome:
    """Record a publish of ``run_id`` to ``destination`` and attempt it (with backoff)."""
    _run_snapshot(storage, run_id)  # a run that cannot publish is refused, not recorded
    publish_id = record_run_publish(storage, run_id, destination)
    outcome = attempt_with_backoff(storage, signer, publish_id)
    return outcome or PublishOutcome(publish_id, PublishState.PENDING.value)


def configured_destination(storage: Storage) -> Destination | None:
    """``FARM_PUBLISH_TO`` (with the gate, layout and branch settings), or None when unset."""
    settings = storage.settings
    if not settings.publish_to:
        return None
    kind, _, address = settings.publish_to.strip().partition(" ")
    return checked_destination(
        kind,
        address.strip(),
        layout=settings.publish_layout,
        branch=settings.publish_branch,
        require=settings.publish_require,
    )


def record_run_publish(storage: Storage, run_id: str, destination: Destination) -> int:
    """Record a pending publish of ``run_id`` (attempted once the run is complete)."""
    with session_scope(storage.sessions) as session:
        return rows.record_publish(
            session,
            run_id=run_id,
            kind=destination.kind,
            destination=destination.address,
            options=destination.options(),
        )


def attempt_pending_of_run(storage: Storage, signer: Signer, run_id: str) -> list[PublishOutcome]:
    """Attempt (with backoff) every publish of ``run_id`` not attempted yet, once the run is
    complete; nothing while it is still rendering (the process that finishes it calls this)."""
    with read_scope(storage.sessions) as session:
        run = run_by_id(session, run_id)
        if run is None or run.state not in COMPLETE_RUN_STATES:
            return []
        ids = [
            row.id
            for row in rows.publishes_of_run(session, run_id)
            if row.state == PublishState.PENDING.value and row.attempts == 0
        ]
    attempted = [attempt_with_backoff(storage, signer, publish_id) for publish_id in ids]
    outcomes = [outcome for outcome in attempted if outcome is not None]
    for outcome in outcomes:
        if outcome.error:  # the run stays complete; its publish is reported and kept
            log.warning(
                "run %s: publish %s failed: %s; farm publish --retry resumes it",
                run_id,
                outcome.publish_id,
                outcome.error,
            )
    return outcomes


def retry_unfinished(
    storage: Storage, signer: Signer, *, due_at: datetime | None = None
) -> list[PublishOutcome]:
    """``farm publish --retry``: attempt every publish of a complete run still pending or
    failed, oldest first; with ``due_at`` (the beat, every minute), those whose next attempt is
    due by then (a failed one waits its backoff; a pending one whose process died, its lease)."""
    with read_scope(storage.sessions) as session:
        ids = [row.id for row in rows.unfinished_publishes(session, due_at=due_at)]
    return [outcome for publish_id in ids if (outcome := attempt(storage, signer, publish_id)) is not None]


def publishes_of(storage: Storage, run_id: str) -> list[dict[str, Any]]:
    """The publishes of a run, for the dashboard and ``farm publish --list``."""
    with read_scope(storage.sessions) as session:
        found = rows.publishes_of_run(session, run_id)
        return [
            {
                "id": row.id,
                "kind": row.kind,
                "destination": scrub(row.destination),
                "options": json.loads(row.options),
                "state": row.state,
                "attempts": row.attempts,
                "error": row.last_error,
                "reference": json.loads(row.reference) if row.reference else {},
                "record": row.envelope_digest,
                "updated_at": row.updated_at.isoformat(),
            }
            for row in found
        ]


def publish_results_of_run(storage: Storage, run_id: str) -> list[dict[str, Any]]:
    """Each publish of ``run_id`` as ``farm run`` reports it: ``publishes_of``'s fields and, once
    done, ``changed`` and ``clusters`` (each published or skipped, and why) read off its signed
    record, the one account of what it published."""
    results = publishes_of(storage, run_id)
    for result in results:
        predicate = _record_predicate(storage, result["record"]) if result["record"] else {}
        result["changed"] = bool(predicate.get("changed"))
        result["clusters"] = predicate.get("clusters", [])
    return results


def _record_predicate(storage: Storage, envelope_digest: str) -> dict[str, Any]:
    from farm.evidence.dsse import parse_envelope

    statement = json.loads(parse_envelope(storage.objects.get(envelope_digest)).payload)
    return statement.get("predicate") or {}
