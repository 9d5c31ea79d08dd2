"""Field tables of apiregistration.k8s.io/v1 APIServiceSpec and admissionregistration.k8s.io/v1
webhook configurations (k8s.io/api and kube-aggregator v0.37.1), with the API's +required markers."""

from __future__ import annotations

from farm.core.kinds.engine import BOOL, INT32, STRING, F, Struct, list_of
from farm.core.kinds.meta import LABEL_SELECTOR

API_SERVICE_REFERENCE = Struct(
    "ServiceReference",
    [F("namespace", STRING, "omit"), F("name", STRING, "omit"), F("port", INT32, "omit ptr")],
)

API_SERVICE_SPEC = Struct(
    "APIServiceSpec",
    [
        F("service", API_SERVICE_REFERENCE, "omit ptr"),
        F("group", STRING, "omit"),
        F("version", STRING, "omit"),
        F("insecureSkipTLSVerify", BOOL, "omit"),
        F("caBundle", STRING, "omit"),  # []byte: base64, checked by the kind
        F("groupPriorityMinimum", INT32, "req"),
        F("versionPriority", INT32, "req"),
    ],
)

WEBHOOK_SERVICE_REFERENCE = Struct(
    "ServiceReference",
    [
        F("namespace", STRING, "req"),
        F("name", STRING, "req"),
        F("path", STRING, "omit ptr"),
        F("port", INT32, "omit ptr"),
    ],
)

WEBHOOK_CLIENT_CONFIG = Struct(
    "WebhookClientConfig",
    [
        F("url", STRING, "omit ptr"),
        F("service", WEBHOOK_SERVICE_REFERENCE, "omit ptr"),
        F("caBundle", STRING, "omit"),  # []byte: base64, checked by the kind
    ],
)

RULE_WITH_OPERATIONS = Struct(
    "RuleWithOperations",
    [
        F("operations", list_of(STRING), "omit"),
        F("apiGroups", list_of(STRING), "omit"),
        F("apiVersions", list_of(STRING), "omit"),
        F("resources", list_of(STRING), "omit"),
        F("scope", STRING, "omit ptr"),
    ],
)

MATCH_CONDITION = Struct("MatchCondition", [F("name", STRING, "req"), F("expression", STRING, "req")])

_WEBHOOK_FIELDS = [
    F("name", STRING, "req"),
    F("clientConfig", WEBHOOK_CLIENT_CONFIG, "req"),
    F("rules", list_of(RULE_WITH_OPERATIONS), "omit"),
    F("failurePolicy", STRING, "omit ptr"),
    F("matchPolicy", STRING, "omit ptr"),
    F("namespaceSelector", LABEL_SELECTOR, "omit ptr"),
    F("objectSelector", LABEL_SELECTOR, "omit ptr"),
    F("sideEffects", STRING, "ptr req"),
    F("timeoutSeconds", INT32, "omit ptr"),
    F("admissionReviewVersions", list_of(STRING), "req"),
    F("matchConditions", list_of(MATCH_CONDITION), "omit"),
]

VALIDATING_WEBHOOK = Struct("ValidatingWebhook", _WEBHOOK_FIELDS)

MUTATING_WEBHOOK = Struct("MutatingWebhook", [*_WEBHOOK_FIELDS, F("reinvocationPolicy", STRING, "omit ptr")])

VALIDATING_WEBHOOK_CONFIGURATION = Struct(
    "ValidatingWebhookConfiguration", [F("webhooks", list_of(VALIDATING_WEBHOOK), "omit")]
)

MUTATING_WEBHOOK_CONFIGURATION = Struct(
    "MutatingWebhookConfiguration", [F("webhooks", list_of(MUTATING_WEBHOOK), "omit")]
)
