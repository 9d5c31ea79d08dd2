"""The signed publish record: an in-toto Statement v1 whose predicate (``PUBLISH_PREDICATE_TYPE``)
names the run, the destination (no credentials), the commit or manifest digests, and each cluster
published or skipped and why; its subjects are the run's snapshot and every output published."""

from __future__ import annotations

from typing import Any

from farm.evidence.dsse import sign_envelope
from farm.evidence.keys import Signer, TrustedSigners
from farm.evidence.statement import Subject, build_statement
from farm.evidence.verify import Failure, check_envelope

PUBLISH_PREDICATE_TYPE = "https://farm.dev/publish/v1"


def publish_predicate(
    *,
    run_id: str,
    snapshot_digest: str,
    destination: dict[str, str],
    reference: dict[str, str],
    changed: bool,
    clusters: list[dict[str, Any]],
    published_at: str,
) -> dict[str, Any]:
    """``clusters``: ``{"cluster", "published", "reason", "outputs": [{"application", "digest"}]}``."""
    return {
        "run": run_id,
        "snapshot": snapshot_digest,
        "destination": destination,
        "reference": reference,
        "changed": changed,
        "clusters": clusters,
        "publishedAt": published_at,
    }


def _subjects(predicate: dict[str, Any]) -> list[Subject]:
    subjects = [Subject("snapshot", predicate["snapshot"])]
    for cluster in predicate["clusters"]:
        if cluster["published"]:
            subjects += [
                Subject(f"{cluster['cluster']}/{output['application']}.yaml", output["digest"])
                for output in cluster["outputs"]
            ]
    return subjects


def sign_publish_record(signer: Signer, predicate: dict[str, Any]) -> bytes:
    statement = build_statement(_subjects(predicate), PUBLISH_PREDICATE_TYPE, predicate)
    return sign_envelope(statement.to_bytes(), signer).to_bytes()


def verify_publish_envelope(
    envelope_bytes: bytes, trusted: TrustedSigners, *, target: str
) -> tuple[dict[str, Any] | None, list[Failure]]:
    """The predicate of a publish record, and every failure: the envelope's own
    (``check_envelope``), ``publish.predicate_type`` (not a publish record) and
    ``publish.malformed`` (subjects that are not the snapshot and the published outputs)."""
    check = check_envelope(envelope_bytes, trusted, target)
    failures = list(check.failures)
    statement = check.statement
    if statement is None:
        return None, failures
    if statement.predicate_type != PUBLISH_PREDICATE_TYPE:
        message = f"predicateType is {statement.predicate_type!r}, not {PUBLISH_PREDICATE_TYPE}"
        return None, [*failures, Failure("publish.predicate_type", target, message)]
    predicate = statement.predicate
    try:
        expected = _subjects(predicate)
    except (KeyError, TypeError):
        expected = None
    if expected is None or list(statement.subjects) != expected:
        message = "the predicate's snapshot and published outputs are not the statement's subjects"
        return None, [*failures, Failure("publish.malformed", target, message)]
    return predicate, failures
