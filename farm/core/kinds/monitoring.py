"""Field tables of the Prometheus operator's monitoring.coreos.com/v1 scrape and rule types
(ServiceMonitorSpec, PodMonitorSpec, ProbeSpec, PrometheusRuleSpec and what they hold), written from
the Go struct tags of prometheus-operator v0.94.1 (pkg/apis/monitoring/v1), with the field lists
checked against the @kubernetes-models/prometheus-operator schema package (npm), which is generated
from the same Go types. The Kubernetes types they embed come from the core/v1 tables.

The shared HTTP client types (SafeTLSConfig, OAuth2, BasicAuth, SafeAuthorization, ProxyConfig,
RelabelConfig) are used by the workload kinds' tables too (``monitoring_workloads``).

Notes on Go encoding that the tables reproduce:

- ``Duration`` of this API is a string type, carried as written (``60s`` stays ``60s``).
- Counts and limits are ``*uint64``: an authored 0 is kept, a negative number refused.
- The two API defaults that are strings (a prober's ``path`` and a relabeling rule's ``action``) sit on
  ``omitempty`` non-pointer fields, so an authored ``""`` is refused.
"""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import go_type_name
from farm.core.kinds.corev1_pod import STRUCTS as CORE
from farm.core.kinds.engine import (
    BOOL,
    INT32,
    INT64,
    INT_OR_STRING,
    QUANTITY,
    STRING,
    Api,
    Custom,
    F,
    Struct,
    list_of,
    map_of,
)
from farm.core.kinds.meta import LABEL_SELECTOR

PROMETHEUS_OPERATOR = Api("Prometheus operator")

_UINT64_MAX = 2**64 - 1


def _decode_uint64(value: Any, path: str, api: Api) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(f"{path}: must be an integer, got {go_type_name(value)}")
    if not 0 <= value <= _UINT64_MAX:
        raise FieldError(f"{path}: must be an integer within uint64 range, got {value}")
    return value


UINT64 = Custom("uint64", _decode_uint64)

STRINGS = list_of(STRING)
STRING_MAP = map_of(STRING)
SECRET_KEY_SELECTOR = CORE["SecretKeySelector"]
CONFIG_MAP_KEY_SELECTOR = CORE["ConfigMapKeySelector"]

# --- shared HTTP client types ------------------------------------------------------------------------

SECRET_OR_CONFIG_MAP = Struct(
    "SecretOrConfigMap",
    [
        F("secret", SECRET_KEY_SELECTOR, "omit ptr"),
        F("configMap", CONFIG_MAP_KEY_SELECTOR, "omit ptr"),
    ],
)

SAFE_TLS_FIELDS = [
    F("ca", SECRET_OR_CONFIG_MAP, "omit"),
    F("cert", SECRET_OR_CONFIG_MAP, "omit"),
    F("keySecret", SECRET_KEY_SELECTOR, "omit ptr"),
    F("serverName", STRING, "omit ptr"),
    F("insecureSkipVerify", BOOL, "omit ptr"),
    F("minVersion", STRING, "omit ptr"),
    F("maxVersion", STRING, "omit ptr"),
]
SAFE_TLS_CONFIG = Struct("SafeTLSConfig", SAFE_TLS_FIELDS)
TLS_FILE_FIELDS = [
    F("caFile", STRING, "omit"),
    F("certFile", STRING, "omit"),
    F("keyFile", STRING, "omit"),
]
TLS_CONFIG = Struct("TLSConfig", SAFE_TLS_FIELDS + TLS_FILE_FIELDS)

PROXY_FIELDS = [
    F("proxyUrl", STRING, "omit ptr"),
    F("noProxy", STRING, "omit ptr"),
    F("proxyFromEnvironment", BOOL, "omit ptr"),
    F("proxyConnectHeader", map_of(list_of(SECRET_KEY_SELECTOR)), "omit"),
]

OAUTH2 = Struct(
    "OAuth2",
    [
        F("clientId", SECRET_OR_CONFIG_MAP, "req"),
        F("clientSecret", SECRET_KEY_SELECTOR, "req"),
        F("tokenUrl", STRING, "req"),
        F("scopes", STRINGS, "omit"),
        F("endpointParams", STRING_MAP, "omit"),
        F("tlsConfig", SAFE_TLS_CONFIG, "omit ptr"),
        *PROXY_FIELDS,
    ],
)

BASIC_AUTH = Struct(
    "BasicAuth",
    [F("username", SECRET_KEY_SELECTOR, "omit"), F("password", SECRET_KEY_SELECTOR, "omit")],
)

SAFE_AUTHORIZATION = Struct(
    "SafeAuthorization",
    [F("type", STRING, "omit"), F("credentials", SECRET_KEY_SELECTOR, "omit ptr")],
)

# HTTPConfig without its tlsConfig, which is a TLSConfig on a ServiceMonitor endpoint and a
# SafeTLSConfig elsewhere.
HTTP_CLIENT_FIELDS = [
    F("authorization", SAFE_AUTHORIZATION, "omit ptr"),
    F("basicAuth", BASIC_AUTH, "omit ptr"),
    F("oauth2", OAUTH2, "omit ptr"),
    F("bearerTokenSecret", SECRET_KEY_SELECTOR, "omit ptr"),
    *PROXY_FIELDS,
    F("followRedirects", BOOL, "omit ptr"),
    F("enableHttp2", BOOL, "omit ptr"),
]

RELABEL_CONFIG = Struct(
    "RelabelConfig",
    [
        F("sourceLabels", STRINGS, "omit"),
        F("separator", STRING, "omit ptr"),
        F("targetLabel", STRING, "omit"),
        F("regex", STRING, "omit"),
        F("modulus", UINT64, "omit"),
        F("replacement", STRING, "omit ptr"),
        F("action", STRING, "omit", default='"replace"'),
    ],
)
RELABEL_CONFIGS = list_of(RELABEL_CONFIG)

NAMESPACE_SELECTOR = Struct(
    "NamespaceSelector",
    [F("any", BOOL, "omit"), F("matchNames", STRINGS, "omit")],
)

ATTACH_METADATA = Struct("AttachMetadata", [F("node", BOOL, "omit ptr")])

# --- scrape settings the three scrape kinds share ------------------------------------------------------

SCRAPE_SETTINGS = [
    F("sampleLimit", UINT64, "omit ptr"),
    F("scrapeProtocols", STRINGS, "omit"),
    F("fallbackScrapeProtocol", STRING, "omit ptr"),
    F("targetLimit", UINT64, "omit ptr"),
    F("labelLimit", UINT64, "omit ptr"),
    F("labelNameLengthLimit", UINT64, "omit ptr"),
    F("labelValueLengthLimit", UINT64, "omit ptr"),
    F("scrapeNativeHistograms", BOOL, "omit ptr"),
    F("scrapeClassicHistograms", BOOL, "omit ptr"),
    F("nativeHistogramBucketLimit", UINT64, "omit ptr"),
    F("nativeHistogramMinBucketFactor", QUANTITY, "omit ptr"),
    F("convertClassicHistogramsToNHCB", BOOL, "omit ptr"),
    F("keepDroppedTargets", UINT64, "omit ptr"),
    F("scrapeClass", STRING, "omit ptr"),
]

_ENDPOINT_COMMON = [
    F("port", STRING, "omit"),
    F("targetPort", INT_OR_STRING, "omit ptr"),
    F("path", STRING, "omit"),
    F("scheme", STRING, "omit ptr"),
    F("params", map_of(STRINGS), "omit"),
    F("interval", STRING, "omit"),
    F("scrapeTimeout", STRING, "omit"),
    F("honorLabels", BOOL, "omit"),
    F("honorTimestamps", BOOL, "omit ptr"),
    F("trackTimestampsStaleness", BOOL, "omit ptr"),
    F("metricRelabelings", RELABEL_CONFIGS, "omit"),
    F("relabelings", RELABEL_CONFIGS, "omit"),
    F("filterRunning", BOOL, "omit ptr"),
    *HTTP_CLIENT_FIELDS,
]

ENDPOINT = Struct(
    "Endpoint",
    [
        *_ENDPOINT_COMMON,
        F("bearerTokenFile", STRING, "omit"),
        F("tlsConfig", TLS_CONFIG, "omit ptr"),
    ],
)

POD_METRICS_ENDPOINT = Struct(
    "PodMetricsEndpoint",
    [
        *_ENDPOINT_COMMON,
        F("portNumber", INT32, "omit ptr"),
        F("tlsConfig", SAFE_TLS_CONFIG, "omit ptr"),
    ],
)

_MONITOR_COMMON = [
    F("jobLabel", STRING, "omit"),
    F("podTargetLabels", STRINGS, "omit"),
    F("selector", LABEL_SELECTOR, "req"),
    F("selectorMechanism", STRING, "omit ptr"),
    F("namespaceSelector", NAMESPACE_SELECTOR, "omit"),
    F("attachMetadata", ATTACH_METADATA, "omit ptr"),
    F("bodySizeLimit", STRING, "omit ptr"),
    *SCRAPE_SETTINGS,
]

SERVICE_MONITOR_SPEC = Struct(
    "ServiceMonitorSpec",
    [
        *_MONITOR_COMMON,
        F("targetLabels", STRINGS, "omit"),
        F("endpoints", list_of(ENDPOINT), "req"),
        F("serviceDiscoveryRole", STRING, "omit ptr"),
    ],
)

POD_MONITOR_SPEC = Struct(
    "PodMonitorSpec",
    [*_MONITOR_COMMON, F("podMetricsEndpoints", list_of(POD_METRICS_ENDPOINT))],
)

# --- Probe -----------------------------------------------------------------------------------------

PROBER_SPEC = Struct(
    "ProberSpec",
    [
        F("url", STRING, "req!"),
        F("scheme", STRING, "omit ptr"),
        F("path", STRING, "omit", default='"/probe"'),
        *PROXY_FIELDS,
    ],
)

PROBE_TARGET_STATIC_CONFIG = Struct(
    "ProbeTargetStaticConfig",
    [
        F("static", STRINGS, "omit"),
        F("labels", STRING_MAP, "omit"),
        F("relabelingConfigs", RELABEL_CONFIGS, "omit"),
    ],
)

PROBE_TARGET_INGRESS = Struct(
    "ProbeTargetIngress",
    [
        F("selector", LABEL_SELECTOR, "omit"),
        F("namespaceSelector", NAMESPACE_SELECTOR, "omit"),
        F("relabelingConfigs", RELABEL_CONFIGS, "omit"),
    ],
)

PROBE_TARGETS = Struct(
    "ProbeTargets",
    [
        F("staticConfig", PROBE_TARGET_STATIC_CONFIG, "omit ptr"),
        F("ingress", PROBE_TARGET_INGRESS, "omit ptr"),
    ],
)

PROBE_PARAM = Struct("ProbeParam", [F("name", STRING, "omit req!"), F("values", STRINGS, "omit")])

PROBE_SPEC = Struct(
    "ProbeSpec",
    [
        F("jobName", STRING, "omit"),
        F("prober", PROBER_SPEC, "omit"),
        F("module", STRING, "omit"),
        F("targets", PROBE_TARGETS, "omit"),
        F("interval", STRING, "omit"),
        F("scrapeTimeout", STRING, "omit"),
        F("tlsConfig", SAFE_TLS_CONFIG, "omit ptr"),
        F("metricRelabelings", RELABEL_CONFIGS, "omit"),
        F("params", list_of(PROBE_PARAM), "omit"),
        *HTTP_CLIENT_FIELDS,
        *SCRAPE_SETTINGS,
    ],
)

# --- PrometheusRule ----------------------------------------------------------------------------------

RULE = Struct(
    "Rule",
    [
        F("record", STRING, "omit"),
        F("alert", STRING, "omit"),
        F("expr", INT_OR_STRING, "req"),
        F("for", STRING, "omit ptr"),
        F("keep_firing_for", STRING, "omit ptr"),
        F("labels", STRING_MAP, "omit"),
        F("annotations", STRING_MAP, "omit"),
    ],
)

RULE_GROUP = Struct(
    "RuleGroup",
    [
        F("name", STRING, "req"),
        F("labels", STRING_MAP, "omit"),
        F("interval", STRING, "omit ptr"),
        F("query_offset", STRING, "omit ptr"),
        F("rules", list_of(RULE), "omit"),
        F("partial_response_strategy", STRING, "omit"),
        F("limit", INT64, "omit ptr"),
    ],
)

PROMETHEUS_RULE_SPEC = Struct("PrometheusRuleSpec", [F("groups", list_of(RULE_GROUP), "omit")])
