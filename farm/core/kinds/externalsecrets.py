"""Field tables of the External Secrets Operator's external-secrets.io/v1 specs (SecretStoreSpec,
ExternalSecretSpec, ClusterExternalSecretSpec), written from the Go struct tags of its apis/v1
package. A field is required where its tag has no omitempty and it has no optional marker.

Providers held: aws, azurekv, beyondtrust, delinea, fake, gcpsm, infisical (universal auth),
kubernetes, onepassword, onepasswordSDK, scaleway, secretserver, vault and webhook from the apis/v1
source; akeyless, alibaba, bitwardensecretsmanager, chef, cloudrusm, conjur, device42, doppler,
fortanix, github, gitlab, ibm, keepersecurity, onboardbase, oracle, passbolt, passworddepot, previder,
pulumi, senhasegura, yandexcertificatemanager and yandexlockbox (and vault's iam authentication) from
the published v1 OpenAPI schema, whose required fields and types they follow; whether a nested
optional struct is a pointer follows the Go source. Two fields newer than that schema follow the
seed: onepasswordSDK's environment (beside an optional vault) and the Yandex providers' fetching.
Providers newer than that schema (openBao, barbican, crd, nebius and others) are not held and their
keys are refused as unknown fields."""

from __future__ import annotations

from farm.core.kinds.engine import BOOL, DURATION, INT32, INT64, STRING, Api, F, Struct, list_of, map_of
from farm.core.kinds.meta import LABEL_SELECTOR

EXTERNAL_SECRETS = Api("external-secrets")

_STRINGS = list_of(STRING)
_LABELS = map_of(STRING)

# Structs whose `name` names what they refer to: an unauthored name is refused with its own wording.
SECRET_KEY_SELECTOR = Struct(
    "SecretKeySelector",
    [F("name", STRING, "omit"), F("namespace", STRING, "omit ptr"), F("key", STRING, "omit")],
)
SERVICE_ACCOUNT_SELECTOR = Struct(
    "ServiceAccountSelector",
    [F("name", STRING), F("namespace", STRING, "omit ptr"), F("audiences", _STRINGS, "omit")],
)
CA_PROVIDER = Struct(
    "CAProvider",
    [
        F("type", STRING, "req"),
        F("name", STRING),
        F("key", STRING, "omit"),
        F("namespace", STRING, "omit ptr"),
    ],
)
REFERENCE_STRUCTS = frozenset({"ServiceAccountSelector", "CAProvider"})

# Fields the API would default, which the type always writes: they must be authored.
WRITTEN_DEFAULTS = {
    ("VaultProvider", "version"): "v2",
    ("VaultCertAuth", "path"): "cert",
    ("CacheConfig", "ttl"): "5m",
}

_SECRET_REF = F("secretRef", SECRET_KEY_SELECTOR, "omit ptr")

# --- providers -----------------------------------------------------------------------------------------

AWS_PROVIDER = Struct(
    "AWSProvider",
    [
        F("service", STRING, "req"),
        F(
            "auth",
            Struct(
                "AWSAuth",
                [
                    F(
                        "secretRef",
                        Struct(
                            "AWSAuthSecretRef",
                            [
                                F("accessKeyIDSecretRef", SECRET_KEY_SELECTOR),
                                F("secretAccessKeySecretRef", SECRET_KEY_SELECTOR),
                                F("sessionTokenSecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
                            ],
                        ),
                        "omit ptr",
                    ),
                    F(
                        "jwt",
                        Struct("AWSJWTAuth", [F("serviceAccountRef", SERVICE_ACCOUNT_SELECTOR, "omit ptr")]),
                        "omit ptr",
                    ),
                ],
            ),
            "omit",
        ),
        F("role", STRING, "omit"),
        F("region", STRING, "req"),
        F("additionalRoles", _STRINGS, "omit"),
        F("externalID", STRING, "omit"),
        F(
            "sessionTags",
            list_of(Struct("Tag", [F("key", STRING, "req"), F("value", STRING, "req")])),
            "omit",
        ),
        F(
            "secretsManager",
            Struct(
                "SecretsManager",
                [F("forceDeleteWithoutRecovery", BOOL, "omit"), F("recoveryWindowInDays", INT64, "omit")],
            ),
            "omit ptr",
        ),
        F("transitiveTagKeys", _STRINGS, "omit"),
        F("prefix", STRING, "omit"),
    ],
)

VAULT_AUTH = Struct(
    "VaultAuth",
    [
        F("namespace", STRING, "omit ptr"),
        F("tokenSecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
        F(
            "appRole",
            Struct(
                "VaultAppRole",
                [
                    F("path", STRING, "req"),
                    F("roleId", STRING, "omit"),
                    F("roleRef", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("secretRef", SECRET_KEY_SELECTOR),
                ],
            ),
            "omit ptr",
        ),
        F(
            "kubernetes",
            Struct(
                "VaultKubernetesAuth",
                [
                    F("mountPath", STRING, "req"),
                    F("serviceAccountRef", SERVICE_ACCOUNT_SELECTOR, "omit ptr"),
                    _SECRET_REF,
                    F("role", STRING, "req"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "ldap",
            Struct(
                "VaultLdapAuth",
                [F("path", STRING, "req"), F("username", STRING, "req"), F("secretRef", SECRET_KEY_SELECTOR)],
            ),
            "omit ptr",
        ),
        F(
            "jwt",
            Struct(
                "VaultJwtAuth",
                [
                    F("path", STRING, "req"),
                    F("role", STRING, "omit"),
                    _SECRET_REF,
                    F(
                        "kubernetesServiceAccountToken",
                        Struct(
                            "VaultKubernetesServiceAccountTokenAuth",
                            [
                                F("serviceAccountRef", SERVICE_ACCOUNT_SELECTOR),
                                F("audiences", _STRINGS, "omit ptr"),
                                F("expirationSeconds", INT64, "omit ptr"),
                            ],
                        ),
                        "omit ptr",
                    ),
                ],
            ),
            "omit ptr",
        ),
        F(
            "cert",
            Struct(
                "VaultCertAuth",
                [
                    F("path", STRING),  # written unauthored: see WRITTEN_DEFAULTS
                    F("clientCert", SECRET_KEY_SELECTOR, "omit"),
                    F("secretRef", SECRET_KEY_SELECTOR, "omit"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "iam",
            Struct(
                "VaultIamAuth",
                [
                    F("path", STRING, "omit"),
                    F("region", STRING, "omit"),
                    F("role", STRING, "omit"),
                    F("vaultRole", STRING, "req"),
                    F("externalID", STRING, "omit"),
                    F("vaultAwsIamServerID", STRING, "omit"),
                    F(
                        "secretRef",
                        Struct(
                            "VaultAwsAuthSecretRef",
                            [
                                F("accessKeyIDSecretRef", SECRET_KEY_SELECTOR, "omit"),
                                F("secretAccessKeySecretRef", SECRET_KEY_SELECTOR, "omit"),
                                F("sessionTokenSecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
                            ],
                        ),
                        "omit ptr",
                    ),
                    F(
                        "jwt",
                        Struct(
                            "VaultAwsJWTAuth", [F("serviceAccountRef", SERVICE_ACCOUNT_SELECTOR, "omit ptr")]
                        ),
                        "omit ptr",
                    ),
                ],
            ),
            "omit ptr",
        ),
        F(
            "userPass",
            Struct(
                "VaultUserPassAuth",
                [F("path", STRING, "req"), F("username", STRING, "req"), F("secretRef", SECRET_KEY_SELECTOR)],
            ),
            "omit ptr",
        ),
    ],
)

VAULT_PROVIDER = Struct(
    "VaultProvider",
    [
        F("auth", VAULT_AUTH, "omit ptr"),
        F("server", STRING, "req"),
        F("path", STRING, "omit ptr"),
        F("version", STRING),  # written unauthored: see WRITTEN_DEFAULTS
        F("namespace", STRING, "omit ptr"),
        F("caBundle", STRING, "omit"),
        F(
            "tls",
            Struct(
                "VaultClientTLS",
                [
                    F("certSecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("keySecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
                ],
            ),
            "omit",
        ),
        F("caProvider", CA_PROVIDER, "omit ptr"),
        F("readYourWrites", BOOL, "omit"),
        F("forwardInconsistent", BOOL, "omit"),
        F("headers", _LABELS, "omit"),
        F("checkAndSet", Struct("VaultCheckAndSet", [F("required", BOOL, "omit")]), "omit ptr"),
    ],
)

KUBERNETES_PROVIDER = Struct(
    "KubernetesProvider",
    [
        F(
            "server",
            Struct(
                "KubernetesServer",
                [
                    F("url", STRING, "omit"),
                    F("caBundle", STRING, "omit"),
                    F("caProvider", CA_PROVIDER, "omit ptr"),
                ],
            ),
            "omit",
        ),
        F(
            "auth",
            Struct(
                "KubernetesAuth",
                [
                    F(
                        "cert",
                        Struct(
                            "CertAuth",
                            [
                                F("clientCert", SECRET_KEY_SELECTOR, "omit"),
                                F("clientKey", SECRET_KEY_SELECTOR, "omit"),
                            ],
                        ),
                        "omit ptr",
                    ),
                    F(
                        "token",
                        Struct("TokenAuth", [F("bearerToken", SECRET_KEY_SELECTOR, "omit")]),
                        "omit ptr",
                    ),
                    F("serviceAccount", SERVICE_ACCOUNT_SELECTOR, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F("authRef", SECRET_KEY_SELECTOR, "omit ptr"),
        F("remoteNamespace", STRING, "omit"),
    ],
)

WEBHOOK_PROVIDER = Struct(
    "WebhookProvider",
    [
        F("method", STRING, "omit"),
        F("url", STRING, "req"),
        F("headers", _LABELS, "omit"),
        F(
            "auth",
            Struct(
                "AuthorizationProtocol",
                [
                    F(
                        "ntlm",
                        Struct(
                            "NTLMProtocol",
                            [
                                F("usernameSecret", SECRET_KEY_SELECTOR),
                                F("passwordSecret", SECRET_KEY_SELECTOR),
                            ],
                        ),
                        "omit ptr",
                    )
                ],
            ),
            "omit ptr",
        ),
        F("body", STRING, "omit"),
        F("timeout", DURATION, "omit ptr"),
        F("result", Struct("WebhookResult", [F("jsonPath", STRING, "omit")]), "omit"),
        F(
            "secrets",
            list_of(Struct("WebhookSecret", [F("name", STRING, "req"), F("secretRef", SECRET_KEY_SELECTOR)])),
            "omit",
        ),
        F("caBundle", STRING, "omit"),
        F("caProvider", CA_PROVIDER, "omit ptr"),
    ],
)

FAKE_PROVIDER = Struct(
    "FakeProvider",
    [
        F(
            "data",
            list_of(
                Struct(
                    "FakeProviderData",
                    [F("key", STRING, "req"), F("value", STRING, "omit"), F("version", STRING, "omit")],
                )
            ),
            "req",
        ),
        F("validationResult", INT32, "omit ptr"),
    ],
)

GCPSM_PROVIDER = Struct(
    "GCPSMProvider",
    [
        F(
            "auth",
            Struct(
                "GCPSMAuth",
                [
                    F(
                        "secretRef",
                        Struct(
                            "GCPSMAuthSecretRef", [F("secretAccessKeySecretRef", SECRET_KEY_SELECTOR, "omit")]
                        ),
                        "omit ptr",
                    ),
                    F(
                        "workloadIdentity",
                        Struct(
                            "GCPWorkloadIdentity",
                            [
                                F("serviceAccountRef", SERVICE_ACCOUNT_SELECTOR),
                                F("clusterLocation", STRING, "omit"),
                                F("clusterName", STRING, "omit"),
                                F("clusterProjectID", STRING, "omit"),
                            ],
                        ),
                        "omit ptr",
                    ),
                ],
            ),
            "omit",
        ),
        F("projectID", STRING, "omit"),
        F("location", STRING, "omit"),
        F("secretVersionSelectionPolicy", STRING, "omit"),
    ],
)

AZURE_KV_PROVIDER = Struct(
    "AzureKVProvider",
    [
        F("authType", STRING, "omit ptr"),
        F("vaultUrl", STRING, "req"),
        F("tenantId", STRING, "omit ptr"),
        F("environmentType", STRING, "omit"),
        F(
            "authSecretRef",
            Struct(
                "AzureKVAuth",
                [
                    F("clientId", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("tenantId", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("clientSecret", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("clientCertificate", SECRET_KEY_SELECTOR, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F("serviceAccountRef", SERVICE_ACCOUNT_SELECTOR, "omit ptr"),
        F("identityId", STRING, "omit ptr"),
    ],
)


def _value_or_ref(name: str) -> Struct:
    """A union of a literal value and a reference to the Secret holding it."""
    return Struct(name, [F("value", STRING, "omit"), F("secretRef", SECRET_KEY_SELECTOR, "omit ptr")])


DELINEA_PROVIDER = Struct(
    "DelineaProvider",
    [
        F("clientId", _value_or_ref("DelineaProviderSecretRef"), "req"),
        F("clientSecret", _value_or_ref("DelineaProviderSecretRef"), "req"),
        F("tenant", STRING, "req"),
        F("urlTemplate", STRING, "omit"),
        F("tld", STRING, "omit"),
    ],
)

SCALEWAY_PROVIDER = Struct(
    "ScalewayProvider",
    [
        F("apiUrl", STRING, "omit"),
        F("region", STRING, "req"),
        F("projectId", STRING, "req"),
        F("accessKey", _value_or_ref("ScalewayProviderSecretRef"), "req"),
        F("secretKey", _value_or_ref("ScalewayProviderSecretRef"), "req"),
    ],
)

SECRET_SERVER_PROVIDER = Struct(
    "SecretServerProvider",
    [
        F("username", _value_or_ref("SecretServerProviderRef"), "req"),
        F("password", _value_or_ref("SecretServerProviderRef"), "req"),
        F("token", _value_or_ref("SecretServerProviderRef"), "omit ptr"),
        F("domain", STRING, "omit"),
        F("serverURL", STRING, "req"),
        F("caBundle", STRING, "omit"),
        F("caProvider", CA_PROVIDER, "omit ptr"),
    ],
)

_BEYONDTRUST_REF = _value_or_ref("BeyondTrustProviderSecretRef")

BEYONDTRUST_PROVIDER = Struct(
    "BeyondtrustProvider",
    [
        F(
            "auth",
            Struct(
                "BeyondtrustAuth",
                [
                    F("apiKey", _BEYONDTRUST_REF, "omit ptr"),
                    F("clientId", _BEYONDTRUST_REF, "omit ptr"),
                    F("clientSecret", _BEYONDTRUST_REF, "omit ptr"),
                    F("certificate", _BEYONDTRUST_REF, "omit ptr"),
                    F("certificateKey", _BEYONDTRUST_REF, "omit ptr"),
                ],
            ),
            "req",
        ),
        F(
            "server",
            Struct(
                "BeyondtrustServer",
                [
                    F("apiUrl", STRING, "req"),
                    F("apiVersion", STRING, "omit"),
                    F("retrievalType", STRING, "omit"),
                    F("separator", STRING, "omit"),
                    F("verifyCA", BOOL, "req"),
                    F("clientTimeOutSeconds", INT64, "omit"),
                    F("decrypt", BOOL, "omit", default="true"),
                ],
            ),
            "req",
        ),
    ],
)

INFISICAL_PROVIDER = Struct(
    "InfisicalProvider",
    [
        F(
            "auth",
            Struct(
                "InfisicalAuth",
                [
                    F(
                        "universalAuthCredentials",
                        Struct(
                            "UniversalAuthCredentials",
                            [F("clientId", SECRET_KEY_SELECTOR), F("clientSecret", SECRET_KEY_SELECTOR)],
                        ),
                        "omit ptr",
                    )
                ],
            ),
            "req",
        ),
        F(
            "secretsScope",
            Struct(
                "MachineIdentityScopeInWorkspace",
                [
                    F("secretsPath", STRING, "omit"),
                    F("recursive", BOOL, "omit"),
                    F("environmentSlug", STRING, "req"),
                    F("projectSlug", STRING, "req"),
                    F("expandSecretReferences", BOOL, "omit", default="true"),
                ],
            ),
            "req",
        ),
        F("hostAPI", STRING, "omit"),
    ],
)

ONEPASSWORD_PROVIDER = Struct(
    "OnePasswordProvider",
    [
        F(
            "auth",
            Struct(
                "OnePasswordAuth",
                [
                    F(
                        "secretRef",
                        Struct("OnePasswordAuthSecretRef", [F("connectTokenSecretRef", SECRET_KEY_SELECTOR)]),
                        "req",
                    )
                ],
            ),
            "req",
        ),
        F("connectHost", STRING, "req"),
        F("vaults", map_of(INT64), "req"),
    ],
)

ONEPASSWORD_SDK_PROVIDER = Struct(
    "OnePasswordSDKProvider",
    [
        # The seed: at most one of vault and environment, each omitted when unauthored.
        F("vault", STRING, "omit"),
        F("environment", STRING, "omit"),
        F(
            "integrationInfo",
            Struct("IntegrationInfo", [F("name", STRING, "omit"), F("version", STRING, "omit")]),
            "omit ptr",
        ),
        F(
            "auth",
            Struct("OnePasswordSDKAuth", [F("serviceAccountSecretRef", SECRET_KEY_SELECTOR)]),
            "req",
        ),
        F(
            "cache",
            Struct("CacheConfig", [F("ttl", DURATION), F("maxSize", INT64, "omit", default="100")]),
            "omit ptr",
        ),
    ],
)


# --- providers written from the published v1 schema (each Struct follows its Go struct tags) ------------

AKEYLESS_PROVIDER = Struct(
    "AkeylessProvider",
    [
        F("akeylessGWApiURL", STRING, "req"),
        F(
            "authSecretRef",
            Struct(
                "AkeylessAuth",
                [
                    F(
                        "secretRef",
                        Struct(
                            "AkeylessAuthSecretRef",
                            [
                                F("accessID", SECRET_KEY_SELECTOR, "omit"),
                                F("accessType", SECRET_KEY_SELECTOR, "omit"),
                                F("accessTypeParam", SECRET_KEY_SELECTOR, "omit"),
                            ],
                        ),
                        "omit",
                    ),
                    F(
                        "kubernetesAuth",
                        Struct(
                            "AkeylessKubernetesAuth",
                            [
                                F("accessID", STRING, "req"),
                                F("serviceAccountRef", SERVICE_ACCOUNT_SELECTOR, "omit ptr"),
                                F("secretRef", SECRET_KEY_SELECTOR, "omit"),
                                F("k8sConfName", STRING, "req"),
                            ],
                        ),
                        "omit ptr",
                    ),
                ],
            ),
            "req",
        ),
        F("caBundle", STRING, "omit"),
        F("caProvider", CA_PROVIDER, "omit ptr"),
    ],
)

_KEY_PAIR_FIELDS = [
    F("accessKeyIDSecretRef", SECRET_KEY_SELECTOR, "req"),
    F("accessKeySecretSecretRef", SECRET_KEY_SELECTOR, "req"),
]

ALIBABA_PROVIDER = Struct(
    "AlibabaProvider",
    [
        F(
            "auth",
            Struct(
                "AlibabaAuth",
                [
                    F("secretRef", Struct("AlibabaAuthSecretRef", _KEY_PAIR_FIELDS), "omit ptr"),
                    F(
                        "rrsa",
                        Struct(
                            "AlibabaRRSAAuth",
                            [
                                F("oidcProviderArn", STRING, "req"),
                                F("oidcTokenFilePath", STRING, "req"),
                                F("roleArn", STRING, "req"),
                                F("sessionName", STRING, "req"),
                            ],
                        ),
                        "omit ptr",
                    ),
                ],
            ),
            "req",
        ),
        F("regionID", STRING, "req"),
    ],
)

BITWARDEN_SECRETS_MANAGER_PROVIDER = Struct(
    "BitwardenSecretsManagerProvider",
    [
        F("apiURL", STRING, "omit"),
        F("identityURL", STRING, "omit"),
        F("bitwardenServerSDKURL", STRING, "omit"),
        F("caBundle", STRING, "omit"),
        F("caProvider", CA_PROVIDER, "omit ptr"),
        F("organizationID", STRING, "req"),
        F("projectID", STRING, "req"),
        F(
            "auth",
            Struct(
                "BitwardenSecretsManagerAuth",
                [
                    F(
                        "secretRef",
                        Struct(
                            "BitwardenSecretsManagerSecretRef", [F("credentials", SECRET_KEY_SELECTOR, "req")]
                        ),
                        "req",
                    )
                ],
            ),
            "req",
        ),
    ],
)


def _secret_ref_auth(name: str, ref: Struct, flags: str = "req") -> Struct:
    """An ``auth`` block whose one method is a ``secretRef`` struct."""
    return Struct(name, [F("secretRef", ref, flags)])


CHEF_PROVIDER = Struct(
    "ChefProvider",
    [
        F(
            "auth",
            _secret_ref_auth(
                "ChefAuth",
                Struct("ChefAuthSecretRef", [F("privateKeySecretRef", SECRET_KEY_SELECTOR, "req")]),
            ),
            "req",
        ),
        F("username", STRING, "req"),
        F("serverUrl", STRING, "req"),
    ],
)

CLOUDRU_SM_PROVIDER = Struct(
    "CloudruSMProvider",
    [
        F(
            "auth",
            _secret_ref_auth("CSMAuth", Struct("CSMAuthSecretRef", _KEY_PAIR_FIELDS), "omit ptr"),
            "req",
        ),
        F("projectID", STRING, "omit"),
    ],
)

CONJUR_PROVIDER = Struct(
    "ConjurProvider",
    [
        F("url", STRING, "req"),
        F("caBundle", STRING, "omit"),
        F("caProvider", CA_PROVIDER, "omit ptr"),
        F(
            "auth",
            Struct(
                "ConjurAuth",
                [
                    F(
                        "apikey",
                        Struct(
                            "ConjurAPIKey",
                            [
                                F("account", STRING, "req"),
                                F("userRef", SECRET_KEY_SELECTOR, "req"),
                                F("apiKeyRef", SECRET_KEY_SELECTOR, "req"),
                            ],
                        ),
                        "omit ptr",
                    ),
                    F(
                        "jwt",
                        Struct(
                            "ConjurJWT",
                            [
                                F("account", STRING, "req"),
                                F("serviceID", STRING, "req"),
                                F("hostId", STRING, "omit"),
                                _SECRET_REF,
                                F("serviceAccountRef", SERVICE_ACCOUNT_SELECTOR, "omit ptr"),
                            ],
                        ),
                        "omit ptr",
                    ),
                ],
            ),
            "req",
        ),
    ],
)

# A secretRef holding one `credentials` key (held by value: an unauthored one is written empty).
_CREDENTIALS_REF = [F("credentials", SECRET_KEY_SELECTOR, "omit")]

DEVICE42_PROVIDER = Struct(
    "Device42Provider",
    [
        F("host", STRING, "req"),
        F("auth", _secret_ref_auth("Device42Auth", Struct("Device42SecretRef", _CREDENTIALS_REF)), "req"),
    ],
)

DOPPLER_PROVIDER = Struct(
    "DopplerProvider",
    [
        F(
            "auth",
            _secret_ref_auth(
                "DopplerAuth", Struct("DopplerAuthSecretRef", [F("dopplerToken", SECRET_KEY_SELECTOR, "req")])
            ),
            "req",
        ),
        F("project", STRING, "omit"),
        F("config", STRING, "omit"),
        F("nameTransformer", STRING, "omit"),
        F("format", STRING, "omit"),
    ],
)

FORTANIX_PROVIDER = Struct(
    "FortanixProvider",
    [
        F("apiUrl", STRING, "omit"),
        F("apiKey", Struct("FortanixProviderSecretRef", [_SECRET_REF]), "omit ptr"),
    ],
)

GITHUB_PROVIDER = Struct(
    "GithubProvider",
    [
        F("url", STRING, "omit"),
        F("uploadURL", STRING, "omit"),
        F("auth", Struct("GithubAppAuth", [F("privateKey", SECRET_KEY_SELECTOR, "req")]), "req"),
        F("organization", STRING, "req"),
        F("repository", STRING, "omit"),
        F("environment", STRING, "omit"),
        F("appID", INT64, "req"),
        F("installationID", INT64, "req"),
    ],
)

GITLAB_PROVIDER = Struct(
    "GitlabProvider",
    [
        F("url", STRING, "omit"),
        F(
            "auth",
            # The Go tag spells this key with a capital S.
            Struct(
                "GitlabAuth",
                [
                    F(
                        "SecretRef",
                        Struct("GitlabSecretRef", [F("accessToken", SECRET_KEY_SELECTOR, "omit")]),
                        "req",
                    )
                ],
            ),
            "req",
        ),
        F("projectID", STRING, "omit"),
        F("inheritFromGroups", BOOL, "omit"),
        F("groupIDs", _STRINGS, "omit"),
        F("environment", STRING, "omit"),
    ],
)

IBM_PROVIDER = Struct(
    "IBMProvider",
    [
        F(
            "auth",
            Struct(
                "IBMAuth",
                [
                    F(
                        "secretRef",
                        Struct("IBMAuthSecretRef", [F("secretApiKeySecretRef", SECRET_KEY_SELECTOR, "omit")]),
                        "omit ptr",
                    ),
                    F(
                        "containerAuth",
                        Struct(
                            "IBMAuthContainerAuth",
                            [
                                F("profile", STRING, "req"),
                                F("tokenLocation", STRING, "omit"),
                                F("iamEndpoint", STRING, "omit"),
                            ],
                        ),
                        "omit ptr",
                    ),
                ],
            ),
            "req",
        ),
        F("serviceUrl", STRING, "omit ptr"),
    ],
)

KEEPER_SECURITY_PROVIDER = Struct(
    "KeeperSecurityProvider",
    [F("authRef", SECRET_KEY_SELECTOR, "req"), F("folderID", STRING, "req")],
)

ONBOARDBASE_PROVIDER = Struct(
    "OnboardbaseProvider",
    [
        F("apiHost", STRING, "req"),
        F(
            "auth",
            Struct(
                "OnboardbaseAuthSecretRef",
                [F("apiKeyRef", SECRET_KEY_SELECTOR, "req"), F("passcodeRef", SECRET_KEY_SELECTOR, "req")],
            ),
            "req",
        ),
        F("environment", STRING, "req"),
        F("project", STRING, "req"),
    ],
)

ORACLE_PROVIDER = Struct(
    "OracleProvider",
    [
        F("region", STRING, "req"),
        F("vault", STRING, "req"),
        F("compartment", STRING, "omit"),
        F("encryptionKey", STRING, "omit"),
        F("principalType", STRING, "omit"),
        F(
            "auth",
            Struct(
                "OracleAuth",
                [
                    F("tenancy", STRING, "req"),
                    F("user", STRING, "req"),
                    F(
                        "secretRef",
                        Struct(
                            "OracleSecretRef",
                            [
                                F("privatekey", SECRET_KEY_SELECTOR, "req"),
                                F("fingerprint", SECRET_KEY_SELECTOR, "req"),
                            ],
                        ),
                        "req",
                    ),
                ],
            ),
            "omit ptr",
        ),
        F("serviceAccountRef", SERVICE_ACCOUNT_SELECTOR, "omit ptr"),
    ],
)

PASSBOLT_PROVIDER = Struct(
    "PassboltProvider",
    [
        F(
            "auth",
            Struct(
                "PassboltAuth",
                [
                    F("passwordSecretRef", SECRET_KEY_SELECTOR, "req"),
                    F("privateKeySecretRef", SECRET_KEY_SELECTOR, "req"),
                ],
            ),
            "req",
        ),
        F("host", STRING, "req"),
    ],
)

PASSWORD_DEPOT_PROVIDER = Struct(
    "PasswordDepotProvider",
    [
        F("host", STRING, "req"),
        F("database", STRING, "req"),
        F(
            "auth",
            _secret_ref_auth("PasswordDepotAuth", Struct("PasswordDepotSecretRef", _CREDENTIALS_REF)),
            "req",
        ),
    ],
)

PREVIDER_PROVIDER = Struct(
    "PreviderProvider",
    [
        F("baseUri", STRING, "omit"),
        F(
            "auth",
            _secret_ref_auth(
                "PreviderAuth",
                Struct("PreviderAuthSecretRef", [F("accessToken", SECRET_KEY_SELECTOR, "req")]),
                "omit ptr",
            ),
            "req",
        ),
    ],
)

PULUMI_PROVIDER = Struct(
    "PulumiProvider",
    [
        F("apiUrl", STRING, "omit"),
        F("accessToken", Struct("PulumiProviderSecretRef", [_SECRET_REF]), "req"),
        F("organization", STRING, "req"),
        F("project", STRING, "req"),
        F("environment", STRING, "req"),
    ],
)

SENHASEGURA_PROVIDER = Struct(
    "SenhaseguraProvider",
    [
        F("url", STRING, "req"),
        F("module", STRING, "req"),
        F(
            "auth",
            Struct(
                "SenhaseguraAuth",
                [F("clientId", STRING, "req"), F("clientSecretSecretRef", SECRET_KEY_SELECTOR, "req")],
            ),
            "req",
        ),
        F("ignoreSslCertificate", BOOL, "omit"),
    ],
)


# How a Yandex provider reads a remote key: as an ID, or as a name in a folder (the seed names this
# exactly-one block; it is newer than the published schema).
_YANDEX_FETCHING = Struct(
    "FetchingPolicy",
    [
        F("byID", Struct("ByID", []), "omit ptr"),
        F("byName", Struct("ByName", [F("folderID", STRING, "req")]), "omit ptr"),
    ],
)


def _yandex_provider(prefix: str) -> Struct:
    """Yandex Certificate Manager and Lockbox share one shape under their own type names."""
    return Struct(
        f"{prefix}Provider",
        [
            F("apiEndpoint", STRING, "omit"),
            F(
                "auth",
                Struct(f"{prefix}Auth", [F("authorizedKeySecretRef", SECRET_KEY_SELECTOR, "omit")]),
                "req",
            ),
            F(
                "caProvider",
                Struct(f"{prefix}CAProvider", [F("certSecretRef", SECRET_KEY_SELECTOR, "omit")]),
                "omit ptr",
            ),
            F("fetching", _YANDEX_FETCHING, "omit ptr"),
        ],
    )


YANDEX_CERTIFICATE_MANAGER_PROVIDER = _yandex_provider("YandexCertificateManager")
YANDEX_LOCKBOX_PROVIDER = _yandex_provider("YandexLockbox")


SECRET_STORE_PROVIDER = Struct(
    "SecretStoreProvider",
    [
        F("akeyless", AKEYLESS_PROVIDER, "omit ptr"),
        F("alibaba", ALIBABA_PROVIDER, "omit ptr"),
        F("aws", AWS_PROVIDER, "omit ptr"),
        F("azurekv", AZURE_KV_PROVIDER, "omit ptr"),
        F("beyondtrust", BEYONDTRUST_PROVIDER, "omit ptr"),
        F("bitwardensecretsmanager", BITWARDEN_SECRETS_MANAGER_PROVIDER, "omit ptr"),
        F("chef", CHEF_PROVIDER, "omit ptr"),
        F("cloudrusm", CLOUDRU_SM_PROVIDER, "omit ptr"),
        F("conjur", CONJUR_PROVIDER, "omit ptr"),
        F("delinea", DELINEA_PROVIDER, "omit ptr"),
        F("device42", DEVICE42_PROVIDER, "omit ptr"),
        F("doppler", DOPPLER_PROVIDER, "omit ptr"),
        F("fake", FAKE_PROVIDER, "omit ptr"),
        F("fortanix", FORTANIX_PROVIDER, "omit ptr"),
        F("gcpsm", GCPSM_PROVIDER, "omit ptr"),
        F("github", GITHUB_PROVIDER, "omit ptr"),
        F("gitlab", GITLAB_PROVIDER, "omit ptr"),
        F("ibm", IBM_PROVIDER, "omit ptr"),
        F("infisical", INFISICAL_PROVIDER, "omit ptr"),
        F("keepersecurity", KEEPER_SECURITY_PROVIDER, "omit ptr"),
        F("kubernetes", KUBERNETES_PROVIDER, "omit ptr"),
        F("onboardbase", ONBOARDBASE_PROVIDER, "omit ptr"),
        F("onepassword", ONEPASSWORD_PROVIDER, "omit ptr"),
        F("onepasswordSDK", ONEPASSWORD_SDK_PROVIDER, "omit ptr"),
        F("oracle", ORACLE_PROVIDER, "omit ptr"),
        F("passbolt", PASSBOLT_PROVIDER, "omit ptr"),
        F("passworddepot", PASSWORD_DEPOT_PROVIDER, "omit ptr"),
        F("previder", PREVIDER_PROVIDER, "omit ptr"),
        F("pulumi", PULUMI_PROVIDER, "omit ptr"),
        F("scaleway", SCALEWAY_PROVIDER, "omit ptr"),
        F("secretserver", SECRET_SERVER_PROVIDER, "omit ptr"),
        F("senhasegura", SENHASEGURA_PROVIDER, "omit ptr"),
        F("vault", VAULT_PROVIDER, "omit ptr"),
        F("webhook", WEBHOOK_PROVIDER, "omit ptr"),
        F("yandexcertificatemanager", YANDEX_CERTIFICATE_MANAGER_PROVIDER, "omit ptr"),
        F("yandexlockbox", YANDEX_LOCKBOX_PROVIDER, "omit ptr"),
    ],
)

SECRET_STORE_SPEC = Struct(
    "SecretStoreSpec",
    [
        F("controller", STRING, "omit"),
        F("provider", SECRET_STORE_PROVIDER, "ptr req"),
        F(
            "retrySettings",
            Struct(
                "SecretStoreRetrySettings",
                [F("maxRetries", INT32, "omit ptr"), F("retryInterval", STRING, "omit ptr")],
            ),
            "omit ptr",
        ),
        F("refreshInterval", INT64, "omit"),
        F(
            "conditions",
            list_of(
                Struct(
                    "ClusterSecretStoreCondition",
                    [
                        F("namespaceSelector", LABEL_SELECTOR, "omit ptr"),
                        F("namespaces", _STRINGS, "omit"),
                        F("namespaceRegexes", _STRINGS, "omit"),
                    ],
                )
            ),
            "omit",
        ),
    ],
)

# --- ExternalSecret ------------------------------------------------------------------------------------

SECRET_STORE_REF = Struct("SecretStoreRef", [F("name", STRING, "omit"), F("kind", STRING, "omit")])

GENERATOR_REF = Struct(
    "GeneratorRef", [F("apiVersion", STRING, "omit"), F("kind", STRING, "req"), F("name", STRING, "req")]
)

REMOTE_REF = Struct(
    "ExternalSecretDataRemoteRef",
    [
        F("key", STRING, "req"),
        F("metadataPolicy", STRING, "omit"),
        F("property", STRING, "omit"),
        F("version", STRING, "omit"),
        F("conversionStrategy", STRING, "omit"),
        F("decodingStrategy", STRING, "omit"),
    ],
)

TEMPLATE_REF = Struct(
    "TemplateRef",
    [
        F("name", STRING, "req"),
        F(
            "items",
            list_of(Struct("TemplateRefItem", [F("key", STRING, "req"), F("templateAs", STRING, "omit")])),
            "req",
        ),
    ],
)

TEMPLATE = Struct(
    "ExternalSecretTemplate",
    [
        F("type", STRING, "omit"),
        F("engineVersion", STRING, "omit"),
        F(
            "metadata",
            Struct(
                "ExternalSecretTemplateMetadata",
                [
                    F("annotations", _LABELS, "omit"),
                    F("labels", _LABELS, "omit"),
                    F("finalizers", _STRINGS, "omit"),
                ],
            ),
            "omit",
        ),
        F("mergePolicy", STRING, "omit"),
        F("data", _LABELS, "omit"),
        F(
            "templateFrom",
            list_of(
                Struct(
                    "TemplateFrom",
                    [
                        F("configMap", TEMPLATE_REF, "omit ptr"),
                        F("secret", TEMPLATE_REF, "omit ptr"),
                        F("target", STRING, "omit"),
                        F("literal", STRING, "omit ptr"),
                    ],
                )
            ),
            "omit",
        ),
    ],
)

TARGET = Struct(
    "ExternalSecretTarget",
    [
        F("name", STRING, "omit"),
        F("creationPolicy", STRING, "omit"),
        F("deletionPolicy", STRING, "omit"),
        F("template", TEMPLATE, "omit ptr"),
        F(
            "manifest",
            Struct("ManifestReference", [F("apiVersion", STRING, "req"), F("kind", STRING, "req")]),
            "omit ptr",
        ),
        F("immutable", BOOL, "omit"),
    ],
)

EXTERNAL_SECRET_DATA = Struct(
    "ExternalSecretData",
    [
        F("secretKey", STRING, "req"),
        F("remoteRef", REMOTE_REF, "req"),
        F(
            "sourceRef",
            Struct(
                "StoreSourceRef",
                [F("storeRef", SECRET_STORE_REF, "omit"), F("generatorRef", GENERATOR_REF, "omit ptr")],
            ),
            "omit ptr",
        ),
    ],
)

DATA_FROM = Struct(
    "ExternalSecretDataFromRemoteRef",
    [
        F("extract", REMOTE_REF, "omit ptr"),
        F(
            "find",
            Struct(
                "ExternalSecretFind",
                [
                    F("path", STRING, "omit ptr"),
                    F("name", Struct("FindName", [F("regexp", STRING, "omit")]), "omit ptr"),
                    F("tags", _LABELS, "omit"),
                    F("conversionStrategy", STRING, "omit"),
                    F("decodingStrategy", STRING, "omit"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "rewrite",
            list_of(
                Struct(
                    "ExternalSecretRewrite",
                    [
                        F(
                            "regexp",
                            Struct(
                                "ExternalSecretRewriteRegexp",
                                [F("source", STRING, "req"), F("target", STRING, "req")],
                            ),
                            "omit ptr",
                        ),
                        F(
                            "transform",
                            Struct("ExternalSecretRewriteTransform", [F("template", STRING, "req")]),
                            "omit ptr",
                        ),
                    ],
                )
            ),
            "omit",
        ),
        F(
            "sourceRef",
            Struct(
                "StoreGeneratorSourceRef",
                [F("storeRef", SECRET_STORE_REF, "omit ptr"), F("generatorRef", GENERATOR_REF, "omit ptr")],
            ),
            "omit ptr",
        ),
    ],
)

SYNC_WINDOWS = Struct(
    "SyncWindows",
    [
        F("kind", STRING, "req"),
        F(
            "windows",
            list_of(Struct("SyncWindow", [F("schedule", STRING, "req"), F("duration", DURATION, "req")])),
            "req",
        ),
    ],
)

EXTERNAL_SECRET_SPEC = Struct(
    "ExternalSecretSpec",
    [
        F("secretStoreRef", SECRET_STORE_REF, "omit"),
        F("target", TARGET, "omit"),
        F("refreshPolicy", STRING, "omit"),
        F("refreshInterval", DURATION, "omit ptr"),
        F("syncWindows", SYNC_WINDOWS, "omit ptr"),
        F("data", list_of(EXTERNAL_SECRET_DATA), "omit"),
        F("dataFrom", list_of(DATA_FROM), "omit"),
    ],
)

CLUSTER_EXTERNAL_SECRET_SPEC = Struct(
    "ClusterExternalSecretSpec",
    [
        F("externalSecretSpec", EXTERNAL_SECRET_SPEC, "req"),
        F("externalSecretName", STRING, "omit"),
        F(
            "externalSecretMetadata",
            Struct(
                "ExternalSecretMetadata", [F("annotations", _LABELS, "omit"), F("labels", _LABELS, "omit")]
            ),
            "omit",
        ),
        F("namespaceSelector", LABEL_SELECTOR, "omit ptr"),
        F("namespaceSelectors", list_of(LABEL_SELECTOR), "omit"),
        F("namespaces", _STRINGS, "omit"),
        F("refreshTime", DURATION, "omit ptr"),
    ],
)
