"""The signed qualification statement and the rule that decides whether evidence is current.

A qualification statement is an in-toto Statement v1 whose one subject is the digest of the
resolved ClusterProfile envelope of a subject (ClusterProfile, profile value) and whose predicate
records the descriptor identity, the run and every target output digest. The profiled and the
unprofiled forms have their own predicate types, and the profile block must appear exactly in
the profiled one: a mismatch in either direction is refused (``qualification.predicate_type``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from farm.evidence.dsse import sign_envelope
from farm.evidence.errors import EvidenceError, require_exact_keys
from farm.evidence.keys import Signer, TrustedSigners
from farm.evidence.statement import Statement, Subject, build_statement, parse_statement
from farm.evidence.verify import Failure, check_envelope, check_subject
from farm.identity.canonical import is_hex_digest

UNPROFILED_PREDICATE_TYPE = "https://farm.dev/qualification/v1"
PROFILED_PREDICATE_TYPE = "https://farm.dev/qualification-profiled/v1"
SCHEMA_VERSION = "1.0.0"
_CODE = "qualification.malformed"
_TYPE_CODE = "qualification.predicate_type"
_IDENTIFIER = re.compile(r"[A-Za-z0-9._-]+")


@dataclass(frozen=True)
class TargetOutput:
    """One target of the subject and the digest of its signed output."""

    target: str
    output_digest: str


@dataclass(frozen=True)
class Qualification:
    """What a qualification statement says."""

    cluster: str
    selection: str  # "name=value", or "" for an unprofiled subject
    subject_digest: str  # digest of the resolved ClusterProfile envelope
    descriptor_identity: str
    run_id: str
    outputs: tuple[TargetOutput, ...]

    @property
    def profiled(self) -> bool:
        return self.selection != ""

    @property
    def subject_name(self) -> str:
        if not self.profiled:
            return f"target:{self.cluster}"
        name, value = self.selection.split("=", 1)
        return f"target:{self.cluster}/profile={name}/value={value.lower()}"


def check_selection(selection: str) -> str:
    """``name=value`` with both sides in the identifier grammar; raises ``EvidenceError``."""
    parts = selection.split("=")
    if len(parts) != 2 or not all(_IDENTIFIER.fullmatch(part) for part in parts):
        raise EvidenceError(_CODE, f"predicate.profile.selection: {selection!r} is not name=value")
    return selection


def build_qualification_statement(qualification: Qualification) -> Statement:
    """The statement of ``qualification``; raises ``EvidenceError`` naming a bad field."""
    _check_qualification(qualification)
    predicate: dict[str, object] = {
        "schemaVersion": SCHEMA_VERSION,
        "clusterProfile": qualification.cluster,
        "descriptorIdentity": qualification.descriptor_identity,
        "run": {"id": qualification.run_id},
        "outputs": [{"target": o.target, "outputDigest": o.output_digest} for o in qualification.outputs],
    }
    predicate_type = UNPROFILED_PREDICATE_TYPE
    if qualification.profiled:
        predicate["profile"] = {"selection": qualification.selection}
        predicate_type = PROFILED_PREDICATE_TYPE
    subject = Subject(qualification.subject_name, qualification.subject_digest)
    return build_statement([subject], predicate_type, predicate)


def sign_qualification(signer: Signer, qualification: Qualification) -> bytes:
    """The DSSE envelope (bytes) over the qualification statement; deterministic."""
    return sign_envelope(build_qualification_statement(qualification).to_bytes(), signer).to_bytes()


def parse_qualification(statement: Statement, *, expect_profiled: bool | None = None) -> Qualification:
    """Decode a qualification predicate strictly.

    ``expect_profiled`` is what the subject's envelope says (a selectedProfile or none); a
    statement of the other form is refused.
    """
    if statement.predicate_type not in (UNPROFILED_PREDICATE_TYPE, PROFILED_PREDICATE_TYPE):
        raise EvidenceError(_TYPE_CODE, f"unknown predicateType {statement.predicate_type!r}")
    profiled = statement.predicate_type == PROFILED_PREDICATE_TYPE
    if "profile" in statement.predicate and not profiled:
        raise EvidenceError(
            _TYPE_CODE, f"a profile block on the unprofiled type {UNPROFILED_PREDICATE_TYPE!r}"
        )
    if "profile" not in statement.predicate and profiled:
        raise EvidenceError(_TYPE_CODE, f"no profile block on the profiled type {PROFILED_PREDICATE_TYPE!r}")
    if expect_profiled is not None and expect_profiled != profiled:
        want = "profiled" if expect_profiled else "unprofiled"
        raise EvidenceError(_TYPE_CODE, f"the subject is {want} but the statement is not")
    keys = {"schemaVersion", "clusterProfile", "descriptorIdentity", "run", "outputs"} | (
        {"profile"} if profiled else set()
    )
    predicate = require_exact_keys(statement.predicate, keys, _CODE, "predicate")
    if predicate["schemaVersion"] != SCHEMA_VERSION:
        raise EvidenceError(_CODE, f"predicate.schemaVersion: expected {SCHEMA_VERSION!r}")
    selection = ""
    if profiled:
        profile = require_exact_keys(predicate["profile"], {"selection"}, _CODE, "predicate.profile")
        selection = profile["selection"] if isinstance(profile["selection"], str) else ""
        check_selection(selection)
    run = require_exact_keys(predicate["run"], {"id"}, _CODE, "predicate.run")
    if not isinstance(predicate["outputs"], list):
        raise EvidenceError(_CODE, "predicate.outputs: expected a list")
    outputs = tuple(_parse_output(item, index) for index, item in enumerate(predicate["outputs"]))
    if len(statement.subjects) != 1:
        raise EvidenceError(_CODE, "statement: exactly one subject is required")
    qualification = Qualification(
        cluster=predicate["clusterProfile"],
        selection=selection,
        subject_digest=statement.subjects[0].sha256,
        descriptor_identity=predicate["descriptorIdentity"],
        run_id=run["id"],
        outputs=outputs,
    )
    _check_qualification(qualification)
    if statement.subjects[0].name != qualification.subject_name:
        raise EvidenceError(
            "qualification.identity_mismatch",
            f"subject name {statement.subjects[0].name!r} is not {qualification.subject_name!r}",
        )
    return qualification


def parse_qualification_bytes(payload: bytes, *, expect_profiled: bool | None = None) -> Qualification:
    return parse_qualification(parse_statement(payload), expect_profiled=expect_profiled)


def _parse_output(item: object, index: int) -> TargetOutput:
    obj = require_exact_keys(item, {"target", "outputDigest"}, _CODE, f"predicate.outputs[{index}]")
    return TargetOutput(obj["target"], obj["outputDigest"])


def _check_qualification(q: Qualification) -> None:
    if not isinstance(q.cluster, str) or not q.cluster:
        raise EvidenceError(_CODE, "predicate.clusterProfile: must be a non-empty string")
    if q.profiled:
        check_selection(q.selection)
    if not is_hex_digest(q.subject_digest):
        raise EvidenceError(_CODE, "subject digest: must be 64 lowercase hex characters")
    if not is_hex_digest(q.descriptor_identity):
        raise EvidenceError(_CODE, "predicate.descriptorIdentity: must be 64 lowercase hex characters")
    if not isinstance(q.run_id, str) or not q.run_id:
        raise EvidenceError(_CODE, "predicate.run.id: must be a non-empty string")
    if not q.outputs:
        raise EvidenceError(_CODE, "predicate.outputs: at least one target output is required")
    for index, output in enumerate(q.outputs):
        if not isinstance(output.target, str) or not output.target:
            raise EvidenceError(_CODE, f"predicate.outputs[{index}].target: must be a non-empty string")
        if not is_hex_digest(output.output_digest):
            raise EvidenceError(_CODE, f"predicate.outputs[{index}].outputDigest: must be lowercase hex")


# --- currentness ---------------------------------------------------------------------------

DIGEST_DRIFT = "digest_drift"
IDENTITY_DRIFT = "identity_drift"
NOT_DECLARED = "selection_not_declared"


@dataclass(frozen=True)
class Currentness:
    current: bool
    reason: str = ""  # why the evidence is history, when it is


def currentness(
    evidence: Qualification,
    digests_today: Mapping[str, str],
    identity_today: str,
) -> Currentness:
    """Is ``evidence`` current against today's catalog?

    ``digests_today`` maps each selection of the evidence's ClusterProfile ("" when unprofiled) to
    today's resolved envelope digest. The evidence is compared with the digest of its own
    recorded selection, never with any other value's; profiled evidence also needs today's
    descriptor identity.
    """
    today = digests_today.get(evidence.selection)
    if today is None:
        return Currentness(False, NOT_DECLARED)
    if today != evidence.subject_digest:
        return Currentness(False, DIGEST_DRIFT)
    if evidence.profiled and evidence.descriptor_identity != identity_today:
        return Currentness(False, IDENTITY_DRIFT)
    return Currentness(True)


def verify_qualification_evidence(
    envelope_bytes: bytes,
    trusted: TrustedSigners,
    *,
    target: str,
    expected_subject_digest: str | None = None,
    expect_profiled: bool | None = None,
    expected_signer: str | None = None,
) -> tuple[Qualification | None, list[Failure]]:
    """Every check of one qualification envelope: signature, statement, predicate, subject, and
    (``expected_signer``, the signer its row names) that the row's signer is one whose trusted
    signature verifies (``qualification.record_mismatch``)."""
    check = check_envelope(envelope_bytes, trusted, target)
    failures = list(check.failures)
    if expected_signer is not None and check.trusted_keyids and expected_signer not in check.trusted_keyids:
        failures.append(
            Failure(
                "qualification.record_mismatch",
                target,
                f"the row's signer {expected_signer} is not the statement's"
                f" ({', '.join(check.trusted_keyids)})",
            )
        )
    if check.statement is None:
        return None, failures
    if expected_subject_digest is not None:
        failures += check_subject(check.statement, expected_subject_digest, target)
    try:
        qualification = parse_qualification(check.statement, expect_profiled=expect_profiled)
    except EvidenceError as error:
        return None, [*failures, Failure(error.code, target, error.message)]
    return qualification, failures
