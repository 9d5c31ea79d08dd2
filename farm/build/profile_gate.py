"""The worker's side of the profile gate: a profiled request's ResolvedClusterProfile is
recomputed from the catalog snapshot of its run before anything renders (reference R29).

The base ClusterProfile and the declarations come from the snapshot's manifest in object storage
(content-addressed, so what a digest names never changes and may be kept per process). An
unprofiled request costs nothing here (R24).
"""

from __future__ import annotations

import json
from collections import OrderedDict

from farm.core.request import RenderRequest
from farm.profiles import Declaration, ProfileError, parse_declaration
from farm.profiles.gate import FORGED, MISMATCH, check_envelope
from farm.store.objects import BlobCorruptError, BlobMissingError, ObjectStore

_CACHED = 256
_inputs: OrderedDict[tuple[str, str], tuple[bytes, Declaration | None]] = OrderedDict()


def catalog_inputs(
    objects: ObjectStore, snapshot_digest: str, cluster: str
) -> tuple[bytes, Declaration | None]:
    """The base ClusterProfile bytes of ``cluster`` in snapshot ``snapshot_digest`` and its
    declaration (None when it declares none). Raises ``ProfileError`` when the snapshot does not
    name the cluster or a blob is gone."""
    key = (snapshot_digest, cluster)
    if key in _inputs:
        _inputs.move_to_end(key)
        return _inputs[key]
    try:
        manifest = json.loads(objects.get(snapshot_digest))
        profile_digest = manifest["clusters"].get(cluster)
        if profile_digest is None:
            raise ProfileError(
                FORGED, f"catalog snapshot {snapshot_digest} has no ClusterProfile {cluster!r}"
            )
        base = objects.get(profile_digest)
        declarations = (
            parse_declaration(objects.get(digest), source)
            for source, digest in sorted(manifest["profiles"].items())
        )
        declaration = next((d for d in declarations if d.cluster_profile == cluster), None)
    except (BlobMissingError, BlobCorruptError) as error:
        raise ProfileError(FORGED, f"catalog snapshot {snapshot_digest}: {error}") from None
    _inputs[key] = (base, declaration)
    if len(_inputs) > _CACHED:
        _inputs.popitem(last=False)
    return base, declaration


def check_request_profile(
    objects: ObjectStore, snapshot_digest: str, cluster: str, request: RenderRequest
) -> None:
    """Refuse a profiled request whose resolved ClusterProfile (or its bytes) is not what the
    snapshot resolves its selection to; raises ``ProfileError`` (``envelope.*``)."""
    if request.resolved_profile is None:
        if request.selection:
            raise ProfileError(
                MISMATCH,
                f"request for {cluster} selects {request.selection} but carries no resolved ClusterProfile",
            )
        return
    base, declaration = catalog_inputs(objects, snapshot_digest, cluster)
    check_envelope(
        request.resolved_profile,
        base,
        request.cluster_profile_source,
        declaration,
        effective=request.cluster_profile,
    )
