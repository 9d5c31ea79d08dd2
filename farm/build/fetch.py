"""Fetching a stored render request and refusing one that cannot be trusted.

A worker reads a target's request out of its application's request pack by digest, checks that
it hashes to the digest its target row names and that its action key on this worker's core is
the one the target was planned with, then (for a profiled request) that its resolved
ClusterProfile is what the run's catalog snapshot resolves its selection to (the profile gate,
``farm.build.profile_gate``). Each refusal is a value: its code and message fail that target.
"""

from __future__ import annotations

from farm.build.profile_gate import check_request_profile
from farm.core.request import RenderRequest, RequestError
from farm.identity.keys import request_action_key
from farm.profiles import ProfileError
from farm.store.objects import BlobCorruptError, BlobMissingError, ObjectStore
from farm.store.snapshots import RequestReader

FORGED_REQUEST = "request.forged"
FORGED_ACTION_KEY = "request.action_key_mismatch"


class RequestRefused(Exception):
    """A stored render request that cannot be trusted: its ``code`` and ``message`` name why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def fetch_request(
    reader: RequestReader, request_digest: str, action_key: str, version: str, pack: str | None = None
) -> RenderRequest:
    """The request stored under ``request_digest`` (in the request pack ``pack``), verified against
    the ``action_key`` it was planned with on core ``version``; raises ``RequestRefused`` when it
    cannot be trusted."""
    try:
        request = reader.request(request_digest, pack)
    except (BlobCorruptError, RequestError) as error:
        raise RequestRefused(FORGED_REQUEST, f"render request {request_digest}: {error}") from None
    except BlobMissingError as error:
        raise RequestRefused(FORGED_REQUEST, f"render request {request_digest} is missing: {error}") from None
    key = request_action_key(version, request.digest)
    if key != action_key:
        raise RequestRefused(
            FORGED_ACTION_KEY,
            f"the target's request has action key {key} on core {version}, the target was planned as {action_key}",
        )
    return request


def fetch_checked_request(
    objects: ObjectStore,
    reader: RequestReader,
    *,
    snapshot_digest: str,
    cluster: str,
    request_digest: str,
    action_key: str,
    version: str,
    pack: str | None = None,
) -> RenderRequest:
    """``fetch_request``, then the profile gate against the run's snapshot: the request a render
    may trust. Raises ``RequestRefused`` (a profile gate refusal keeps its ``profile.*`` code)."""
    request = fetch_request(reader, request_digest, action_key, version, pack)
    try:  # the resolved profile is recomputed from the snapshot, never trusted
        check_request_profile(objects, snapshot_digest, cluster, request)
    except ProfileError as error:
        raise RequestRefused(error.code, error.message) from None
    return request
