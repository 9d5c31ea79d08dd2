"""The signed qualification statement: its two forms, strict decoding and verification."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from farm.evidence.dsse import parse_envelope, sign_envelope
from farm.evidence.errors import EvidenceError
from farm.evidence.keys import Signer, TrustedSigners, public_key_pem, signer_from_private_key
from farm.evidence.qualification import (
    PROFILED_PREDICATE_TYPE,
    UNPROFILED_PREDICATE_TYPE,
    Qualification,
    TargetOutput,
    build_qualification_statement,
    parse_qualification_bytes,
    sign_qualification,
    verify_qualification_evidence,
)
from farm.evidence.statement import Statement, build_statement
from farm.identity.canonical import sha256_hex

ENVELOPE = sha256_hex(b"resolved envelope")
IDENTITY = sha256_hex(b"")


def _qualification(selection: str = "ingress-mode=gateway") -> Qualification:
    return Qualification(
        cluster="prod-eu",
        selection=selection,
        subject_digest=ENVELOPE,
        descriptor_identity=IDENTITY,
        run_id="run-1",
        outputs=(TargetOutput("web/prod-eu", sha256_hex(b"manifests")),),
    )


@pytest.fixture
def signer() -> Signer:
    return signer_from_private_key(Ed25519PrivateKey.generate())


@pytest.fixture
def trusted(signer: Signer, tmp_path) -> TrustedSigners:
    from farm.evidence.keys import load_trusted_signers

    path = tmp_path / "trusted.pem"
    path.write_text(public_key_pem(signer.public_key))
    return load_trusted_signers(path)


def test_profiled_and_unprofiled_statements_have_their_own_predicate_types() -> None:
    assert build_qualification_statement(_qualification()).predicate_type == PROFILED_PREDICATE_TYPE
    unprofiled = build_qualification_statement(_qualification(""))
    assert unprofiled.predicate_type == UNPROFILED_PREDICATE_TYPE
    assert "profile" not in unprofiled.predicate


def test_a_statement_records_subject_digest_identity_run_and_every_output() -> None:
    statement = build_qualification_statement(_qualification())
    assert [s.sha256 for s in statement.subjects] == [ENVELOPE]
    assert statement.subjects[0].name == "target:prod-eu/profile=ingress-mode/value=gateway"
    assert statement.predicate["descriptorIdentity"] == IDENTITY
    assert statement.predicate["run"] == {"id": "run-1"}
    assert statement.predicate["outputs"] == [
        {"target": "web/prod-eu", "outputDigest": sha256_hex(b"manifests")}
    ]


def test_a_signed_statement_round_trips_and_verifies(signer: Signer, trusted: TrustedSigners) -> None:
    envelope = sign_qualification(signer, _qualification())
    assert envelope == sign_qualification(signer, _qualification())
    parsed, failures = verify_qualification_evidence(
        envelope, trusted, target="q", expected_subject_digest=ENVELOPE, expect_profiled=True
    )
    assert failures == []
    assert parsed == _qualification()


def test_a_tampered_statement_fails_verification(signer: Signer, trusted: TrustedSigners) -> None:
    envelope = json.loads(sign_qualification(signer, _qualification()))
    payload = json.loads(base64.b64decode(envelope["payload"]))
    payload["predicate"]["outputs"][0]["outputDigest"] = sha256_hex(b"other manifests")
    envelope["payload"] = base64.b64encode(json.dumps(payload).encode()).decode()
    _, failures = verify_qualification_evidence(json.dumps(envelope).encode(), trusted, target="q")
    assert [f.code for f in failures] == ["signature.invalid"]


def test_an_untrusted_signer_is_reported(signer: Signer, trusted: TrustedSigners) -> None:
    other = signer_from_private_key(Ed25519PrivateKey.generate())
    _, failures = verify_qualification_evidence(
        sign_qualification(other, _qualification()), trusted, target="q"
    )
    assert [f.code for f in failures] == ["signature.untrusted"]


def test_a_statement_about_another_envelope_is_refused(signer: Signer, trusted: TrustedSigners) -> None:
    _, failures = verify_qualification_evidence(
        sign_qualification(signer, _qualification()),
        trusted,
        target="q",
        expected_subject_digest=sha256_hex(b"another envelope"),
    )
    assert [f.code for f in failures] == ["statement.subject_mismatch"]


def test_a_profiled_statement_for_an_unprofiled_subject_is_refused(
    signer: Signer, trusted: TrustedSigners
) -> None:
    _, failures = verify_qualification_evidence(
        sign_qualification(signer, _qualification()), trusted, target="q", expect_profiled=False
    )
    assert [f.code for f in failures] == ["qualification.predicate_type"]


def test_an_unprofiled_statement_for_a_profiled_subject_is_refused(
    signer: Signer, trusted: TrustedSigners
) -> None:
    _, failures = verify_qualification_evidence(
        sign_qualification(signer, _qualification("")), trusted, target="q", expect_profiled=True
    )
    assert [f.code for f in failures] == ["qualification.predicate_type"]


def _retyped(predicate_type: str, *, drop_profile: bool = False, add_profile: bool = False) -> Statement:
    base = build_qualification_statement(_qualification("" if add_profile else "ingress-mode=gateway"))
    predicate = dict(base.predicate)
    if drop_profile:
        predicate.pop("profile")
    if add_profile:
        predicate["profile"] = {"selection": "ingress-mode=gateway"}
    return build_statement(list(base.subjects), predicate_type, predicate)


@pytest.mark.parametrize(
    "statement",
    [
        _retyped("https://slsa.dev/provenance/v1"),
        _retyped(PROFILED_PREDICATE_TYPE, drop_profile=True),
        _retyped(UNPROFILED_PREDICATE_TYPE, add_profile=True),
    ],
    ids=["wrong-type", "profiled-type-without-profile", "unprofiled-type-with-profile"],
)
def test_a_wrong_or_incoherent_predicate_type_is_refused(statement: Statement) -> None:
    with pytest.raises(EvidenceError) as error:
        parse_qualification_bytes(statement.to_bytes())
    assert error.value.code == "qualification.predicate_type"


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("descriptorIdentity", "", "descriptorIdentity"),
        ("run", {"id": "r", "extra": 1}, "unknown field"),
        ("outputs", [], "at least one target output"),
        ("profile", {"selection": "a=b=c"}, "selection"),
        ("unknown", 1, "unknown field"),
    ],
)
def test_a_malformed_predicate_is_refused_naming_the_field(field: str, value: object, named: str) -> None:
    statement = build_qualification_statement(_qualification())
    predicate = {**statement.predicate, field: value}
    with pytest.raises(EvidenceError) as error:
        parse_qualification_bytes(
            build_statement(list(statement.subjects), statement.predicate_type, predicate).to_bytes()
        )
    assert error.value.code == "qualification.malformed"
    assert named in error.value.message


def test_a_statement_whose_subject_name_disagrees_with_its_selection_is_refused(signer: Signer) -> None:
    statement = build_qualification_statement(_qualification())
    predicate = {**statement.predicate, "profile": {"selection": "ingress-mode=nginx"}}
    forged = build_statement(list(statement.subjects), statement.predicate_type, predicate)
    with pytest.raises(EvidenceError) as error:
        parse_qualification_bytes(forged.to_bytes())
    assert error.value.code == "qualification.identity_mismatch"


def test_a_statement_with_no_outputs_cannot_be_built() -> None:
    bad = Qualification("prod-eu", "", ENVELOPE, IDENTITY, "run-1", ())
    with pytest.raises(EvidenceError, match="at least one target output"):
        build_qualification_statement(bad)


def test_the_envelope_is_dsse_over_the_statement_bytes(signer: Signer) -> None:
    envelope = parse_envelope(sign_qualification(signer, _qualification()))
    assert envelope.payload == build_qualification_statement(_qualification()).to_bytes()
    assert sign_envelope(envelope.payload, signer).to_bytes() == sign_qualification(signer, _qualification())
