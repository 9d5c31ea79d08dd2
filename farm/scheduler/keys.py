"""Action keys of targets: sha256 over canonical JSON of every input that can change the bytes."""

from __future__ import annotations

from hashlib import sha256

from farm.catalog import CatalogSnapshot, Target
from farm.evidence.canonical import digest_of
from farm.evidence.provenance import RenderInputs, action_key
from farm.scheduler.fingerprint import core_version
from farm.scheduler.snapshots import TargetDocuments

EMPTY_DIGEST = sha256(b"").hexdigest()


def _digest(data: bytes | None) -> str | None:
    return sha256(data).hexdigest() if data is not None else None


def render_inputs(
    app_yaml: bytes,
    package_yaml: bytes | None,
    values_yaml: bytes | None,
    profile_yaml: bytes,
    namespace: str | None,
    selection: str = "",
) -> RenderInputs:
    """The digests a render depends on. The namespace flag and the package belong to the
    application input, since both change what the application renders to."""
    application = digest_of(
        {"app": _digest(app_yaml), "package": _digest(package_yaml), "namespace": namespace}
    )
    return RenderInputs(
        core_version=core_version(),
        application_digest=application,
        values_digest=_digest(values_yaml) or EMPTY_DIGEST,
        cluster_profile_digest=sha256(profile_yaml).hexdigest(),
        selection=selection,
    )


def target_inputs(snapshot: CatalogSnapshot, target: Target) -> RenderInputs:
    app = snapshot.application(target.application)
    cluster = snapshot.cluster(target.cluster)
    return render_inputs(
        app.app_yaml, app.package_yaml, app.values_for(target.cluster), cluster.profile_yaml, target.namespace
    )


def documents_inputs(documents: TargetDocuments) -> RenderInputs:
    return render_inputs(
        documents.app_yaml,
        documents.package_yaml,
        documents.values_yaml,
        documents.profile_yaml,
        documents.namespace,
    )


def target_action_key(snapshot: CatalogSnapshot, target: Target) -> str:
    return action_key(target_inputs(snapshot, target))
