"""``farm verify --all``'s check of every publish record: its envelope blob intact and signed by a
trusted key, a publish predicate, and the row restating it (run, destination, reference) agrees.
A publish row that says ``done`` without a record is ``publish.unsigned``."""

from __future__ import annotations

import json
from collections.abc import Iterator

from farm.evidence.keys import TrustedSigners
from farm.evidence.verify import Failure
from farm.identity.canonical import canonical_json
from farm.publish.errors import scrub
from farm.publish.record import verify_publish_envelope
from farm.store.models import Publish, PublishState
from farm.store.objects import BlobCorruptError, BlobMissingError, ObjectStore
from farm.store.publishes import all_publishes
from farm.verification.findings import Context, Finding


def _row_matches(row: Publish, predicate: dict) -> bool:
    reference = json.loads(row.reference) if row.reference else None
    return (
        predicate.get("run") == row.run_id
        and predicate.get("destination", {}).get("address") == scrub(row.destination)
        and predicate.get("destination", {}).get("kind") == row.kind
        and canonical_json(predicate.get("reference")) == canonical_json(reference)
        and _options_match(row.options, predicate.get("destination", {}))
    )


def _options_match(options: str, destination: dict) -> bool:
    """The row's layout and branch (what ``farm publish --retry`` and the pages read) are the signed
    destination's, where it names them."""
    try:
        stored = json.loads(options)
    except ValueError:
        return False
    return isinstance(stored, dict) and all(
        stored.get(name) == destination[name] for name in ("layout", "branch") if name in destination
    )


def check_publish(row: Publish, objects: ObjectStore, trusted: TrustedSigners) -> list[Failure]:
    target = f"publish {row.id} (run {row.run_id})"
    if row.state != PublishState.DONE.value:
        return []
    if row.envelope_digest is None:
        return [Failure("publish.unsigned", target, "the publish says done but names no signed record")]
    try:
        envelope = objects.get(row.envelope_digest)
    except BlobMissingError as error:
        return [Failure("publish.missing", target, str(error))]
    except BlobCorruptError as error:
        return [Failure("publish.corrupt", target, str(error))]
    predicate, failures = verify_publish_envelope(envelope, trusted, target=target)
    if predicate is not None and not _row_matches(row, predicate):
        failures.append(
            Failure(
                "publish.row_mismatch",
                target,
                "the row's run, destination (with its layout and branch) or reference is not the signed one",
            )
        )
    return failures


def check_publish_records(context: Context) -> Iterator[Finding]:
    """``farm verify --all``'s check kind: every publish record (see ``farm/verification``)."""
    for row in all_publishes(context.session):
        failures = check_publish(row, context.storage.objects, context.trusted)
        if not failures:
            yield Finding("publish record")
        for failure in failures:
            yield Finding("publish record", failure)
