"""The batch statement: one signed in-toto statement about every output a job rendered.

Its subjects are the batch's outputs in the job's order, one per rendered target: the subject's
name is the target (``render:APPLICATION/CLUSTER[/SELECTION]``, as in a single-output statement)
and its digest the output's sha256. The predicate (SLSA provenance v1, build type
``render-batch/v1``) says, for subject ``i``, in ``externalParameters.renders[i]``, everything a
single-output statement says about its one output: the target id, the cluster, the selection, the
action key and the digests of the render request, application, values and resolved ClusterProfile.
The application, the catalog snapshot and the core version are the batch's (a job renders one
application of one snapshot on one core); ``invocationId`` is the job id. No timestamp and no
worker name: the same batch signed by the same key gives the same envelope bytes.

Each output stays verifiable alone: a trusted signature over the envelope, the output's digest at
its subject's position, the subject naming its target, and its render entry recomputing its action
key (``parse_batch_provenance`` gives each subject's ``RenderProvenance``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from farm.evidence.errors import EvidenceError, require_exact_keys
from farm.evidence.provenance import (
    BUILDER_ID,
    PROVENANCE_PREDICATE_TYPE,
    RenderInputs,
    RenderProvenance,
    parse_render_provenance,
    parse_run_details,
)
from farm.evidence.statement import Statement, Subject, build_statement
from farm.identity.canonical import is_hex_digest, require_hex_digest, sha256_hex

RENDER_BATCH_BUILD_TYPE = "https://farm.gokure.dev/render-batch/v1"
_CODE = "provenance.malformed"
_DIGESTS = ("renderRequest", "application", "values", "resolvedClusterProfile")
_RENDER_KEYS = {"targetId", "clusterProfile", "selection", "actionKey", "digests"}


def subject_reference(envelope_digest: str, subject_index: int) -> str:
    """The key of the evidence record of subject ``subject_index`` of a batch envelope."""
    return sha256_hex(f"{envelope_digest}/{subject_index}".encode("ascii"))


def build_batch_provenance(invocation_id: str, renders: Sequence[tuple[str, RenderProvenance]]) -> Statement:
    """The statement whose subjects are the ``(output digest, provenance)`` of ``renders``, in order;
    ``ValueError`` when they are not of one application, catalog snapshot and core version."""
    if not renders:
        raise ValueError("batch statement: at least one output is required")
    first = renders[0][1]
    application, snapshot, core = first.application, first.catalog_snapshot, first.inputs.core_version
    require_hex_digest(snapshot, "catalog_snapshot")
    entries = []
    subjects = []
    texts = [invocation_id, application, core]
    for output_digest, provenance in renders:
        inputs = provenance.inputs
        if (provenance.application, provenance.catalog_snapshot, inputs.core_version) != (
            application,
            snapshot,
            core,
        ):
            raise ValueError(
                f"batch statement: target {provenance.target_id} is not of application {application!r},"
                f" snapshot {snapshot} and core {core!r}"
            )
        entries.append(
            {
                "targetId": provenance.target_id,
                "clusterProfile": provenance.cluster_profile,
                "selection": inputs.selection,
                "actionKey": provenance.action_key,
                "digests": {
                    "renderRequest": inputs.request_digest,
                    "application": inputs.application_digest,
                    "values": inputs.values_digest,
                    "resolvedClusterProfile": inputs.cluster_profile_digest,
                },
            }
        )
        texts += (provenance.target_id, provenance.cluster_profile, inputs.selection)
        subjects.append(Subject(provenance.subject_name, output_digest))
    predicate = {
        "buildDefinition": {
            "buildType": RENDER_BATCH_BUILD_TYPE,
            "externalParameters": {
                "application": application,
                "catalogSnapshot": snapshot,
                "renders": entries,
            },
            "internalParameters": {"coreVersion": core},
            "resolvedDependencies": [{"name": "catalogSnapshot", "digest": {"sha256": snapshot}}],
        },
        "runDetails": {"builder": {"id": BUILDER_ID}, "metadata": {"invocationId": invocation_id}},
    }
    # every other leaf is a constant or a digest RenderInputs checked: plain strings need no walk
    plain = all(type(text) is str for text in texts)
    return build_statement(subjects, PROVENANCE_PREDICATE_TYPE, predicate, check_predicate=not plain)


def is_batch_statement(statement: Statement) -> bool:
    build = statement.predicate.get("buildDefinition")
    return isinstance(build, dict) and build.get("buildType") == RENDER_BATCH_BUILD_TYPE


class BatchStatement:
    """A batch statement whose header is decoded strictly; each subject's render entry is decoded
    (strictly, its action key recomputed, its subject naming it) when first asked for, so checking
    one output of a batch decodes one entry, not the batch's."""

    def __init__(self, statement: Statement) -> None:
        if statement.predicate_type != PROVENANCE_PREDICATE_TYPE:
            raise EvidenceError(
                "statement.predicate_type",
                f"expected predicateType {PROVENANCE_PREDICATE_TYPE!r}, got {statement.predicate_type!r}",
            )
        predicate = require_exact_keys(
            statement.predicate, {"buildDefinition", "runDetails"}, _CODE, "predicate"
        )
        build = require_exact_keys(
            predicate["buildDefinition"],
            {"buildType", "externalParameters", "internalParameters", "resolvedDependencies"},
            _CODE,
            "predicate.buildDefinition",
        )
        if build["buildType"] != RENDER_BATCH_BUILD_TYPE:
            raise EvidenceError(
                _CODE, f"predicate.buildDefinition.buildType: expected {RENDER_BATCH_BUILD_TYPE!r}"
            )
        external = require_exact_keys(
            build["externalParameters"],
            {"application", "catalogSnapshot", "renders"},
            _CODE,
            "predicate.buildDefinition.externalParameters",
        )
        internal = require_exact_keys(
            build["internalParameters"],
            {"coreVersion"},
            _CODE,
            "predicate.buildDefinition.internalParameters",
        )
        application, snapshot, core = (
            external["application"],
            external["catalogSnapshot"],
            internal["coreVersion"],
        )
        if not isinstance(application, str) or not isinstance(core, str) or not is_hex_digest(snapshot):
            raise EvidenceError(
                _CODE, "predicate: application and coreVersion must be strings, catalogSnapshot a digest"
            )
        if build["resolvedDependencies"] != [{"name": "catalogSnapshot", "digest": {"sha256": snapshot}}]:
            raise EvidenceError(
                _CODE, "predicate.buildDefinition.resolvedDependencies: expected the catalog snapshot"
            )
        parse_run_details(predicate["runDetails"])
        renders = external["renders"]
        if not isinstance(renders, list) or len(renders) != len(statement.subjects):
            raise EvidenceError(_CODE, "predicate: renders must be a list with one entry per subject")
        self.subjects = statement.subjects
        self._renders: list[Any] = renders
        self._batch = (application, snapshot, core)
        self._parsed: dict[int, RenderProvenance] = {}

    def __len__(self) -> int:
        return len(self.subjects)

    def provenance(self, index: int) -> RenderProvenance:
        """What the statement says about subject ``index``; ``EvidenceError`` when its entry is not
        a coherent render of the subject it names."""
        found = self._parsed.get(index)
        if found is None:
            provenance = _parse_render(self._renders[index], index, *self._batch)
            name = self.subjects[index].name
            if name != provenance.subject_name:
                raise EvidenceError(
                    _CODE, f"subject[{index}] is named {name!r}, its render is {provenance.subject_name!r}"
                )
            found = self._parsed[index] = provenance
        return found


def parse_batch_provenance(statement: Statement) -> tuple[RenderProvenance, ...]:
    """Each subject's provenance, in the order of the subjects, decoded strictly: every render
    entry recomputes its action key and its subject names its target."""
    batch = BatchStatement(statement)
    return tuple(batch.provenance(index) for index in range(len(batch)))


def _parse_render(entry: Any, index: int, application: str, snapshot: str, core: str) -> RenderProvenance:
    what = f"predicate renders[{index}]"
    render = require_exact_keys(entry, _RENDER_KEYS, _CODE, what)
    digests = require_exact_keys(render["digests"], set(_DIGESTS), _CODE, f"{what}.digests")
    for key in ("targetId", "clusterProfile", "selection", "actionKey"):
        if not isinstance(render[key], str):
            raise EvidenceError(_CODE, f"{what}.{key} must be a string")
    try:
        inputs = RenderInputs(
            core_version=core,
            request_digest=digests["renderRequest"],
            application_digest=digests["application"],
            values_digest=digests["values"],
            cluster_profile_digest=digests["resolvedClusterProfile"],
            selection=render["selection"],
        )
    except (ValueError, TypeError) as error:
        raise EvidenceError(_CODE, f"{what}: {error}") from None
    provenance = RenderProvenance(
        inputs=inputs,
        application=application,
        cluster_profile=render["clusterProfile"],
        catalog_snapshot=snapshot,
        target_id=render["targetId"],
    )
    if provenance.action_key != render["actionKey"]:
        raise EvidenceError(
            "provenance.action_key_mismatch",
            f"{what}: actionKey {render['actionKey']!r} is not the action key of its own inputs"
            f" ({provenance.action_key})",
        )
    return provenance


def provenance_of_subject(statement: Statement, subject_index: int | None) -> RenderProvenance:
    """The provenance a statement states about one of its subjects: a single-output statement's
    own (``subject_index`` None or 0), or subject ``subject_index`` of a batch statement."""
    if not is_batch_statement(statement):
        return parse_render_provenance(statement)
    batch = BatchStatement(statement)
    if subject_index is None or not 0 <= subject_index < len(batch):
        raise EvidenceError(
            "statement.subject_mismatch", f"the batch statement has no subject {subject_index}"
        )
    return batch.provenance(subject_index)
