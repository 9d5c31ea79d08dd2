"""Evidence currentness, the descriptor identity, and the state derived from the records."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

from farm.evidence.qualification import Qualification, TargetOutput, currentness
from farm.identity.canonical import sha256_hex
from farm.qualification import states
from farm.qualification.descriptor import (
    cluster_profile_identity,
    descriptor_entries,
    descriptor_identity,
    identity_for,
)
from farm.qualification.states import EvidenceRecord, RunRecord, Today, derive_state

NGINX = sha256_hex(b"nginx envelope")
GATEWAY = sha256_hex(b"gateway envelope")
IDENTITY = descriptor_identity(["expose"])
NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
MAX_AGE = timedelta(days=30)
KEY = "key-1"


def _evidence(selection: str, digest: str, identity: str = IDENTITY) -> Qualification:
    return Qualification(
        "prod-eu", selection, digest, identity, "run-1", (TargetOutput("web/prod-eu", digest),)
    )


def _today(**changes: object) -> Today:
    fields: dict[str, object] = {
        "declared": True,
        "valid": True,
        "digests": {"ingress-mode=nginx": NGINX, "ingress-mode=gateway": GATEWAY},
        "identity": IDENTITY,
        "core_version": "1",
        "owned_paths_digest": "surface-1",
    }
    fields.update(changes)
    return Today(**fields)  # type: ignore[arg-type]


def _record(
    selection: str, digest: str, *, age: timedelta = timedelta(days=1), **changes: object
) -> EvidenceRecord:
    fields: dict[str, object] = {
        "qualification": _evidence(selection, digest, changes.pop("identity", IDENTITY)),  # type: ignore[arg-type]
        "attested_at": NOW - age,
        "signer_keyid": KEY,
        "core_version": "1",
        "owned_paths_digest": "surface-1",
    }
    fields.update(changes)
    return EvidenceRecord(**fields)  # type: ignore[arg-type]


def _derive(selection: str, today: Today, evidence=(), runs=()) -> states.Derived:
    return derive_state(selection, today, list(evidence), list(runs), frozenset({KEY}), NOW, MAX_AGE)


# --- currentness ---------------------------------------------------------------------------


def test_evidence_is_current_when_its_own_selection_resolves_to_its_digest() -> None:
    digests = {"ingress-mode=nginx": NGINX, "ingress-mode=gateway": GATEWAY}
    assert currentness(_evidence("ingress-mode=gateway", GATEWAY), digests, IDENTITY).current


def test_evidence_is_judged_against_its_own_selection_never_another_values() -> None:
    digests = {"ingress-mode=nginx": NGINX, "ingress-mode=gateway": GATEWAY}
    verdict = currentness(_evidence("ingress-mode=gateway", NGINX), digests, IDENTITY)
    assert (verdict.current, verdict.reason) == (False, "digest_drift")


def test_profiled_evidence_with_another_descriptor_identity_is_history() -> None:
    digests = {"ingress-mode=gateway": GATEWAY}
    verdict = currentness(_evidence("ingress-mode=gateway", GATEWAY, sha256_hex(b"x")), digests, IDENTITY)
    assert (verdict.current, verdict.reason) == (False, "identity_drift")


def test_unprofiled_evidence_needs_only_the_digest() -> None:
    verdict = currentness(_evidence("", NGINX, sha256_hex(b"old identity")), {"": NGINX}, IDENTITY)
    assert verdict.current


def test_evidence_for_a_value_no_longer_declared_is_history() -> None:
    verdict = currentness(_evidence("ingress-mode=gone", NGINX), {"ingress-mode=nginx": NGINX}, IDENTITY)
    assert (verdict.current, verdict.reason) == (False, "selection_not_declared")


# --- descriptor ----------------------------------------------------------------------------


def test_the_empty_descriptor_identity_is_sha256_of_nothing() -> None:
    assert descriptor_identity([]) == hashlib.sha256(b"").hexdigest()


def test_the_identity_covers_only_entries_touching_the_subjects_capabilities() -> None:
    descriptor = (("expose", "controllerType"), ("certificates", "issuerRef.kind"))
    assert descriptor_entries(["expose", "storage"], descriptor) == {"expose": ["controllerType"]}
    assert descriptor_entries(["expose.internal"], descriptor) == {"expose.internal": ["controllerType"]}
    assert (
        identity_for({"expose": ["controllerType"]}) == hashlib.sha256(b"expose:controllerType\n").hexdigest()
    )


def test_a_descriptor_expansion_changes_the_identity_only_where_it_touches() -> None:
    before = (("expose", "controllerType"),)
    after = (*before, ("certificates", "issuerRef.kind"))
    assert descriptor_identity(["expose"], before) == descriptor_identity(["expose"], after)
    assert descriptor_identity(["expose", "certificates"], before) != descriptor_identity(
        ["expose", "certificates"], after
    )


# --- states --------------------------------------------------------------------------------


CLUSTER_PROFILE_WITH_YAML_1_1_TRAPS = b"""apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata: {name: traps}
spec:
  capabilities:
    on:
      rendering: {mode: =}
    expose:
      rendering: {controllerType: ingress, ingressClassName: =}
"""


def test_the_descriptor_identity_reads_a_cluster_profile_with_the_farms_yaml_v3_loader() -> None:
    # PyYAML's safe_load takes `on` for True and refuses a plain `=` (its value tag); the core
    # reads both as strings, and so must the identity of what the core renders.
    identity = cluster_profile_identity(CLUSTER_PROFILE_WITH_YAML_1_1_TRAPS)
    assert identity == descriptor_identity(["on", "expose"])
    assert identity == identity_for({"expose": ["controllerType"]})
    assert identity != descriptor_identity([])


def test_a_cluster_profile_without_capabilities_has_the_empty_identity() -> None:
    document = (
        b"apiVersion: launcher.gokure.dev/v1alpha1\nkind: ClusterProfile\nmetadata: {name: bare}\nspec: {}\n"
    )
    assert cluster_profile_identity(document) == hashlib.sha256(b"").hexdigest()


def test_a_subject_with_no_evidence_and_no_run_is_unqualified() -> None:
    assert _derive("ingress-mode=nginx", _today()).state == "unqualified"


def test_a_first_run_in_flight_is_qualifying() -> None:
    assert _derive("ingress-mode=nginx", _today(), runs=[RunRecord(NGINX, "running")]).state == "qualifying"


def test_current_passing_evidence_is_qualified_and_names_the_evidence() -> None:
    derived = _derive(
        "ingress-mode=nginx", _today(), [_record("ingress-mode=nginx", NGINX)], [RunRecord(NGINX, "passed")]
    )
    assert (derived.state, derived.current_evidence) == ("qualified", 0)


def test_a_scheduled_rerun_of_a_qualified_subject_keeps_it_qualified() -> None:
    runs = [RunRecord(NGINX, "passed"), RunRecord(NGINX, "queued")]
    assert (
        _derive("ingress-mode=nginx", _today(), [_record("ingress-mode=nginx", NGINX)], runs).state
        == "qualified"
    )


def test_a_failed_run_for_todays_digest_is_failed() -> None:
    assert _derive("ingress-mode=nginx", _today(), runs=[RunRecord(NGINX, "failed")]).state == "failed"


def test_an_errored_run_is_not_a_verdict() -> None:
    assert _derive("ingress-mode=nginx", _today(), runs=[RunRecord(NGINX, "errored")]).state == "unqualified"


def test_evidence_older_than_the_maximum_age_is_expired() -> None:
    old = _record("ingress-mode=nginx", NGINX, age=MAX_AGE + timedelta(seconds=1))
    assert _derive("ingress-mode=nginx", _today(), [old]).state == "expired"


def test_a_changed_digest_makes_the_subject_stale_with_digest_drift() -> None:
    derived = _derive("ingress-mode=nginx", _today(), [_record("ingress-mode=nginx", sha256_hex(b"old"))])
    assert (derived.state, derived.reason) == ("stale", "digest_drift")


def test_a_changed_ownership_surface_is_named_as_the_reason() -> None:
    record = _record("ingress-mode=nginx", sha256_hex(b"old"), owned_paths_digest="surface-0")
    assert _derive("ingress-mode=nginx", _today(), [record]).reason == "ownership_change"


def test_a_changed_descriptor_identity_is_stale_with_identity_drift() -> None:
    record = _record("ingress-mode=nginx", NGINX, identity=sha256_hex(b"other"))
    assert _derive("ingress-mode=nginx", _today(), [record]).reason == "identity_drift"


def test_a_new_handler_core_is_stale_with_renderer_changed() -> None:
    record = _record("ingress-mode=nginx", NGINX, core_version="0")
    derived = _derive("ingress-mode=nginx", _today(), [record])
    assert (derived.state, derived.reason) == ("stale", "renderer_changed")


def test_evidence_by_an_untrusted_signer_is_stale_with_signer_untrusted() -> None:
    record = _record("ingress-mode=nginx", NGINX, signer_keyid="someone-else")
    assert _derive("ingress-mode=nginx", _today(), [record]).reason == "signer_untrusted"


def test_a_run_in_flight_from_stale_is_requalifying() -> None:
    record = _record("ingress-mode=nginx", sha256_hex(b"old"))
    assert (
        _derive("ingress-mode=nginx", _today(), [record], [RunRecord(NGINX, "running")]).state
        == "requalifying"
    )


def test_a_value_no_longer_declared_is_retired_and_a_broken_one_invalid() -> None:
    evidence = [_record("ingress-mode=nginx", NGINX)]
    assert _derive("ingress-mode=nginx", _today(declared=False), evidence).state == "retired"
    assert _derive("ingress-mode=nginx", _today(valid=False), evidence).state == "invalid"


def test_a_reverted_catalog_makes_old_evidence_current_again_without_a_run() -> None:
    evidence = [_record("ingress-mode=nginx", NGINX)]
    edited = _today(digests={"ingress-mode=nginx": sha256_hex(b"edited")})
    assert _derive("ingress-mode=nginx", edited, evidence).state == "stale"
    assert _derive("ingress-mode=nginx", _today(), evidence).state == "qualified"


def test_editing_one_values_digest_leaves_the_other_value_qualified() -> None:
    evidence = [_record("ingress-mode=nginx", NGINX), _record("ingress-mode=gateway", GATEWAY)]
    edited = _today(digests={"ingress-mode=nginx": NGINX, "ingress-mode=gateway": sha256_hex(b"edited")})
    assert _derive("ingress-mode=nginx", edited, evidence).state == "qualified"
    assert _derive("ingress-mode=gateway", edited, evidence).state == "stale"
