"""Field-table audit of the External Secrets stores against the published external-secrets.io/v1
schema: the providers and the vault authentication that were missing decode, write what the Go
type writes, and keep their required fields and reference-name checks."""

from __future__ import annotations

import pytest

from .kindbuild import build, message

SECRET = {"name": "creds", "key": "k"}


def _provider(kind: str, body: dict) -> dict:
    return build("secretstore", {"provider": {kind: body}})["spec"]["provider"][kind]


def test_vault_iam_authentication_decodes() -> None:
    vault = {
        "server": "https://vault:8200",
        "version": "v2",
        "auth": {
            "iam": {
                "vaultRole": "reader",
                "region": "eu-west-1",
                "vaultAwsIamServerID": "vault.example",
                "secretRef": {"accessKeyIDSecretRef": SECRET, "sessionTokenSecretRef": SECRET},
                "jwt": {"serviceAccountRef": {"name": "sa"}},
            }
        },
    }
    assert _provider("vault", vault)["auth"]["iam"] == {
        "vaultRole": "reader",
        "region": "eu-west-1",
        "vaultAwsIamServerID": "vault.example",
        # the secret access key is held by value: written empty where not authored
        "secretRef": {
            "accessKeyIDSecretRef": SECRET,
            "secretAccessKeySecretRef": {},
            "sessionTokenSecretRef": SECRET,
        },
        "jwt": {"serviceAccountRef": {"name": "sa"}},
    }


def test_vault_iam_requires_its_vault_role() -> None:
    vault = {"server": "s", "version": "v2", "auth": {"iam": {"region": "eu"}}}
    assert message("secretstore", {"provider": {"vault": vault}}) == (
        'component "c": provider.vault.auth.iam.vaultRole: required (the external-secrets API requires this field)'
    )


def test_github_provider_ids_are_integers() -> None:
    github = {
        "appID": 123,
        "installationID": 456,
        "organization": "acme",
        "repository": "shop",
        "auth": {"privateKey": SECRET},
    }
    assert _provider("github", github) == github
    wrong = {**github, "appID": "123"}
    assert message("secretstore", {"provider": {"github": wrong}}) == (
        'component "c": provider.github.appID: must be an integer, got string'
    )


def test_gitlab_auth_key_keeps_its_capital_spelling() -> None:
    gitlab = {"projectID": "42", "groupIDs": ["7"], "auth": {"secretRef": {"accessToken": SECRET}}}
    assert _provider("gitlab", gitlab) == {
        "projectID": "42",
        "groupIDs": ["7"],
        "auth": {"SecretRef": {"accessToken": SECRET}},
    }


def test_conjur_jwt_and_akeyless_kubernetes_auth_decode() -> None:
    conjur = {
        "url": "https://conjur",
        "caProvider": {"type": "ConfigMap", "name": "ca", "key": "ca.crt"},
        "auth": {"jwt": {"account": "acme", "serviceID": "k8s", "serviceAccountRef": {"name": "sa"}}},
    }
    assert _provider("conjur", conjur) == conjur
    akeyless = {
        "akeylessGWApiURL": "https://gw",
        "authSecretRef": {"kubernetesAuth": {"accessID": "p-1", "k8sConfName": "conf"}},
    }
    assert _provider("akeyless", akeyless)["authSecretRef"] == {
        "secretRef": {"accessID": {}, "accessType": {}, "accessTypeParam": {}},
        "kubernetesAuth": {"accessID": "p-1", "k8sConfName": "conf", "secretRef": {}},
    }


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        (
            "alibaba",
            {
                "regionID": "cn",
                "auth": {
                    "rrsa": {
                        "oidcProviderArn": "a",
                        "oidcTokenFilePath": "/t",
                        "roleArn": "r",
                        "sessionName": "s",
                    }
                },
            },
        ),
        (
            "bitwardensecretsmanager",
            {"organizationID": "o", "projectID": "p", "auth": {"secretRef": {"credentials": SECRET}}},
        ),
        (
            "chef",
            {
                "username": "u",
                "serverUrl": "https://chef",
                "auth": {"secretRef": {"privateKeySecretRef": SECRET}},
            },
        ),
        ("doppler", {"project": "p", "config": "prd", "auth": {"secretRef": {"dopplerToken": SECRET}}}),
        ("fortanix", {"apiUrl": "https://sdkms", "apiKey": {"secretRef": SECRET}}),
        ("ibm", {"serviceUrl": "", "auth": {"containerAuth": {"profile": "p"}}}),
        ("keepersecurity", {"authRef": SECRET, "folderID": "f"}),
        (
            "onboardbase",
            {
                "apiHost": "h",
                "environment": "e",
                "project": "p",
                "auth": {"apiKeyRef": SECRET, "passcodeRef": SECRET},
            },
        ),
        (
            "oracle",
            {"region": "eu", "vault": "v", "principalType": "Workload", "serviceAccountRef": {"name": "sa"}},
        ),
        ("passbolt", {"host": "h", "auth": {"passwordSecretRef": SECRET, "privateKeySecretRef": SECRET}}),
        (
            "pulumi",
            {"organization": "o", "project": "p", "environment": "e", "accessToken": {"secretRef": SECRET}},
        ),
        (
            "senhasegura",
            {
                "url": "u",
                "module": "DSM",
                "ignoreSslCertificate": True,
                "auth": {"clientId": "c", "clientSecretSecretRef": SECRET},
            },
        ),
        (
            "yandexlockbox",
            {
                "apiEndpoint": "e",
                "auth": {"authorizedKeySecretRef": SECRET},
                "caProvider": {"certSecretRef": SECRET},
            },
        ),
    ],
)
def test_published_providers_round_trip(kind: str, body: dict) -> None:
    assert _provider(kind, body) == body


def test_by_value_credentials_are_written_empty() -> None:
    device42 = _provider("device42", {"host": "h", "auth": {"secretRef": {}}})
    assert device42 == {"host": "h", "auth": {"secretRef": {"credentials": {}}}}
    yandex = _provider("yandexcertificatemanager", {"auth": {}})
    assert yandex == {"auth": {"authorizedKeySecretRef": {}}}


def test_new_providers_keep_required_fields_and_reference_names() -> None:
    assert message("secretstore", {"provider": {"doppler": {"auth": {"secretRef": {}}}}}) == (
        'component "c": provider.doppler.auth.secretRef.dopplerToken: required (the external-secrets API requires '
        "this field)"
    )
    oracle = {"region": "eu", "vault": "v", "serviceAccountRef": {"namespace": "x"}}
    assert message("clustersecretstore", {"provider": {"oracle": oracle}}) == (
        'component "c": provider.oracle.serviceAccountRef.name: required (the external-secrets API requires the '
        "name of what this refers to)"
    )
    assert message(
        "secretstore",
        {
            "provider": {
                "passworddepot": {"host": "h", "database": "d", "auth": {"secretRef": {"user": SECRET}}}
            }
        },
    ) == ('component "c": unknown field "provider.passworddepot.auth.secretRef.user"')


def test_onepassword_sdk_takes_an_environment_instead_of_a_vault() -> None:
    sdk = {"environment": "env-1", "auth": {"serviceAccountSecretRef": SECRET}}
    assert _provider("onepasswordSDK", sdk) == sdk


def test_yandex_fetching_by_id_or_by_name() -> None:
    by_name = {"auth": {"authorizedKeySecretRef": SECRET}, "fetching": {"byName": {"folderID": "b1g"}}}
    assert _provider("yandexlockbox", by_name) == by_name
    by_id = {"auth": {"authorizedKeySecretRef": SECRET}, "fetching": {"byID": {}}}
    assert _provider("yandexcertificatemanager", by_id) == by_id
    assert message(
        "secretstore", {"provider": {"yandexlockbox": {**by_name, "fetching": {"byName": {}}}}}
    ) == (
        'component "c": provider.yandexlockbox.fetching.byName.folderID: required (the external-secrets API '
        "requires this field)"
    )
