"""Field tables of the Prometheus operator's workload spec types (ThanosRulerSpec, PrometheusSpec,
AlertmanagerSpec and the types they hold), written from the Go struct tags of prometheus-operator
v0.94.1 (pkg/apis/monitoring/v1) and checked against the field lists of the
@kubernetes-models/prometheus-operator schema package (npm, 6.0.0). That package is cut from an older
release: the fields it lacks (clusterPeerName, retentionPercentage, the proxy fields of remoteRead and
apiserverConfig) are taken from seed 002's field lists, and those of the v0.93 CRD schemas (PyPI
cloudcoil-models-prometheus-operator): otlp's label-name settings, tsdb.staleSeriesCompactionThreshold
and chunkEncoding, an alertmanager endpoint's proxy fields, the sidecar's gRPC TLS cipher suites and
curves.

The pod fields (containers, volumes, affinity, securityContext …) are the core/v1 tables of
``corev1_pod``. Two builds of them exist: :data:`POD_TYPES` refuses every zero the API server would
default (probe thresholds and the Kubernetes string defaults, as alertmanager and prometheus do),
and :data:`POD_TYPES_NUMBERS_ONLY` refuses only the numeric ones (thanosruler: "a string default of
the Kubernetes pod types is not refused").
"""

from __future__ import annotations

from typing import Any

from farm.core.kinds import corev1_pod
from farm.core.kinds.engine import (
    BOOL,
    INT32,
    INT64,
    INT_OR_STRING,
    QUANTITY,
    RAW,
    STRING,
    F,
    Struct,
    list_of,
    map_of,
)
from farm.core.kinds.meta import LABEL_SELECTOR
from farm.core.kinds.monitoring import (
    BASIC_AUTH,
    HTTP_CLIENT_FIELDS,
    OAUTH2,
    PROXY_FIELDS,
    RELABEL_CONFIGS,
    SAFE_AUTHORIZATION,
    SAFE_TLS_CONFIG,
    SAFE_TLS_FIELDS,
    SECRET_KEY_SELECTOR,
    SECRET_OR_CONFIG_MAP,
    STRING_MAP,
    STRINGS,
    TLS_CONFIG,
    TLS_FILE_FIELDS,
    UINT64,
)

# --- the core/v1 pod types, in two builds -------------------------------------------------------------

_SCALARS: dict[str, Any] = {
    "string": STRING,
    "int32": INT32,
    "int64": INT64,
    "bool": BOOL,
    "quantity": QUANTITY,
    "intstr": INT_OR_STRING,
    "time": corev1_pod.TIME,
    "any": RAW,
    "map": map_of(STRING),
    "qmap": map_of(QUANTITY),
}


def _build_pod_types(string_defaults: bool) -> dict[str, Struct]:
    structs: dict[str, Struct] = {}

    def kind(type_name: str) -> Any:
        if type_name.startswith("[]"):
            return list_of(kind(type_name[2:]))
        return _SCALARS.get(type_name) or structs[type_name]

    def field(struct: str, name: str, type_name: str, omitempty: bool) -> F:
        flags = [flag for flag, on in (("omit", omitempty), ("ptr", type_name.startswith("*"))) if on]
        if (struct, name) in corev1_pod.REQUIRED:
            flags.append("req")
        default = None
        if string_defaults and (struct, name) in corev1_pod.DEFAULTED_STRINGS:
            default = f'"{corev1_pod.DEFAULTED_STRINGS[(struct, name)]}"'
        elif (struct, name) in corev1_pod.DEFAULTED_NUMBERS:
            default = str(corev1_pod.DEFAULTED_NUMBERS[(struct, name)])
        return F(name, kind(type_name.lstrip("*")), " ".join(flags), default=default)

    for struct_name, table in corev1_pod.TYPES.items():
        structs[struct_name] = Struct(
            struct_name,
            lambda s=struct_name, t=table: [field(s, n, ty, omit) for n, (ty, omit) in t.items()],
        )
    return structs


POD_TYPES = corev1_pod.STRUCTS
POD_TYPES_NUMBERS_ONLY = _build_pod_types(string_defaults=False)

# --- operator types the workload specs share ------------------------------------------------------------

EMBEDDED_OBJECT_METADATA = Struct(
    "EmbeddedObjectMetadata",
    [F("name", STRING, "omit"), F("labels", STRING_MAP, "omit"), F("annotations", STRING_MAP, "omit")],
)

ARGUMENT = Struct("Argument", [F("name", STRING, "req"), F("value", STRING, "omit")])

POD_DNS_CONFIG = Struct(
    "PodDNSConfig",
    [
        F("nameservers", STRINGS, "omit"),
        F("searches", STRINGS, "omit"),
        F(
            "options",
            list_of(Struct("PodDNSConfigOption", [F("name", STRING, "req"), F("value", STRING, "omit ptr")])),
            "omit",
        ),
    ],
)

HOST_ALIAS = Struct("HostAlias", [F("ip", STRING, "req"), F("hostnames", STRINGS, "req")])

UPDATE_STRATEGY = Struct(
    "StatefulSetUpdateStrategy",
    [
        F("type", STRING, "req"),
        F(
            "rollingUpdate",
            Struct("RollingUpdateStatefulSetStrategy", [F("maxUnavailable", INT_OR_STRING, "omit ptr")]),
            "omit ptr",
        ),
    ],
)

PVC_STATUS = Struct(
    "PersistentVolumeClaimStatus",
    [
        F("phase", STRING, "omit"),
        F("accessModes", STRINGS, "omit"),
        F("capacity", map_of(QUANTITY), "omit"),
        F("conditions", list_of(RAW), "omit"),
        F("allocatedResources", map_of(QUANTITY), "omit"),
        F("allocatedResourceStatuses", STRING_MAP, "omit"),
        F("currentVolumeAttributesClassName", STRING, "omit ptr"),
        F("modifyVolumeStatus", RAW, "omit ptr"),
    ],
)


def storage_spec(pod: dict[str, Struct]) -> Struct:
    """StorageSpec: the three arms, the claim template always written (a non-pointer struct)."""
    claim = Struct(
        "EmbeddedPersistentVolumeClaim",
        [
            F("kind", STRING, "omit"),
            F("apiVersion", STRING, "omit"),
            F("metadata", EMBEDDED_OBJECT_METADATA, "omit"),
            F("spec", pod["PersistentVolumeClaimSpec"], "omit"),
            F("status", PVC_STATUS, "omit"),
        ],
    )
    return Struct(
        "StorageSpec",
        [
            F("disableMountSubPath", BOOL, "omit"),
            F("emptyDir", pod["EmptyDirVolumeSource"], "omit ptr"),
            F("ephemeral", pod["EphemeralVolumeSource"], "omit ptr"),
            F("volumeClaimTemplate", claim, "omit"),
        ],
    )


WEB_TLS_CONFIG = Struct(
    "WebTLSConfig",
    [
        F("cert", SECRET_OR_CONFIG_MAP, "omit"),
        F("certFile", STRING, "omit ptr"),
        F("keySecret", SECRET_KEY_SELECTOR, "omit"),
        F("keyFile", STRING, "omit ptr"),
        F("client_ca", SECRET_OR_CONFIG_MAP, "omit"),
        F("clientCAFile", STRING, "omit ptr"),
        F("clientAuthType", STRING, "omit ptr"),
        F("minVersion", STRING, "omit ptr"),
        F("maxVersion", STRING, "omit ptr"),
        F("cipherSuites", STRINGS, "omit"),
        F("preferServerCipherSuites", BOOL, "omit ptr"),
        F("curvePreferences", STRINGS, "omit"),
    ],
)

WEB_HTTP_CONFIG = Struct(
    "WebHTTPConfig",
    [
        F("http2", BOOL, "omit ptr"),
        F(
            "headers",
            Struct(
                "WebHTTPHeaders",
                [
                    F("contentSecurityPolicy", STRING, "omit"),
                    F("xFrameOptions", STRING, "omit"),
                    F("xContentTypeOptions", STRING, "omit"),
                    F("xXSSProtection", STRING, "omit"),
                    F("strictTransportSecurity", STRING, "omit"),
                ],
            ),
            "omit ptr",
        ),
    ],
)

WEB_CONFIG_FIELDS = [F("tlsConfig", WEB_TLS_CONFIG, "omit ptr"), F("httpConfig", WEB_HTTP_CONFIG, "omit ptr")]

OBJECT_REFERENCE = Struct(
    "ObjectReference",
    [
        F("group", STRING),  # the kind writes the API default where it was not authored
        F("resource", STRING, "req"),
        F("namespace", STRING, "req"),
        F("name", STRING, "omit"),
    ],
)

RULE_EXCLUDE_CONFIG = Struct(
    "PrometheusRuleExcludeConfig",
    [F("ruleNamespace", STRING, "req"), F("ruleName", STRING, "req")],
)

AUTHORIZATION = Struct(
    "Authorization",
    [*SAFE_AUTHORIZATION.fields, F("credentialsFile", STRING, "omit")],
)

SIGV4 = Struct(
    "Sigv4",
    [
        F("region", STRING, "omit"),
        F("accessKey", SECRET_KEY_SELECTOR, "omit ptr"),
        F("secretKey", SECRET_KEY_SELECTOR, "omit ptr"),
        F("profile", STRING, "omit"),
        F("roleArn", STRING, "omit"),
        F("useFIPSSTSEndpoint", BOOL, "omit ptr"),
        F("externalId", STRING, "omit"),
    ],
)

AZURE_AD = Struct(
    "AzureAD",
    [
        F("cloud", STRING, "omit ptr"),
        F("managedIdentity", Struct("ManagedIdentity", [F("clientId", STRING, "omit ptr")]), "omit ptr"),
        F(
            "oauth",
            Struct(
                "AzureOAuth",
                [
                    F("clientId", STRING, "req"),
                    F("clientSecret", SECRET_KEY_SELECTOR, "req"),
                    F("tenantId", STRING, "req"),
                ],
            ),
            "omit ptr",
        ),
        F("sdk", Struct("AzureSDK", [F("tenantId", STRING, "omit ptr")]), "omit ptr"),
        F(
            "workloadIdentity",
            Struct("AzureWorkloadIdentity", [F("clientId", STRING, "req"), F("tenantId", STRING, "req")]),
            "omit ptr",
        ),
        F("scope", STRING, "omit ptr"),
    ],
)

QUEUE_CONFIG = Struct(
    "QueueConfig",
    [
        F("capacity", INT64, "omit"),
        F("minShards", INT64, "omit"),
        F("maxShards", INT64, "omit"),
        F("maxSamplesPerSend", INT64, "omit"),
        F("batchSendDeadline", STRING, "omit ptr"),
        F("maxRetries", INT64, "omit"),
        F("minBackoff", STRING, "omit ptr"),
        F("maxBackoff", STRING, "omit ptr"),
        F("retryOnRateLimit", BOOL, "omit"),
        F("sampleAgeLimit", STRING, "omit ptr"),
    ],
)

METADATA_CONFIG = Struct(
    "MetadataConfig",
    [
        F("send", BOOL, "omit"),
        F("sendInterval", STRING, "omit"),
        F("maxSamplesPerSend", INT32, "omit ptr"),
    ],
)

REMOTE_WRITE_SPEC = Struct(
    "RemoteWriteSpec",
    [
        F("url", STRING, "req"),
        F("name", STRING, "omit ptr"),
        F("messageVersion", STRING, "omit ptr"),
        F("sendExemplars", BOOL, "omit ptr"),
        F("sendNativeHistograms", BOOL, "omit ptr"),
        F("remoteTimeout", STRING, "omit ptr"),
        F("headers", STRING_MAP, "omit"),
        F("writeRelabelConfigs", RELABEL_CONFIGS, "omit"),
        F("oauth2", OAUTH2, "omit ptr"),
        F("basicAuth", BASIC_AUTH, "omit ptr"),
        F("bearerTokenFile", STRING, "omit"),
        F("authorization", AUTHORIZATION, "omit ptr"),
        F("sigv4", SIGV4, "omit ptr"),
        F("azureAd", AZURE_AD, "omit ptr"),
        F("bearerToken", STRING, "omit"),
        F("tlsConfig", TLS_CONFIG, "omit ptr"),
        *PROXY_FIELDS,
        F("followRedirects", BOOL, "omit ptr"),
        F("queueConfig", QUEUE_CONFIG, "omit ptr"),
        F("metadataConfig", METADATA_CONFIG, "omit ptr"),
        F("enableHTTP2", BOOL, "omit ptr"),
        F("roundRobinDNS", BOOL, "omit ptr"),
    ],
)

GRPC_SERVER_TLS_CONFIG = Struct(
    "GRPCServerTLSConfig",
    [*SAFE_TLS_FIELDS, *TLS_FILE_FIELDS, F("cipherSuites", STRINGS, "omit"), F("curves", STRINGS, "omit")],
)


def pod_fields(pod: dict[str, Struct]) -> list[F]:
    """The pod and StatefulSet fields the three workload specs share (hostNetwork aside)."""
    return [
        F("podMetadata", EMBEDDED_OBJECT_METADATA, "omit ptr"),
        F("image", STRING, "omit ptr"),
        F("imagePullSecrets", list_of(pod["LocalObjectReference"]), "omit"),
        F("replicas", INT32, "omit ptr"),
        F("nodeSelector", STRING_MAP, "omit"),
        F("resources", pod["ResourceRequirements"], "omit"),
        F("affinity", pod["Affinity"], "omit ptr"),
        F("tolerations", list_of(pod["Toleration"]), "omit"),
        F("topologySpreadConstraints", list_of(pod["TopologySpreadConstraint"]), "omit"),
        F("securityContext", pod["PodSecurityContext"], "omit ptr"),
        F("dnsPolicy", STRING, "omit ptr"),
        F("dnsConfig", POD_DNS_CONFIG, "omit ptr"),
        F("enableServiceLinks", BOOL, "omit ptr"),
        F("priorityClassName", STRING, "omit"),
        F("serviceName", STRING, "omit ptr"),
        F("serviceAccountName", STRING, "omit"),
        F("automountServiceAccountToken", BOOL, "omit ptr"),
        F("storage", storage_spec(pod), "omit ptr"),
        F("volumes", list_of(pod["Volume"]), "omit"),
        F("volumeMounts", list_of(pod["VolumeMount"]), "omit"),
        F("containers", list_of(pod["Container"]), "omit"),
        F("initContainers", list_of(pod["Container"]), "omit"),
        F("minReadySeconds", INT32, "omit ptr"),
        F("hostAliases", list_of(HOST_ALIAS), "omit"),
        F("terminationGracePeriodSeconds", INT64, "omit ptr"),
        F("hostUsers", BOOL, "omit ptr"),
        F("podManagementPolicy", STRING, "omit ptr"),
        F("updateStrategy", UPDATE_STRATEGY, "omit ptr"),
        F("additionalArgs", list_of(ARGUMENT), "omit"),
        F("paused", BOOL, "omit"),
        F("listenLocal", BOOL, "omit"),
        F("routePrefix", STRING, "omit"),
        F("logLevel", STRING, "omit"),
        F("logFormat", STRING, "omit"),
        F("enableFeatures", STRINGS, "omit"),
        F("version", STRING, "omit"),
    ]


# --- ThanosRuler ----------------------------------------------------------------------------------------

_TR_POD = POD_TYPES_NUMBERS_ONLY

THANOS_RULER_SPEC = Struct(
    "ThanosRulerSpec",
    [
        *pod_fields(_TR_POD),
        F("imagePullPolicy", STRING, "omit"),
        F("schedulerName", STRING, "omit"),
        # the spec's ``labels``: the engine reads ``labels`` as the object's own, so the kind takes the
        # external labels under this name and writes them back as ``labels``
        F("externalLabels", STRING_MAP, "omit"),
        F("objectStorageConfig", SECRET_KEY_SELECTOR, "omit ptr"),
        F("objectStorageConfigFile", STRING, "omit ptr"),
        F("queryEndpoints", STRINGS, "omit"),
        F("queryConfig", SECRET_KEY_SELECTOR, "omit ptr"),
        F("alertmanagersUrl", STRINGS, "omit"),
        F("alertmanagersConfig", SECRET_KEY_SELECTOR, "omit ptr"),
        F("ruleSelector", LABEL_SELECTOR, "omit ptr"),
        F("ruleNamespaceSelector", LABEL_SELECTOR, "omit ptr"),
        F("enforcedNamespaceLabel", STRING, "omit"),
        F("excludedFromEnforcement", list_of(OBJECT_REFERENCE), "omit"),
        F("prometheusRulesExcludedFromEnforce", list_of(RULE_EXCLUDE_CONFIG), "omit"),
        F("portName", STRING, "omit", default='"web"'),
        F("evaluationInterval", STRING, "omit", default='"15s"'),
        F("resendDelay", STRING, "omit ptr"),
        F("ruleOutageTolerance", STRING, "omit ptr"),
        F("ruleQueryOffset", STRING, "omit ptr"),
        F("ruleConcurrentEval", INT32, "omit ptr"),
        F("ruleGracePeriod", STRING, "omit ptr"),
        F("retention", STRING, "omit", default='"24h"'),
        F("tracingConfig", SECRET_KEY_SELECTOR, "omit ptr"),
        F("tracingConfigFile", STRING, "omit"),
        F("alertDropLabels", STRINGS, "omit"),
        F("externalPrefix", STRING, "omit"),
        F("grpcServerTlsConfig", GRPC_SERVER_TLS_CONFIG, "omit ptr"),
        F("alertQueryUrl", STRING, "omit"),
        F("alertRelabelConfigs", SECRET_KEY_SELECTOR, "omit ptr"),
        F("alertRelabelConfigFile", STRING, "omit ptr"),
        F("web", Struct("ThanosRulerWebSpec", WEB_CONFIG_FIELDS), "omit ptr"),
        F("remoteWrite", list_of(REMOTE_WRITE_SPEC), "omit"),
    ],
)


# --- Prometheus -----------------------------------------------------------------------------------------

_PROM_POD = POD_TYPES

_TOPOLOGY_SPREAD_CONSTRAINT = Struct(
    "TopologySpreadConstraint",
    lambda: [
        *_PROM_POD["TopologySpreadConstraint"].fields,
        F("additionalLabelSelectors", STRING, "omit ptr"),
    ],
)

STATEFUL_SET_PVC_RETENTION_POLICY = Struct(
    "StatefulSetPersistentVolumeClaimRetentionPolicy",
    [F("whenDeleted", STRING, "omit"), F("whenScaled", STRING, "omit")],
)

_SCRAPE_CLASS = Struct(
    "ScrapeClass",
    [
        F("name", STRING, "req"),
        F("default", BOOL, "omit ptr"),
        F("fallbackScrapeProtocol", STRING, "omit ptr"),
        F("tlsConfig", TLS_CONFIG, "omit ptr"),
        F("authorization", AUTHORIZATION, "omit ptr"),
        F("relabelings", RELABEL_CONFIGS, "omit"),
        F("metricRelabelings", RELABEL_CONFIGS, "omit"),
        F("attachMetadata", Struct("AttachMetadata", [F("node", BOOL, "omit ptr")]), "omit ptr"),
    ],
)

_APISERVER_CONFIG = Struct(
    "APIServerConfig",
    [
        F("host", STRING, "req"),
        F("basicAuth", BASIC_AUTH, "omit ptr"),
        F("bearerTokenFile", STRING, "omit"),
        F("tlsConfig", TLS_CONFIG, "omit ptr"),
        F("authorization", AUTHORIZATION, "omit ptr"),
        F("bearerToken", STRING, "omit"),
        *PROXY_FIELDS,
    ],
)

_ALERTMANAGER_ENDPOINTS = Struct(
    "AlertmanagerEndpoints",
    [
        F("namespace", STRING, "omit ptr"),
        F("name", STRING, "req"),
        F("port", INT_OR_STRING, "req"),
        F("scheme", STRING, "omit ptr"),
        F("pathPrefix", STRING, "omit ptr"),
        F("tlsConfig", TLS_CONFIG, "omit ptr"),
        F("basicAuth", BASIC_AUTH, "omit ptr"),
        F("bearerTokenFile", STRING, "omit"),
        F("authorization", SAFE_AUTHORIZATION, "omit ptr"),
        F("sigv4", SIGV4, "omit ptr"),
        F("apiVersion", STRING, "omit ptr"),
        F("timeout", STRING, "omit ptr"),
        F("enableHttp2", BOOL, "omit ptr"),
        F("relabelings", RELABEL_CONFIGS, "omit"),
        F("alertRelabelings", RELABEL_CONFIGS, "omit"),
        *PROXY_FIELDS,
    ],
)

_REMOTE_READ_SPEC = Struct(
    "RemoteReadSpec",
    [
        F("url", STRING, "req"),
        F("name", STRING, "omit"),
        F("requiredMatchers", STRING_MAP, "omit"),
        F("remoteTimeout", STRING, "omit ptr"),
        F("headers", STRING_MAP, "omit"),
        F("readRecent", BOOL, "omit"),
        F("oauth2", OAUTH2, "omit ptr"),
        F("basicAuth", BASIC_AUTH, "omit ptr"),
        F("bearerTokenFile", STRING, "omit"),
        F("authorization", AUTHORIZATION, "omit ptr"),
        F("bearerToken", STRING, "omit"),
        F("tlsConfig", TLS_CONFIG, "omit ptr"),
        *PROXY_FIELDS,
        F("followRedirects", BOOL, "omit ptr"),
        F("filterExternalLabels", BOOL, "omit ptr"),
    ],
)

_TRACING_CONFIG = Struct(
    "PrometheusTracingConfig",
    [
        F("clientType", STRING, "omit ptr"),
        F("endpoint", STRING, "req"),
        F("samplingFraction", QUANTITY, "omit ptr"),
        F("insecure", BOOL, "omit ptr"),
        F("headers", STRING_MAP, "omit"),
        F("compression", STRING, "omit ptr"),
        F("timeout", STRING, "omit ptr"),
        F("tlsConfig", TLS_CONFIG, "omit ptr"),
    ],
)

THANOS_SPEC = Struct(
    "ThanosSpec",
    [
        F("image", STRING, "omit ptr"),
        F("version", STRING, "omit ptr"),
        F("tag", STRING, "omit ptr"),
        F("sha", STRING, "omit ptr"),
        F("baseImage", STRING, "omit ptr"),
        F("resources", _PROM_POD["ResourceRequirements"], "omit"),
        F("objectStorageConfig", SECRET_KEY_SELECTOR, "omit ptr"),
        F("objectStorageConfigFile", STRING, "omit ptr"),
        F("listenLocal", BOOL, "omit"),
        F("grpcListenLocal", BOOL, "omit"),
        F("httpListenLocal", BOOL, "omit"),
        F("tracingConfig", SECRET_KEY_SELECTOR, "omit ptr"),
        F("tracingConfigFile", STRING, "omit"),
        F("grpcServerTlsConfig", GRPC_SERVER_TLS_CONFIG, "omit ptr"),
        F("logLevel", STRING, "omit"),
        F("logFormat", STRING, "omit"),
        F("minTime", STRING, "omit"),
        F("blockSize", STRING, "omit", default='"2h"'),
        F("readyTimeout", STRING, "omit"),
        F("getConfigInterval", STRING, "omit"),
        F("getConfigTimeout", STRING, "omit"),
        F("volumeMounts", list_of(_PROM_POD["VolumeMount"]), "omit"),
        F("additionalArgs", list_of(ARGUMENT), "omit"),
    ],
)

_OTLP_CONFIG = Struct(
    "OTLPConfig",
    [
        F("promoteAllResourceAttributes", BOOL, "omit ptr"),
        F("ignoreResourceAttributes", STRINGS, "omit"),
        F("promoteResourceAttributes", STRINGS, "omit"),
        F("translationStrategy", STRING, "omit ptr"),
        F("keepIdentifyingResourceAttributes", BOOL, "omit ptr"),
        F("convertHistogramsToNHCB", BOOL, "omit ptr"),
        F("promoteScopeMetadata", BOOL, "omit ptr"),
        F("labelNameUnderscoreSanitization", BOOL, "omit ptr"),
        F("labelNamePreserveMultipleUnderscores", BOOL, "omit ptr"),
    ],
)

_TSDB_SPEC = Struct(
    "TSDBSpec",
    [
        F("outOfOrderTimeWindow", STRING, "omit ptr"),
        F("staleSeriesCompactionThreshold", QUANTITY, "omit ptr"),
        F("chunkEncoding", Struct("ChunkEncoding", [F("floats", STRING, "omit")]), "omit ptr"),
    ],
)

_PROMETHEUS_POD_FIELDS = [
    F("topologySpreadConstraints", list_of(_TOPOLOGY_SPREAD_CONSTRAINT), "omit")
    if f.name == "topologySpreadConstraints"
    else f
    for f in pod_fields(_PROM_POD)
]

PROMETHEUS_SPEC = Struct(
    "PrometheusSpec",
    [
        *_PROMETHEUS_POD_FIELDS,
        F("imagePullPolicy", STRING, "omit", default='"IfNotPresent"'),
        F("schedulerName", STRING, "omit", default='"default-scheduler"'),
        F("hostNetwork", BOOL, "omit"),
        F("persistentVolumeClaimRetentionPolicy", STATEFUL_SET_PVC_RETENTION_POLICY, "omit ptr"),
        # CommonPrometheusFields
        F("serviceMonitorSelector", LABEL_SELECTOR, "omit ptr"),
        F("serviceMonitorNamespaceSelector", LABEL_SELECTOR, "omit ptr"),
        F("podMonitorSelector", LABEL_SELECTOR, "omit ptr"),
        F("podMonitorNamespaceSelector", LABEL_SELECTOR, "omit ptr"),
        F("probeSelector", LABEL_SELECTOR, "omit ptr"),
        F("probeNamespaceSelector", LABEL_SELECTOR, "omit ptr"),
        F("scrapeConfigSelector", LABEL_SELECTOR, "omit ptr"),
        F("scrapeConfigNamespaceSelector", LABEL_SELECTOR, "omit ptr"),
        F("shards", INT32, "omit ptr"),
        F("replicaExternalLabelName", STRING, "omit ptr"),
        F("prometheusExternalLabelName", STRING, "omit ptr"),
        F("scrapeInterval", STRING, "omit", default='"30s"'),
        F("scrapeTimeout", STRING, "omit"),
        F("scrapeProtocols", STRINGS, "omit"),
        F("externalLabels", STRING_MAP, "omit"),
        F("enableRemoteWriteReceiver", BOOL, "omit"),
        F("enableOTLPReceiver", BOOL, "omit ptr"),
        F("remoteWriteReceiverMessageVersions", STRINGS, "omit"),
        F("externalUrl", STRING, "omit"),
        F(
            "web",
            Struct(
                "PrometheusWebSpec",
                [
                    *WEB_CONFIG_FIELDS,
                    F("pageTitle", STRING, "omit ptr"),
                    F("maxConnections", INT32, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F("secrets", STRINGS, "omit"),
        F("configMaps", STRINGS, "omit"),
        F("remoteWrite", list_of(REMOTE_WRITE_SPEC), "omit"),
        F("otlp", _OTLP_CONFIG, "omit ptr"),
        F("additionalScrapeConfigs", SECRET_KEY_SELECTOR, "omit ptr"),
        F("apiserverConfig", _APISERVER_CONFIG, "omit ptr"),
        F("portName", STRING, "omit", default='"web"'),
        F(
            "arbitraryFSAccessThroughSMs",
            Struct("ArbitraryFSAccessThroughSMsConfig", [F("deny", BOOL, "omit")]),
            "omit",
        ),
        F("overrideHonorLabels", BOOL, "omit"),
        F("overrideHonorTimestamps", BOOL, "omit"),
        F("ignoreNamespaceSelectors", BOOL, "omit"),
        F("enforcedNamespaceLabel", STRING, "omit"),
        F("enforcedSampleLimit", UINT64, "omit ptr"),
        F("enforcedTargetLimit", UINT64, "omit ptr"),
        F("enforcedLabelLimit", UINT64, "omit ptr"),
        F("enforcedLabelNameLengthLimit", UINT64, "omit ptr"),
        F("enforcedLabelValueLengthLimit", UINT64, "omit ptr"),
        F("enforcedKeepDroppedTargets", UINT64, "omit ptr"),
        F("enforcedBodySizeLimit", STRING, "omit"),
        F("nameValidationScheme", STRING, "omit ptr"),
        F("nameEscapingScheme", STRING, "omit ptr"),
        F("convertClassicHistogramsToNHCB", BOOL, "omit ptr"),
        F("scrapeNativeHistograms", BOOL, "omit ptr"),
        F("scrapeClassicHistograms", BOOL, "omit ptr"),
        F("walCompression", BOOL, "omit ptr"),
        F("excludedFromEnforcement", list_of(OBJECT_REFERENCE), "omit"),
        F("podTargetLabels", STRINGS, "omit"),
        F("tracingConfig", _TRACING_CONFIG, "omit ptr"),
        F("bodySizeLimit", STRING, "omit ptr"),
        F("sampleLimit", UINT64, "omit ptr"),
        F("targetLimit", UINT64, "omit ptr"),
        F("labelLimit", UINT64, "omit ptr"),
        F("labelNameLengthLimit", UINT64, "omit ptr"),
        F("labelValueLengthLimit", UINT64, "omit ptr"),
        F("keepDroppedTargets", UINT64, "omit ptr"),
        F("reloadStrategy", STRING, "omit ptr"),
        F("maximumStartupDurationSeconds", INT32, "omit ptr"),
        F("scrapeClasses", list_of(_SCRAPE_CLASS), "omit"),
        F("serviceDiscoveryRole", STRING, "omit ptr"),
        F("tsdb", _TSDB_SPEC, "omit ptr"),
        F("scrapeFailureLogFile", STRING, "omit ptr"),
        F("runtime", Struct("RuntimeConfig", [F("goGC", INT32, "omit ptr")]), "omit ptr"),
        F(
            "shardingStrategy",
            Struct(
                "ShardingStrategy",
                [
                    F("mode", STRING, "omit ptr"),
                    F(
                        "topology",
                        Struct(
                            "TopologyShardingStrategy",
                            [F("externalLabelName", STRING, "omit ptr"), F("values", STRINGS, "omit")],
                        ),
                        "omit ptr",
                    ),
                ],
            ),
            "omit ptr",
        ),
        # PrometheusSpec's own
        F("baseImage", STRING, "omit"),
        F("tag", STRING, "omit"),
        F("sha", STRING, "omit"),
        F("retention", STRING, "omit"),
        F("retentionSize", STRING, "omit"),
        F("retentionPercentage", INT32, "omit ptr"),
        F(
            "shardRetentionPolicy",
            Struct(
                "ShardRetentionPolicy",
                [
                    F("whenScaled", STRING, "omit ptr"),
                    F("retain", Struct("RetainConfig", [F("retentionPeriod", STRING, "req")]), "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F("disableCompaction", BOOL, "omit"),
        F(
            "rules",
            Struct(
                "Rules",
                [
                    F(
                        "alert",
                        Struct(
                            "RulesAlert",
                            [
                                F("forOutageTolerance", STRING, "omit"),
                                F("forGracePeriod", STRING, "omit"),
                                F("resendDelay", STRING, "omit"),
                            ],
                        ),
                        "omit",
                    ),
                ],
            ),
            "omit",
        ),
        F("prometheusRulesExcludedFromEnforce", list_of(RULE_EXCLUDE_CONFIG), "omit"),
        F("ruleSelector", LABEL_SELECTOR, "omit ptr"),
        F("ruleNamespaceSelector", LABEL_SELECTOR, "omit ptr"),
        F(
            "query",
            Struct(
                "QuerySpec",
                [
                    F("lookbackDelta", STRING, "omit ptr"),
                    F("maxConcurrency", INT32, "omit ptr"),
                    F("maxSamples", INT32, "omit ptr"),
                    F("timeout", STRING, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "alerting",
            Struct("AlertingSpec", [F("alertmanagers", list_of(_ALERTMANAGER_ENDPOINTS), "req")]),
            "omit ptr",
        ),
        F("additionalAlertRelabelConfigs", SECRET_KEY_SELECTOR, "omit ptr"),
        F("additionalAlertManagerConfigs", SECRET_KEY_SELECTOR, "omit ptr"),
        F("remoteRead", list_of(_REMOTE_READ_SPEC), "omit"),
        F("thanos", THANOS_SPEC, "omit ptr"),
        F("queryLogFile", STRING, "omit"),
        F("allowOverlappingBlocks", BOOL, "omit"),
        F("exemplars", Struct("Exemplars", [F("maxSize", INT64, "omit ptr")]), "omit ptr"),
        F("evaluationInterval", STRING, "omit", default='"30s"'),
        F("ruleQueryOffset", STRING, "omit ptr"),
        F("enableAdminAPI", BOOL, "omit"),
    ],
)


# --- Alertmanager ---------------------------------------------------------------------------------------

_AM_POD = POD_TYPES

_HTTP_CONFIG_WITH_PROXY = Struct(
    "HTTPConfigWithProxy",
    [*HTTP_CLIENT_FIELDS, F("tlsConfig", SAFE_TLS_CONFIG, "omit ptr")],
)


_URL = STRING  # monitoringv1.URL, a string type

ALERTMANAGER_GLOBAL_CONFIG = Struct(
    "AlertmanagerGlobalConfig",
    [
        F(
            "smtp",
            Struct(
                "GlobalSMTPConfig",
                [
                    F("from", STRING, "omit ptr"),
                    F(
                        "smartHost",
                        Struct("HostPort", [F("host", STRING, "req"), F("port", STRING, "req")]),
                        "omit ptr",
                    ),
                    F("hello", STRING, "omit ptr"),
                    F("authUsername", STRING, "omit ptr"),
                    F("authPassword", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("authIdentity", STRING, "omit ptr"),
                    F("authSecret", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("requireTLS", BOOL, "omit ptr"),
                    F("tlsConfig", SAFE_TLS_CONFIG, "omit ptr"),
                    F("forceImplicitTLS", BOOL, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F("resolveTimeout", STRING, "omit"),
        F("httpConfig", _HTTP_CONFIG_WITH_PROXY, "omit ptr"),
        F("slackApiUrl", SECRET_KEY_SELECTOR, "omit ptr"),
        F("opsGenieApiUrl", SECRET_KEY_SELECTOR, "omit ptr"),
        F("opsGenieApiKey", SECRET_KEY_SELECTOR, "omit ptr"),
        F("pagerdutyUrl", _URL, "omit ptr"),
        F("telegram", Struct("GlobalTelegramConfig", [F("apiURL", _URL, "omit ptr")]), "omit ptr"),
        F("jira", Struct("GlobalJiraConfig", [F("apiURL", _URL, "omit ptr")]), "omit ptr"),
        F(
            "victorops",
            Struct(
                "GlobalVictorOpsConfig",
                [F("apiKey", SECRET_KEY_SELECTOR, "omit ptr"), F("apiURL", _URL, "omit ptr")],
            ),
            "omit ptr",
        ),
        F(
            "rocketChat",
            Struct(
                "GlobalRocketChatConfig",
                [
                    F("apiURL", _URL, "omit ptr"),
                    F("token", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("tokenID", SECRET_KEY_SELECTOR, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F("webex", Struct("GlobalWebexConfig", [F("apiURL", _URL, "omit ptr")]), "omit ptr"),
        F(
            "wechat",
            Struct(
                "GlobalWeChatConfig",
                [
                    F("apiURL", _URL, "omit ptr"),
                    F("apiSecret", SECRET_KEY_SELECTOR, "omit ptr"),
                    F("apiCorpID", STRING, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "mattermost",
            Struct("GlobalMattermostConfig", [F("webhookURL", SECRET_KEY_SELECTOR, "omit ptr")]),
            "omit ptr",
        ),
    ],
)

ALERTMANAGER_CONFIGURATION = Struct(
    "AlertmanagerConfiguration",
    [
        F("name", STRING, "omit"),
        F("global", ALERTMANAGER_GLOBAL_CONFIG, "omit ptr"),
        F("templates", list_of(SECRET_OR_CONFIG_MAP), "omit"),
    ],
)

ALERTMANAGER_SPEC = Struct(
    "AlertmanagerSpec",
    [
        *pod_fields(_AM_POD),
        F("imagePullPolicy", STRING, "omit", default='"IfNotPresent"'),
        F("schedulerName", STRING, "omit", default='"default-scheduler"'),
        F("hostNetwork", BOOL, "omit"),
        F("persistentVolumeClaimRetentionPolicy", STATEFUL_SET_PVC_RETENTION_POLICY, "omit ptr"),
        F("tag", STRING, "omit"),
        F("sha", STRING, "omit"),
        F("baseImage", STRING, "omit"),
        F("secrets", STRINGS, "omit"),
        F("configMaps", STRINGS, "omit"),
        F("configSecret", STRING, "omit"),
        F("retention", STRING, "omit", default='"120h"'),
        F("externalUrl", STRING, "omit"),
        F("additionalPeers", STRINGS, "omit"),
        F("clusterAdvertiseAddress", STRING, "omit"),
        F("clusterGossipInterval", STRING, "omit"),
        F("clusterLabel", STRING, "omit ptr"),
        F("clusterPushpullInterval", STRING, "omit"),
        F("clusterPeerTimeout", STRING, "omit"),
        F("clusterPeerName", STRING, "omit"),
        F("portName", STRING, "omit", default='"web"'),
        F("forceEnableClusterMode", BOOL, "omit"),
        F("alertmanagerConfigSelector", LABEL_SELECTOR, "omit ptr"),
        F("alertmanagerConfigNamespaceSelector", LABEL_SELECTOR, "omit ptr"),
        F(
            "alertmanagerConfigMatcherStrategy",
            Struct("AlertmanagerConfigMatcherStrategy", [F("type", STRING, "omit", default='"OnNamespace"')]),
            "omit",
        ),
        F(
            "web",
            Struct(
                "AlertmanagerWebSpec",
                [
                    *WEB_CONFIG_FIELDS,
                    F("getConcurrency", UINT64, "omit ptr"),
                    F("timeout", UINT64, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "limits",
            Struct(
                "AlertmanagerLimitsSpec",
                [F("maxSilences", INT32, "omit ptr"), F("maxPerSilenceBytes", STRING, "omit ptr")],
            ),
            "omit ptr",
        ),
        F(
            "clusterTLS",
            Struct(
                "ClusterTLSConfig", [F("server", WEB_TLS_CONFIG, "req"), F("client", SAFE_TLS_CONFIG, "req")]
            ),
            "omit ptr",
        ),
        F("alertmanagerConfiguration", ALERTMANAGER_CONFIGURATION, "omit ptr"),
    ],
)
