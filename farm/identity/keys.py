"""The action identity: what names a render (its action key) and a job (its batch key).

The **action key** of a render is the sha256 of the canonical JSON of the action-key version, the
core version (``farm.identity.fingerprint``) and the digest of the render request
(``farm.core.request``). The request names every byte a render reads (application, package,
values, resolved ClusterProfile, flags, namespace, selection, and the chart archives of its chart
components with the helm version that renders them), so an input added to the request can never
be missing from the key. The catalog snapshot, the job, the worker and the clock are not inputs:
an unrelated catalog edit or a retry on another worker hits the cache.

The **batch key** of a job is the digest of its targets' action keys, sorted: what a job's message
carries, so a worker can refuse a message that does not match the job it names.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from farm.identity.canonical import canonical_json, digest_of, is_hex_digest, sha256_hex

ACTION_KEY_VERSION = 2


def request_action_key(core_version: str, request_digest: str) -> str:
    """The cache key of a render: sha256 of the canonical JSON of the core version and the request."""
    return request_action_keys(core_version, [request_digest])[0]


def request_action_keys(core_version: str, request_digests: Iterable[str]) -> list[str]:
    """``request_action_key`` of each of ``request_digests`` on one core version.

    The canonical JSON of a key is the same bytes around each digest (a hex string, which JSON
    writes as it is), so they are built once per core version, not once per target.
    """
    before, after = _action_key_frame(core_version)
    digests = list(request_digests)
    if all(len(digest) == 64 for digest in digests) and _HEX_RUN.fullmatch("".join(digests)):
        # every one a hex digest (checked at once): the frame around each is the same bytes
        sha256 = hashlib.sha256
        return [sha256(b'%s"%s"%s' % (before, digest.encode(), after)).hexdigest() for digest in digests]
    return [
        sha256_hex(
            b'%s"%s"%s' % (before, digest.encode(), after)
            if is_hex_digest(digest)
            else _action_key_bytes(core_version, digest)
        )
        for digest in digests
    ]


_HEX_RUN = re.compile(r"[0-9a-f]*")


def _action_key_bytes(core_version: str, request: str) -> bytes:
    return canonical_json(
        {"actionKeyVersion": ACTION_KEY_VERSION, "coreVersion": core_version, "request": request}
    )


@lru_cache(maxsize=8)
def _action_key_frame(core_version: str) -> tuple[bytes, bytes]:
    """The canonical bytes of an action key before and after its request digest."""
    before, _, after = _action_key_bytes(core_version, "\0").partition(b'"\\u0000"')
    return before, after


def batch_key(action_keys: Sequence[str]) -> str:
    """What a job's message carries: the digest of its targets' action keys."""
    return digest_of(sorted(action_keys))
