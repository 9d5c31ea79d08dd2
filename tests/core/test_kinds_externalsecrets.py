"""External Secrets kind components: stores, externalsecret, clusterexternalsecret."""

from __future__ import annotations

import pytest

from farm.core.errors import PolicyRefusal
from farm.core.policy import REFUSAL_EXPLICIT_SECRET, REFUSAL_UNREADABLE_OBJECT, Policy

from .kindbuild import build, message, refusal

FORBID = Policy(explicit_secrets_allowed=False)
VAULT = {"server": "https://vault", "version": "v2", "auth": {"tokenSecretRef": {"name": "t", "key": "k"}}}


def test_store_requires_a_provider_and_exactly_one() -> None:
    assert (
        message("secretstore", {})
        == 'component "c": provider: required (the external-secrets API requires this field)'
    )
    assert message("secretstore", {"provider": {"aws": None}}) == (
        'component "c": provider: configures no provider; the API takes exactly one'
    )
    two = {"provider": {"vault": VAULT, "aws": {"service": "SecretsManager", "region": "eu"}}}
    assert message("clustersecretstore", two) == (
        'component "c": provider: configures 2 providers (aws, vault); the API takes exactly one'
    )


def test_store_required_paths_and_reference_names() -> None:
    assert message("secretstore", {"provider": {"vault": {"version": "v2"}}}) == (
        'component "c": provider.vault.server: required (the external-secrets API requires this field)'
    )
    assert message("secretstore", {"provider": {"vault": {"server": "s"}}}) == (
        'component "c": provider.vault.version: required (the object always carries this field, so the '
        "external-secrets API's default v2 never applies: write the value)"
    )
    ca = {**VAULT, "caProvider": {"type": "Secret"}}
    assert message("secretstore", {"provider": {"vault": ca}}) == (
        'component "c": provider.vault.caProvider.name: required (the external-secrets API requires the name '
        "of what this refers to)"
    )


def test_store_writes_unauthored_blocks_and_go_durations() -> None:
    spec = build(
        "secretstore",
        {"provider": {"aws": {"service": "SecretsManager", "region": "eu-west-1"}}, "refreshInterval": 0},
        namespace="shop",
    )
    assert spec["metadata"]["namespace"] == "shop"
    assert spec["spec"] == {
        "provider": {"aws": {"service": "SecretsManager", "region": "eu-west-1", "auth": {}}}
    }


def test_store_defaulted_zero_refused() -> None:
    infisical = {
        "auth": {},
        "secretsScope": {"environmentSlug": "prod", "projectSlug": "p", "expandSecretReferences": False},
    }
    assert message("secretstore", {"provider": {"infisical": infisical}}) == (
        'component "c": provider.infisical.secretsScope.expandSecretReferences: false cannot be carried by the '
        "external-secrets API types (the field is omitted when zero, so the API server would apply its default true)"
    )


def test_inline_credential_refused_under_a_forbidding_policy() -> None:
    delinea = {"clientId": {"value": "id"}, "clientSecret": {"value": "s3cret"}, "tenant": "t"}
    error = refusal("secretstore", {"provider": {"delinea": delinea}}, policy=FORBID)
    assert isinstance(error, PolicyRefusal) and error.refusal_class == REFUSAL_EXPLICIT_SECRET
    assert error.message == (
        'component "c": provider.delinea.clientSecret.value: holds the credential in the object, and the '
        "environment policy forbids explicit secrets; name the key of a Secret created out of band in "
        "provider.delinea.clientSecret.secretRef instead"
    )
    # an identifier is not refused; no policy builds the credential
    ok = {**delinea, "clientSecret": {"secretRef": {"name": "d", "key": "k"}}}
    assert build("secretstore", {"provider": {"delinea": ok}}, policy=FORBID)
    assert build("secretstore", {"provider": {"delinea": delinea}})["spec"]["provider"]["delinea"][
        "clientSecret"
    ] == {"value": "s3cret"}


def test_fake_provider_data_order() -> None:
    assert message("secretstore", {"provider": {"fake": {}}}, policy=FORBID) == (
        'component "c": provider.fake.data: required (the external-secrets API requires this field)'
    )
    error = refusal(
        "secretstore", {"provider": {"fake": {"data": [{"key": "a", "value": "b"}]}}}, policy=FORBID
    )
    assert isinstance(error, PolicyRefusal) and error.refusal_class == REFUSAL_EXPLICIT_SECRET
    assert build("secretstore", {"provider": {"fake": {"data": []}}}, policy=FORBID)["spec"]["provider"] == {
        "fake": {"data": []}
    }


def test_externalsecret_with_no_properties_builds_with_unauthored_blocks() -> None:
    assert build("externalsecret", None)["spec"] == {"secretStoreRef": {}, "target": {}}


def test_externalsecret_required_paths_and_durations() -> None:
    assert message("externalsecret", {"data": [{"secretKey": "a", "remoteRef": {}}]}) == (
        'component "c": data[0].remoteRef.key: required (the external-secrets API requires this field)'
    )
    spec = build(
        "externalsecret",
        {
            "refreshInterval": "1h",
            "syncWindows": {"kind": "Allow", "windows": [{"schedule": "0 * * * *", "duration": "90m"}]},
        },
    )["spec"]
    assert spec["refreshInterval"] == "1h0m0s"
    assert spec["syncWindows"]["windows"][0]["duration"] == "1h30m0s"


def test_generator_as_the_source_of_one_data_key() -> None:
    data = [
        {
            "secretKey": "a",
            "remoteRef": {"key": "k"},
            "sourceRef": {"generatorRef": {"kind": "Password", "name": "p"}},
        }
    ]
    assert message("externalsecret", {"data": data}) == (
        'component "c": data[0].sourceRef.generatorRef: cannot be carried: the API takes exactly one of storeRef '
        "and generatorRef here, and the object always carries a storeRef; read from a generator with "
        "dataFrom[].sourceRef.generatorRef"
    )


@pytest.mark.parametrize("api_version", ["/v1", "apps/", "Apps/v1", "apps/v1/x"])
def test_manifest_api_version_must_be_one(api_version: str) -> None:
    props = {"target": {"manifest": {"apiVersion": api_version, "kind": "ConfigMap"}}}
    error = refusal("externalsecret", props)
    assert not isinstance(error, PolicyRefusal)
    assert error.message == (
        f'component "c": target.manifest.apiVersion: "{api_version}" is no API version: want a version (v1) '
        "or a group and a version (apps/v1)"
    )


def test_manifest_kinds_the_policy_reads_are_refused_under_any_policy() -> None:
    spec = {"target": {"manifest": {"apiVersion": "apps/v1beta2", "kind": "Deployment"}}}
    error = refusal("clusterexternalsecret", {"externalSecretSpec": spec})
    assert isinstance(error, PolicyRefusal) and error.refusal_class == REFUSAL_UNREADABLE_OBJECT
    assert error.message == (
        'component "c": externalSecretSpec.target.manifest: the operator would write a Deployment, a kind the '
        "environment policy checks, and what the object would hold is not known at build, so it cannot be "
        "checked against environment policy"
    )
    secret = {"target": {"manifest": {"apiVersion": "v1", "kind": "Secret"}}}
    assert refusal("externalsecret", secret, policy=FORBID).refusal_class == REFUSAL_EXPLICIT_SECRET
    assert build("externalsecret", secret)["spec"]["target"]["manifest"] == {
        "apiVersion": "v1",
        "kind": "Secret",
    }
    config = {"target": {"manifest": {"apiVersion": "v1", "kind": "ConfigMap"}}}
    assert build("externalsecret", config, policy=FORBID)


def test_clusterexternalsecret_requires_its_spec_and_selector_keys() -> None:
    assert message("clusterexternalsecret", {"namespaces": ["a"]}) == (
        'component "c": externalSecretSpec: required (the external-secrets API requires this field)'
    )
    props = {"externalSecretSpec": {}, "namespaceSelectors": [{"matchExpressions": [{"key": "team"}]}]}
    assert message("clusterexternalsecret", props) == (
        'component "c": namespaceSelectors[0].matchExpressions[0].operator: required (the external-secrets API '
        "requires this field)"
    )
