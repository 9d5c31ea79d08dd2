"""Field tables of cert-manager's cert-manager.io/v1 IssuerSpec and CertificateSpec, written from
the Go struct tags of its apis packages (omitempty, pointers) and the CRDs' required fields. The
Kubernetes types a solver pod embeds come from the core/v1 tables."""

from __future__ import annotations

from farm.core.kinds.corev1_pod import STRUCTS as CORE
from farm.core.kinds.engine import (
    BOOL,
    DURATION,
    INT32,
    INT64,
    QUANTITY,
    RAW,
    STRING,
    Api,
    F,
    Struct,
    list_of,
    map_of,
)

CERT_MANAGER = Api("cert-manager")

_STRINGS = list_of(STRING)
_LABELS = map_of(STRING)

LOCAL_OBJECT_REFERENCE = Struct("LocalObjectReference", [F("name", STRING, "req")])
SECRET_KEY_SELECTOR = Struct("SecretKeySelector", [F("name", STRING, "req"), F("key", STRING, "omit")])
SERVICE_ACCOUNT_REF = Struct(
    "ServiceAccountRef", [F("name", STRING, "req"), F("audiences", _STRINGS, "omit")]
)

# --- ACME HTTP01 solver ------------------------------------------------------------------------------

POD_OBJECT_META = Struct(
    "ACMEChallengeSolverHTTP01IngressPodObjectMeta",
    [F("annotations", _LABELS, "omit"), F("labels", _LABELS, "omit")],
)

POD_SECURITY_CONTEXT = Struct(
    "ACMEChallengeSolverHTTP01IngressPodSecurityContext",
    [
        F("seLinuxOptions", CORE["SELinuxOptions"], "omit ptr"),
        F("runAsUser", INT64, "omit ptr"),
        F("runAsGroup", INT64, "omit ptr"),
        F("runAsNonRoot", BOOL, "omit ptr"),
        F("supplementalGroups", list_of(INT64), "omit"),
        F("fsGroup", INT64, "omit ptr"),
        F("sysctls", list_of(CORE["Sysctl"]), "omit"),
        F("fsGroupChangePolicy", STRING, "omit ptr"),
        F("seccompProfile", CORE["SeccompProfile"], "omit ptr"),
    ],
)

POD_RESOURCES = Struct(
    "ACMEChallengeSolverHTTP01IngressPodResources",
    [F("limits", map_of(QUANTITY), "omit"), F("requests", map_of(QUANTITY), "omit")],
)

POD_SPEC = Struct(
    "ACMEChallengeSolverHTTP01IngressPodSpec",
    [
        F("nodeSelector", _LABELS, "omit"),
        F("affinity", CORE["Affinity"], "omit ptr"),
        F("tolerations", list_of(CORE["Toleration"]), "omit"),
        F("priorityClassName", STRING, "omit"),
        F("serviceAccountName", STRING, "omit"),
        F("imagePullSecrets", list_of(CORE["LocalObjectReference"]), "omit"),
        F("securityContext", POD_SECURITY_CONTEXT, "omit ptr"),
        F("resources", POD_RESOURCES, "omit ptr"),
    ],
)

POD_TEMPLATE = Struct(
    "ACMEChallengeSolverHTTP01IngressPodTemplate",
    [F("metadata", POD_OBJECT_META), F("spec", POD_SPEC)],
)

INGRESS_TEMPLATE = Struct(
    "ACMEChallengeSolverHTTP01IngressTemplate",
    [
        F(
            "metadata",
            Struct(
                "ACMEChallengeSolverHTTP01IngressObjectMeta",
                [F("annotations", _LABELS, "omit"), F("labels", _LABELS, "omit")],
            ),
        )
    ],
)

HTTP01_INGRESS = Struct(
    "ACMEChallengeSolverHTTP01Ingress",
    [
        F("serviceType", STRING, "omit"),
        F("ingressClassName", STRING, "omit ptr"),
        F("class", STRING, "omit ptr"),
        F("name", STRING, "omit"),
        F("podTemplate", POD_TEMPLATE, "omit ptr"),
        F("ingressTemplate", INGRESS_TEMPLATE, "omit ptr"),
    ],
)

PARENT_REFERENCE = Struct(
    "ParentReference",
    [
        F("group", STRING, "omit ptr"),
        F("kind", STRING, "omit ptr"),
        F("namespace", STRING, "omit ptr"),
        F("name", STRING, "req"),
        F("sectionName", STRING, "omit ptr"),
        F("port", INT32, "omit ptr"),
    ],
)

HTTP01_GATEWAY_HTTP_ROUTE = Struct(
    "ACMEChallengeSolverHTTP01GatewayHTTPRoute",
    [
        F("serviceType", STRING, "omit"),
        F("labels", _LABELS, "omit"),
        F("parentRefs", list_of(PARENT_REFERENCE), "omit"),
        F("podTemplate", POD_TEMPLATE, "omit ptr"),
    ],
)

HTTP01 = Struct(
    "ACMEChallengeSolverHTTP01",
    [
        F("ingress", HTTP01_INGRESS, "omit ptr"),
        F("gatewayHTTPRoute", HTTP01_GATEWAY_HTTP_ROUTE, "omit ptr"),
    ],
)

# --- ACME DNS01 solver -------------------------------------------------------------------------------

DNS01 = Struct(
    "ACMEChallengeSolverDNS01",
    [
        F("cnameStrategy", STRING, "omit"),
        F(
            "akamai",
            Struct(
                "ACMEIssuerDNS01ProviderAkamai",
                [
                    F("serviceConsumerDomain", STRING, "req"),
                    F("clientTokenSecretRef", SECRET_KEY_SELECTOR, "req"),
                    F("clientSecretSecretRef", SECRET_KEY_SELECTOR, "req"),
                    F("accessTokenSecretRef", SECRET_KEY_SELECTOR, "req"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "cloudDNS",
            Struct(
                "ACMEIssuerDNS01ProviderCloudDNS",
                [
                    F("serviceAccountSecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("project", STRING, "req"),
                    F("hostedZoneName", STRING, "omit"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "cloudflare",
            Struct(
                "ACMEIssuerDNS01ProviderCloudflare",
                [
                    F("email", STRING, "omit"),
                    F("apiKeySecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("apiTokenSecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "route53",
            Struct(
                "ACMEIssuerDNS01ProviderRoute53",
                [
                    F(
                        "auth",
                        Struct(
                            "Route53Auth",
                            [
                                F(
                                    "kubernetes",
                                    Struct(
                                        "Route53KubernetesAuth",
                                        [F("serviceAccountRef", SERVICE_ACCOUNT_REF, "req")],
                                    ),
                                    "req",
                                )
                            ],
                        ),
                        "omit ptr",
                    ),
                    F("accessKeyID", STRING, "omit"),
                    F("accessKeyIDSecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("secretAccessKeySecretRef", SECRET_KEY_SELECTOR),
                    F("role", STRING, "omit"),
                    F("hostedZoneID", STRING, "omit"),
                    F("region", STRING, "omit"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "azureDNS",
            Struct(
                "ACMEIssuerDNS01ProviderAzureDNS",
                [
                    F("clientID", STRING, "omit"),
                    F("clientSecretSecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("subscriptionID", STRING, "req"),
                    F("tenantID", STRING, "omit"),
                    F("resourceGroupName", STRING, "req"),
                    F("hostedZoneName", STRING, "omit"),
                    F("environment", STRING, "omit"),
                    F(
                        "managedIdentity",
                        Struct(
                            "AzureManagedIdentity",
                            [
                                F("clientID", STRING, "omit"),
                                F("resourceID", STRING, "omit"),
                                F("tenantID", STRING, "omit"),
                            ],
                        ),
                        "omit ptr",
                    ),
                    F("zoneType", STRING, "omit"),  # AzurePublicZone or AzurePrivateZone
                ],
            ),
            "omit ptr",
        ),
        F(
            "digitalocean",
            Struct("ACMEIssuerDNS01ProviderDigitalOcean", [F("tokenSecretRef", SECRET_KEY_SELECTOR, "req")]),
            "omit ptr",
        ),
        F(
            "acmeDNS",
            Struct(
                "ACMEIssuerDNS01ProviderAcmeDNS",
                [F("host", STRING, "req"), F("accountSecretRef", SECRET_KEY_SELECTOR, "req")],
            ),
            "omit ptr",
        ),
        F(
            "rfc2136",
            Struct(
                "ACMEIssuerDNS01ProviderRFC2136",
                [
                    F("nameserver", STRING, "req"),
                    F("tsigSecretSecretRef", SECRET_KEY_SELECTOR, "omit"),
                    F("tsigKeyName", STRING, "omit"),
                    F("tsigAlgorithm", STRING, "omit"),
                    F("protocol", STRING, "omit"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "webhook",
            Struct(
                "ACMEIssuerDNS01ProviderWebhook",
                [F("groupName", STRING, "req"), F("solverName", STRING, "req"), F("config", RAW, "omit ptr")],
            ),
            "omit ptr",
        ),
    ],
)

SOLVER = Struct(
    "ACMEChallengeSolver",
    [
        F(
            "selector",
            Struct(
                "CertificateDNSNameSelector",
                [
                    F("matchLabels", _LABELS, "omit"),
                    F("dnsNames", _STRINGS, "omit"),
                    F("dnsZones", _STRINGS, "omit"),
                ],
            ),
            "omit ptr",
        ),
        F("http01", HTTP01, "omit ptr"),
        F("dns01", DNS01, "omit ptr"),
    ],
)

ACME_ISSUER = Struct(
    "ACMEIssuer",
    [
        F("email", STRING, "omit"),
        F("server", STRING, "req"),
        F("preferredChain", STRING, "omit"),
        F("caBundle", STRING, "omit"),
        F("skipTLSVerify", BOOL, "omit"),
        F(
            "externalAccountBinding",
            Struct(
                "ACMEExternalAccountBinding",
                [
                    F("keyID", STRING, "req"),
                    F("keySecretRef", SECRET_KEY_SELECTOR, "req"),
                    F("keyAlgorithm", STRING, "omit"),
                ],
            ),
            "omit ptr",
        ),
        F("privateKeySecretRef", SECRET_KEY_SELECTOR, "req"),
        F("solvers", list_of(SOLVER), "omit"),
        F("disableAccountKeyGeneration", BOOL, "omit"),
        F("enableDurationFeature", BOOL, "omit"),
        F("profile", STRING, "omit"),
    ],
)

# --- CA, self-signed, Vault, Venafi ------------------------------------------------------------------

_CERT_URLS = [
    F("crlDistributionPoints", _STRINGS, "omit"),
    F("ocspServers", _STRINGS, "omit"),
    F("issuingCertificateURLs", _STRINGS, "omit"),
]

CA_ISSUER = Struct("CAIssuer", [F("secretName", STRING, "req"), *_CERT_URLS])

SELF_SIGNED_ISSUER = Struct("SelfSignedIssuer", [F("crlDistributionPoints", _STRINGS, "omit")])

VAULT_AUTH = Struct(
    "VaultAuth",
    [
        F("tokenSecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
        F(
            "appRole",
            Struct(
                "VaultAppRole",
                [
                    F("path", STRING, "req"),
                    F("roleId", STRING, "req"),
                    F("secretRef", SECRET_KEY_SELECTOR, "req"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "clientCertificate",
            Struct(
                "VaultClientCertificateAuth",
                [F("mountPath", STRING, "omit"), F("secretName", STRING, "omit"), F("name", STRING, "omit")],
            ),
            "omit ptr",
        ),
        F(
            "kubernetes",
            Struct(
                "VaultKubernetesAuth",
                [
                    F("mountPath", STRING, "omit"),
                    F("secretRef", SECRET_KEY_SELECTOR, "omit"),
                    F("serviceAccountRef", SERVICE_ACCOUNT_REF, "omit ptr"),
                    F("role", STRING, "req"),
                ],
            ),
            "omit ptr",
        ),
    ],
)

VAULT_ISSUER = Struct(
    "VaultIssuer",
    [
        F("auth", VAULT_AUTH, "req"),
        F("server", STRING, "req"),
        F("serverName", STRING, "omit"),
        F("path", STRING, "req"),
        F("namespace", STRING, "omit"),
        F("caBundle", STRING, "omit"),
        F("caBundleSecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
        F("clientCertSecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
        F("clientKeySecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
    ],
)

VENAFI_ISSUER = Struct(
    "VenafiIssuer",
    [
        F("zone", STRING, "req"),
        F(
            "tpp",
            Struct(
                "VenafiTPP",
                [
                    F("url", STRING, "req"),
                    F("credentialsRef", LOCAL_OBJECT_REFERENCE, "req"),
                    F("caBundle", STRING, "omit"),
                    F("caBundleSecretRef", SECRET_KEY_SELECTOR, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "cloud",
            Struct(
                "VenafiCloud", [F("url", STRING, "omit"), F("apiTokenSecretRef", SECRET_KEY_SELECTOR, "req")]
            ),
            "omit ptr",
        ),
    ],
)

ISSUER_SPEC = Struct(
    "IssuerSpec",
    [
        F("acme", ACME_ISSUER, "omit ptr"),
        F("ca", CA_ISSUER, "omit ptr"),
        F("vault", VAULT_ISSUER, "omit ptr"),
        F("selfSigned", SELF_SIGNED_ISSUER, "omit ptr"),
        F("venafi", VENAFI_ISSUER, "omit ptr"),
    ],
)

# --- Certificate -------------------------------------------------------------------------------------

X509_SUBJECT = Struct(
    "X509Subject",
    [
        *(
            F(name, _STRINGS, "omit")
            for name in (
                "organizations",
                "countries",
                "organizationalUnits",
                "localities",
                "provinces",
                "streetAddresses",
                "postalCodes",
            )
        ),
        F("serialNumber", STRING, "omit"),
    ],
)

_KEYSTORE_PASSWORD_REF = F("passwordSecretRef", SECRET_KEY_SELECTOR)

KEYSTORES = Struct(
    "CertificateKeystores",
    [
        F(
            "jks",
            Struct(
                "JKSKeystore",
                [
                    F("create", BOOL, "req"),
                    _KEYSTORE_PASSWORD_REF,
                    F("alias", STRING, "omit ptr"),
                    F("password", STRING, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "pkcs12",
            Struct(
                "PKCS12Keystore",
                [
                    F("create", BOOL, "req"),
                    F("profile", STRING, "omit"),
                    _KEYSTORE_PASSWORD_REF,
                    F("password", STRING, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
    ],
)

NAME_CONSTRAINT_ITEM = Struct(
    "NameConstraintItem",
    [F(name, _STRINGS, "omit") for name in ("dnsDomains", "ipRanges", "emailAddresses", "uriDomains")],
)

CERTIFICATE_SPEC = Struct(
    "CertificateSpec",
    [
        F("subject", X509_SUBJECT, "omit ptr"),
        F("literalSubject", STRING, "omit"),
        F("commonName", STRING, "omit"),
        F("duration", DURATION, "omit ptr"),
        F("renewBefore", DURATION, "omit ptr"),
        F("renewBeforePercentage", INT32, "omit ptr"),
        F(
            "renewal",
            Struct(
                "CertificateRenewal",
                [
                    F(
                        "windows",
                        list_of(
                            Struct(
                                "RenewalWindow",
                                [F("cron", STRING, "omit req"), F("windowDuration", STRING, "omit req")],
                            )
                        ),
                        "omit",
                    )
                ],
            ),
            "omit ptr",
        ),
        F("dnsNames", _STRINGS, "omit"),
        F("ipAddresses", _STRINGS, "omit"),
        F("uris", _STRINGS, "omit"),
        F(
            "otherNames",
            list_of(Struct("OtherName", [F("oid", STRING, "omit"), F("utf8Value", STRING, "omit")])),
            "omit",
        ),
        F("emailAddresses", _STRINGS, "omit"),
        F("secretName", STRING, "req"),
        F(
            "secretTemplate",
            Struct(
                "CertificateSecretTemplate", [F("annotations", _LABELS, "omit"), F("labels", _LABELS, "omit")]
            ),
            "omit ptr",
        ),
        F("keystores", KEYSTORES, "omit ptr"),
        F(
            "issuerRef",
            Struct(
                "ObjectReference",
                [F("name", STRING, "req"), F("kind", STRING, "omit"), F("group", STRING, "omit")],
            ),
            "req",
        ),
        F("isCA", BOOL, "omit"),
        F("usages", _STRINGS, "omit"),
        F(
            "privateKey",
            Struct(
                "CertificatePrivateKey",
                [
                    F("rotationPolicy", STRING, "omit"),
                    F("encoding", STRING, "omit"),
                    F("algorithm", STRING, "omit"),
                    F("size", INT64, "omit"),
                ],
            ),
            "omit ptr",
        ),
        F("signatureAlgorithm", STRING, "omit"),
        F("encodeUsagesInRequest", BOOL, "omit ptr"),
        F("revisionHistoryLimit", INT32, "omit ptr"),
        F(
            "additionalOutputFormats",
            list_of(Struct("CertificateAdditionalOutputFormat", [F("type", STRING, "req")])),
            "omit",
        ),
        F(
            "nameConstraints",
            Struct(
                "NameConstraints",
                [
                    F("critical", BOOL, "omit"),
                    F("permitted", NAME_CONSTRAINT_ITEM, "omit ptr"),
                    F("excluded", NAME_CONSTRAINT_ITEM, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
    ],
)
