"""Render provenance statements and action keys."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from conftest_store import make_inputs

from farm.core.request import RenderRequest, ValuesLayer
from farm.evidence.dsse import sign_envelope
from farm.evidence.errors import EvidenceError
from farm.evidence.keys import Signer, TrustedSigners
from farm.evidence.provenance import (
    PROVENANCE_PREDICATE_TYPE,
    RenderInputs,
    RenderProvenance,
    action_key,
    build_render_provenance,
    inputs_of,
    parse_render_provenance,
)
from farm.evidence.statement import parse_statement
from farm.evidence.verify import verify_render_evidence
from farm.identity.canonical import digest_of, sha256_hex
from farm.identity.keys import ACTION_KEY_VERSION, request_action_key, request_action_keys

SNAPSHOT = sha256_hex(b"snapshot")
OUTPUT = sha256_hex(b"manifests")


def test_the_action_keys_of_many_requests_are_the_digests_of_their_canonical_json() -> None:
    digests = [sha256_hex(bytes([n])) for n in range(3)] + ["not-a-hex-digest"]
    for version in ("1.2.3", 'a "quoted" \u00e9 version'):
        expected = [
            digest_of({"actionKeyVersion": ACTION_KEY_VERSION, "coreVersion": version, "request": digest})
            for digest in digests
        ]
        assert request_action_keys(version, digests) == expected
        assert [request_action_key(version, digest) for digest in digests] == expected


def _provenance(inputs: RenderInputs | None = None, job_id: str = "job-1") -> RenderProvenance:
    return RenderProvenance(inputs or make_inputs(selection="tier=gold"), "web", "prod", SNAPSHOT, job_id)


def test_action_key_is_the_core_version_and_the_request_digest() -> None:
    inputs = make_inputs()
    assert action_key(inputs) == action_key(make_inputs())
    variants = [
        dataclasses.replace(inputs, core_version="other"),
        dataclasses.replace(inputs, request_digest=sha256_hex(b"another request")),
    ]
    keys = {action_key(variant) for variant in variants}
    assert len(keys) == len(variants) and action_key(inputs) not in keys
    # the per-document digests are recorded for people; the request digest already covers them
    assert action_key(dataclasses.replace(inputs, values_digest=sha256_hex(b"v"))) == action_key(inputs)


REQUEST = RenderRequest(b"app: 1\n", b"cluster: 1\n", package=b"kurel: 1\n")


@pytest.mark.parametrize(
    "change",
    [
        {"app": b"app: 2\n"},
        {"cluster_profile": b"cluster: 2\n"},
        {"package": None},
        {"values": (ValuesLayer("values.yaml", b"replicas: 2\n"),)},
        {"values": (ValuesLayer("other.yaml", b""),)},
        {"sets": ("replicas=3",)},
        {"namespace": "shop"},
        {"selection": "ingress=gateway"},
        {"app_source": "web/app.yaml"},
        {"cluster_profile_source": "prod.yaml"},
        {"package_source": "web/kurel.yaml"},
    ],
    ids=lambda change: next(iter(change)),
)
def test_every_field_of_the_render_request_changes_the_action_key(change: dict) -> None:
    changed = dataclasses.replace(REQUEST, **change)
    assert request_action_key("core", changed.digest) != request_action_key("core", REQUEST.digest)
    assert inputs_of(changed, "core").request_digest == changed.digest


def test_job_and_snapshot_are_not_part_of_the_action_key() -> None:
    first = RenderProvenance(make_inputs(), "web", "prod", SNAPSHOT, "job-1")
    second = RenderProvenance(make_inputs(), "web", "prod", sha256_hex(b"other snapshot"), "job-2")
    assert first.action_key == second.action_key


def test_statement_records_subject_action_key_and_every_input() -> None:
    provenance = _provenance()
    statement = build_render_provenance(OUTPUT, provenance).to_json()
    assert statement["subject"] == [{"name": "render:web/prod/tier=gold", "digest": {"sha256": OUTPUT}}]
    assert statement["predicateType"] == PROVENANCE_PREDICATE_TYPE
    build = statement["predicate"]["buildDefinition"]
    assert build["internalParameters"] == {"actionKey": provenance.action_key, "coreVersion": "test-core-1"}
    dependencies = {d["name"]: d["digest"]["sha256"] for d in build["resolvedDependencies"]}
    inputs = provenance.inputs
    assert dependencies == {
        "renderRequest": inputs.request_digest,
        "application": inputs.application_digest,
        "values": inputs.values_digest,
        "resolvedClusterProfile": inputs.cluster_profile_digest,
        "selection": digest_of("tier=gold"),
        "catalogSnapshot": SNAPSHOT,
    }
    assert statement["predicate"]["runDetails"]["metadata"] == {"invocationId": "job-1"}


def test_statement_holds_no_timestamp_or_worker_name() -> None:
    text = build_render_provenance(OUTPUT, _provenance()).to_bytes().decode()
    assert not re.search(r"\d{4}-\d{2}-\d{2}", text)
    assert not re.search(r"(?i)time|date|worker|host|startedOn|attestedAt", text)


def test_same_render_gives_the_same_envelope_bytes(signer: Signer) -> None:
    first = sign_envelope(build_render_provenance(OUTPUT, _provenance()).to_bytes(), signer).to_bytes()
    second = sign_envelope(build_render_provenance(OUTPUT, _provenance()).to_bytes(), signer).to_bytes()
    assert first == second


def test_parse_round_trip() -> None:
    provenance = _provenance()
    assert parse_render_provenance(build_render_provenance(OUTPUT, provenance)) == provenance


def _tampered(mutate) -> bytes:  # type: ignore[no-untyped-def]
    document = build_render_provenance(OUTPUT, _provenance()).to_json()
    mutate(document["predicate"])
    return json.dumps(document).encode()


@pytest.mark.parametrize(
    ("mutate", "code"),
    [
        (
            lambda p: p["buildDefinition"]["internalParameters"].update({"actionKey": "0" * 64}),
            "provenance.action_key_mismatch",
        ),
        (
            lambda p: p["buildDefinition"]["internalParameters"].update({"coreVersion": "9"}),
            "provenance.action_key_mismatch",
        ),
        (
            lambda p: p["buildDefinition"]["externalParameters"].update({"selection": "tier=tin"}),
            "provenance.malformed",
        ),
        (lambda p: p["buildDefinition"].update({"extra": 1}), "provenance.malformed"),
        (lambda p: p["buildDefinition"]["resolvedDependencies"].pop(), "provenance.malformed"),
        (lambda p: p["runDetails"]["metadata"].update({"startedOn": "2026-01-01"}), "provenance.malformed"),
    ],
)
def test_incoherent_predicates_are_refused(mutate, code: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(EvidenceError) as caught:
        parse_render_provenance(parse_statement(_tampered(mutate)))
    assert caught.value.code == code


def test_wrong_predicate_type_is_named() -> None:
    document = build_render_provenance(OUTPUT, _provenance()).to_json()
    document["predicateType"] = "https://example.com/other"
    with pytest.raises(EvidenceError) as caught:
        parse_render_provenance(parse_statement(json.dumps(document).encode()))
    assert caught.value.code == "statement.predicate_type"


def test_verify_render_evidence_reports_subject_and_action_key(
    signer: Signer, trusted: TrustedSigners
) -> None:
    provenance = _provenance()
    envelope = sign_envelope(build_render_provenance(OUTPUT, provenance).to_bytes(), signer).to_bytes()
    assert (
        verify_render_evidence(
            OUTPUT, envelope, trusted, target="t", expected_action_key=provenance.action_key
        )[1]
        == []
    )
    _, failures = verify_render_evidence(
        sha256_hex(b"other"), envelope, trusted, target="t", expected_action_key="1" * 64
    )
    assert [f.code for f in failures] == ["statement.subject_mismatch", "provenance.action_key_mismatch"]


@pytest.mark.parametrize("field", ["application_digest", "values_digest", "cluster_profile_digest"])
def test_render_inputs_refuse_a_bad_digest_naming_the_field(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(make_inputs(), **{field: "not-a-digest"})


def test_render_inputs_refuse_an_empty_core_version() -> None:
    with pytest.raises(ValueError, match="core_version"):
        dataclasses.replace(make_inputs(), core_version="")


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"application": b"web"}, "$.buildDefinition.externalParameters.application"),
        ({"target_id": ("job", 1)}, "$.runDetails.metadata.invocationId"),
    ],
)
def test_a_provenance_with_a_value_that_is_not_text_is_refused_naming_its_path(
    change: dict, path: str
) -> None:
    provenance = dataclasses.replace(_provenance(), **change)
    with pytest.raises(ValueError, match=re.escape(path)):
        build_render_provenance(OUTPUT, provenance)


def test_the_application_digest_of_inputs_covers_app_package_sets_and_namespace() -> None:
    base = RenderRequest(app=b"app: 1\n", cluster_profile=b"cp: 1\n", sets=("a=1",), namespace="ns")
    variants = [
        dataclasses.replace(base, app=b"app: 2\n"),
        dataclasses.replace(base, package=b"pkg: 1\n"),
        dataclasses.replace(base, sets=("a=2",)),
        dataclasses.replace(base, namespace="other"),
    ]
    digests = {inputs_of(request, "1.0").application_digest for request in variants}
    assert len(digests) == len(variants)
    assert inputs_of(base, "1.0").application_digest not in digests
    same = dataclasses.replace(base, cluster_profile=b"cp: 2\n", values=(ValuesLayer("v.yaml", b"x: 1\n"),))
    assert inputs_of(same, "1.0").application_digest == inputs_of(base, "1.0").application_digest
