"""Render provenance: the action key of a render and the signed statement about its output.

The **action key** (``farm.identity.keys``) is the sha256 of the canonical JSON of the core version and the digest of the
render request (``farm.core.request``), which covers every input that can change the output
bytes: application, package, values, resolved ClusterProfile, flags, namespace and selection
(``name=value``, or ``""`` when unprofiled). The statement also records the digests of the
application, values and ClusterProfile on their own, for people and queries. The catalog
snapshot, the job, the worker and the clock are *not* inputs, so an unrelated catalog edit or a
retry on another worker hits the cache.

The **provenance statement** has the output digest as its subject and an SLSA provenance v1
predicate that records the action key, every input digest, the core version, the catalog snapshot
and the job id (as ``invocationId``). It holds no timestamp and no worker name, so re-signing the
same render with the same key gives the same envelope bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from farm.core.request import RenderRequest
from farm.evidence.errors import EvidenceError, require_exact_keys
from farm.evidence.statement import Statement, Subject, build_statement
from farm.identity.canonical import digest_of, is_hex_digest, require_hex_digest
from farm.identity.keys import request_action_key

PROVENANCE_PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
RENDER_BUILD_TYPE = "https://farm.gokure.dev/render/v1"
BUILDER_ID = "https://farm.gokure.dev/builder/v1"
_CODE = "provenance.malformed"


@dataclass(frozen=True)
class RenderInputs:
    """Everything that can change a render's output bytes (digests are sha256 hex)."""

    core_version: str
    request_digest: str
    application_digest: str
    values_digest: str
    cluster_profile_digest: str
    selection: str = ""

    def __post_init__(self) -> None:
        if not self.core_version:
            raise ValueError("core_version: must not be empty")
        for field in ("request_digest", "application_digest", "values_digest", "cluster_profile_digest"):
            require_hex_digest(getattr(self, field), field)

    @cached_property
    def selection_digest(self) -> str:
        return _selection_digest(self.selection)


@lru_cache(maxsize=256)
def _selection_digest(selection: str) -> str:
    return digest_of(selection)  # a fleet has few selections, shared by many targets


def action_key(inputs: RenderInputs) -> str:
    return request_action_key(inputs.core_version, inputs.request_digest)


def inputs_of(request: RenderRequest, core_version: str) -> RenderInputs:
    """The digests a statement records about ``request``, rendered by ``core_version``: those of
    its descriptor (``RenderRequest.descriptor``), read off the request without building it."""
    documents = request.document_digests()
    return RenderInputs(
        core_version=core_version,
        request_digest=request.digest,
        application_digest=_application_digest(
            documents["app"], documents["package"], tuple(request.sets), request.namespace
        ),
        values_digest=_values_digest(tuple((layer.source, layer.digest) for layer in request.values)),
        cluster_profile_digest=documents["clusterProfile"],
        selection=request.selection,
    )


@lru_cache(maxsize=1024)  # the same for every target of an application: a batch computes it once
def _application_digest(app: str, package: str | None, sets: tuple[str, ...], namespace: str | None) -> str:
    return digest_of({"app": app, "package": package, "sets": list(sets), "namespace": namespace})


@lru_cache(maxsize=1024)
def _values_digest(layers: tuple[tuple[str, str], ...]) -> str:
    """The digest of the descriptor's ``values``: its layers' sources and digests, in order (the
    same for every target of an application: a batch computes it once)."""
    return digest_of([{"source": source, "digest": digest} for source, digest in layers])


@dataclass(frozen=True)
class RenderProvenance:
    """What a provenance statement says about one output."""

    inputs: RenderInputs
    application: str
    cluster_profile: str
    catalog_snapshot: str
    target_id: str  # the render target row (invocationId)

    @cached_property
    def action_key(self) -> str:
        return action_key(self.inputs)

    @property
    def subject_name(self) -> str:
        name = f"render:{self.application}/{self.cluster_profile}"
        return f"{name}/{self.inputs.selection}" if self.inputs.selection else name


def build_render_provenance(output_digest: str, provenance: RenderProvenance) -> Statement:
    """The in-toto statement whose subject is ``output_digest``."""
    require_hex_digest(provenance.catalog_snapshot, "catalog_snapshot")
    inputs = provenance.inputs
    dependencies = {
        "renderRequest": inputs.request_digest,
        "application": inputs.application_digest,
        "values": inputs.values_digest,
        "resolvedClusterProfile": inputs.cluster_profile_digest,
        "selection": inputs.selection_digest,
        "catalogSnapshot": provenance.catalog_snapshot,
    }
    predicate = {
        "buildDefinition": {
            "buildType": RENDER_BUILD_TYPE,
            "externalParameters": {
                "application": provenance.application,
                "clusterProfile": provenance.cluster_profile,
                "selection": inputs.selection,
                "catalogSnapshot": provenance.catalog_snapshot,
            },
            "internalParameters": {"actionKey": provenance.action_key, "coreVersion": inputs.core_version},
            "resolvedDependencies": [
                {"name": name, "digest": {"sha256": digest}} for name, digest in dependencies.items()
            ],
        },
        "runDetails": {"builder": {"id": BUILDER_ID}, "metadata": {"invocationId": provenance.target_id}},
    }
    subject = Subject(name=provenance.subject_name, sha256=output_digest)
    # Every other leaf is a constant or a digest checked above: when these are strings, the
    # predicate needs no walk (the walk names the path of anything else).
    texts = (
        provenance.application,
        provenance.cluster_profile,
        inputs.selection,
        provenance.target_id,
        inputs.core_version,
    )
    plain = all(type(text) is str for text in texts)
    return build_statement([subject], PROVENANCE_PREDICATE_TYPE, predicate, check_predicate=not plain)


def parse_render_provenance(statement: Statement) -> RenderProvenance:
    """Decode a render provenance predicate strictly and check that its action key is recomputable."""
    if statement.predicate_type != PROVENANCE_PREDICATE_TYPE:
        raise EvidenceError(
            "statement.predicate_type",
            f"expected predicateType {PROVENANCE_PREDICATE_TYPE!r}, got {statement.predicate_type!r}",
        )
    predicate = require_exact_keys(statement.predicate, {"buildDefinition", "runDetails"}, _CODE, "predicate")
    build = require_exact_keys(
        predicate["buildDefinition"],
        {"buildType", "externalParameters", "internalParameters", "resolvedDependencies"},
        _CODE,
        "predicate.buildDefinition",
    )
    if build["buildType"] != RENDER_BUILD_TYPE:
        raise EvidenceError(_CODE, f"predicate.buildDefinition.buildType: expected {RENDER_BUILD_TYPE!r}")
    external = require_exact_keys(
        build["externalParameters"],
        {"application", "clusterProfile", "selection", "catalogSnapshot"},
        _CODE,
        "predicate.buildDefinition.externalParameters",
    )
    internal = require_exact_keys(
        build["internalParameters"],
        {"actionKey", "coreVersion"},
        _CODE,
        "predicate.buildDefinition.internalParameters",
    )
    dependencies = _parse_dependencies(build["resolvedDependencies"])
    job_id = parse_run_details(predicate["runDetails"])
    provenance = _assemble(external, internal, dependencies, job_id)
    if provenance.action_key != internal["actionKey"]:
        raise EvidenceError(
            "provenance.action_key_mismatch",
            f"predicate actionKey {internal['actionKey']!r} is not the action key of its own inputs "
            f"({provenance.action_key})",
        )
    return provenance


def _parse_dependencies(raw: Any) -> dict[str, str]:
    what = "predicate.buildDefinition.resolvedDependencies"
    if not isinstance(raw, list):
        raise EvidenceError(_CODE, f"{what} must be a list")
    result: dict[str, str] = {}
    for index, item in enumerate(raw):
        entry = require_exact_keys(item, {"name", "digest"}, _CODE, f"{what}[{index}]")
        digest = require_exact_keys(entry["digest"], {"sha256"}, _CODE, f"{what}[{index}].digest")
        if not isinstance(entry["name"], str) or not is_hex_digest(digest["sha256"]):
            raise EvidenceError(_CODE, f"{what}[{index}]: needs a string name and a lowercase sha256 digest")
        if entry["name"] in result:
            raise EvidenceError(_CODE, f"{what}: {entry['name']!r} listed twice")
        result[entry["name"]] = digest["sha256"]
    expected = {
        "renderRequest",
        "application",
        "values",
        "resolvedClusterProfile",
        "selection",
        "catalogSnapshot",
    }
    if set(result) != expected:
        raise EvidenceError(_CODE, f"{what}: expected exactly {sorted(expected)}, got {sorted(result)}")
    return result


def parse_run_details(raw: Any) -> str:
    """The invocation id of a render predicate's ``runDetails`` (a single render's or a batch's),
    decoded strictly."""
    details = require_exact_keys(raw, {"builder", "metadata"}, _CODE, "predicate.runDetails")
    builder = require_exact_keys(details["builder"], {"id"}, _CODE, "predicate.runDetails.builder")
    if builder["id"] != BUILDER_ID:
        raise EvidenceError(_CODE, f"predicate.runDetails.builder.id: expected {BUILDER_ID!r}")
    metadata = require_exact_keys(
        details["metadata"], {"invocationId"}, _CODE, "predicate.runDetails.metadata"
    )
    if not isinstance(metadata["invocationId"], str):
        raise EvidenceError(_CODE, "predicate.runDetails.metadata.invocationId must be a string")
    return metadata["invocationId"]


def _assemble(
    external: dict[str, Any], internal: dict[str, Any], dependencies: dict[str, str], job_id: str
) -> RenderProvenance:
    for key in ("application", "clusterProfile", "selection"):
        if not isinstance(external[key], str):
            raise EvidenceError(_CODE, f"predicate externalParameters.{key} must be a string")
    if not isinstance(internal["coreVersion"], str) or not isinstance(internal["actionKey"], str):
        raise EvidenceError(_CODE, "predicate internalParameters: actionKey and coreVersion must be strings")
    if external["catalogSnapshot"] != dependencies["catalogSnapshot"]:
        raise EvidenceError(_CODE, "predicate: catalogSnapshot differs between parameters and dependencies")
    try:
        inputs = RenderInputs(
            core_version=internal["coreVersion"],
            request_digest=dependencies["renderRequest"],
            application_digest=dependencies["application"],
            values_digest=dependencies["values"],
            cluster_profile_digest=dependencies["resolvedClusterProfile"],
            selection=external["selection"],
        )
    except ValueError as error:
        raise EvidenceError(_CODE, f"predicate: {error}") from None
    if inputs.selection_digest != dependencies["selection"]:
        raise EvidenceError(_CODE, "predicate: the selection digest does not match the selection")
    return RenderProvenance(
        inputs=inputs,
        application=external["application"],
        cluster_profile=external["clusterProfile"],
        catalog_snapshot=external["catalogSnapshot"],
        target_id=job_id,
    )
