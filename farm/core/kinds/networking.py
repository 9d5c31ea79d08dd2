"""Field tables of the Kubernetes networking types (k8s.io/api networking/v1 and discovery/v1),
written from their Go struct tags: omitempty, pointers and the API's required markers."""

from __future__ import annotations

from farm.core.kinds.engine import BOOL, INT32, INT_OR_STRING, STRING, F, Struct, list_of, map_of
from farm.core.kinds.meta import LABEL_SELECTOR

TYPED_LOCAL_OBJECT_REFERENCE = Struct(
    "TypedLocalObjectReference",
    [F("apiGroup", STRING, "ptr"), F("kind", STRING), F("name", STRING)],
)

SERVICE_BACKEND_PORT = Struct("ServiceBackendPort", [F("name", STRING, "omit"), F("number", INT32, "omit")])

INGRESS_SERVICE_BACKEND = Struct(
    "IngressServiceBackend", [F("name", STRING), F("port", SERVICE_BACKEND_PORT, "omit")]
)

INGRESS_BACKEND = Struct(
    "IngressBackend",
    [
        F("service", INGRESS_SERVICE_BACKEND, "omit ptr"),
        F("resource", TYPED_LOCAL_OBJECT_REFERENCE, "omit ptr"),
    ],
)

HTTP_INGRESS_PATH = Struct(
    "HTTPIngressPath",
    [F("path", STRING, "omit"), F("pathType", STRING, "ptr"), F("backend", INGRESS_BACKEND)],
)

HTTP_INGRESS_RULE_VALUE = Struct("HTTPIngressRuleValue", [F("paths", list_of(HTTP_INGRESS_PATH))])

INGRESS_RULE = Struct(
    "IngressRule",
    [F("host", STRING, "omit"), F("http", HTTP_INGRESS_RULE_VALUE, "omit ptr")],  # IngressRuleValue inlined
)

INGRESS_TLS = Struct("IngressTLS", [F("hosts", list_of(STRING), "omit"), F("secretName", STRING, "omit")])

INGRESS_SPEC = Struct(
    "IngressSpec",
    [
        F("ingressClassName", STRING, "omit ptr"),
        F("defaultBackend", INGRESS_BACKEND, "omit ptr"),
        F("tls", list_of(INGRESS_TLS), "omit"),
        F("rules", list_of(INGRESS_RULE), "omit"),
    ],
)

INGRESS_CLASS_PARAMETERS_REFERENCE = Struct(
    "IngressClassParametersReference",
    [
        F("apiGroup", STRING, "omit ptr"),
        F("kind", STRING),
        F("name", STRING),
        F("scope", STRING, "ptr"),
        F("namespace", STRING, "omit ptr"),
    ],
)

INGRESS_CLASS_SPEC = Struct(
    "IngressClassSpec",
    [
        # The type marks controller optional; the API server requires it (seed: ingressclass).
        F("controller", STRING, "omit req"),
        F("parameters", INGRESS_CLASS_PARAMETERS_REFERENCE, "omit ptr"),
    ],
)

IP_BLOCK = Struct("IPBlock", [F("cidr", STRING), F("except", list_of(STRING), "omit")])

NETWORK_POLICY_PEER = Struct(
    "NetworkPolicyPeer",
    [
        F("podSelector", LABEL_SELECTOR, "omit ptr"),
        F("namespaceSelector", LABEL_SELECTOR, "omit ptr"),
        F("ipBlock", IP_BLOCK, "omit ptr"),
    ],
)

NETWORK_POLICY_PORT = Struct(
    "NetworkPolicyPort",
    [
        F("protocol", STRING, "omit ptr"),
        F("port", INT_OR_STRING, "omit ptr"),
        F("endPort", INT32, "omit ptr"),
    ],
)

NETWORK_POLICY_INGRESS_RULE = Struct(
    "NetworkPolicyIngressRule",
    [F("ports", list_of(NETWORK_POLICY_PORT), "omit"), F("from", list_of(NETWORK_POLICY_PEER), "omit")],
)

NETWORK_POLICY_EGRESS_RULE = Struct(
    "NetworkPolicyEgressRule",
    [F("ports", list_of(NETWORK_POLICY_PORT), "omit"), F("to", list_of(NETWORK_POLICY_PEER), "omit")],
)

NETWORK_POLICY_SPEC = Struct(
    "NetworkPolicySpec",
    [
        F("podSelector", LABEL_SELECTOR, "omit"),
        F("ingress", list_of(NETWORK_POLICY_INGRESS_RULE), "omit"),
        F("egress", list_of(NETWORK_POLICY_EGRESS_RULE), "omit"),
        F(
            "policyTypes",
            list_of(STRING),
            "omit",
            default="(Ingress, and Egress when egress holds a rule)",
        ),
    ],
)

SERVICE_CIDR_SPEC = Struct("ServiceCIDRSpec", [F("cidrs", list_of(STRING), "omit req!")])

OBJECT_REFERENCE = Struct(
    "ObjectReference",
    [
        F("kind", STRING, "omit"),
        F("namespace", STRING, "omit"),
        F("name", STRING, "omit"),
        F("uid", STRING, "omit"),
        F("apiVersion", STRING, "omit"),
        F("resourceVersion", STRING, "omit"),
        F("fieldPath", STRING, "omit"),
    ],
)

ENDPOINT_CONDITIONS = Struct(
    "EndpointConditions",
    [F("ready", BOOL, "omit ptr"), F("serving", BOOL, "omit ptr"), F("terminating", BOOL, "omit ptr")],
)

FOR_ZONE = Struct("ForZone", [F("name", STRING, "req")])
FOR_NODE = Struct("ForNode", [F("name", STRING, "req")])

ENDPOINT_HINTS = Struct(
    "EndpointHints",
    [F("forZones", list_of(FOR_ZONE), "omit"), F("forNodes", list_of(FOR_NODE), "omit")],
)

ENDPOINT = Struct(
    "Endpoint",
    [
        F("addresses", list_of(STRING), "req"),
        F("conditions", ENDPOINT_CONDITIONS, "omit"),
        F("hostname", STRING, "omit ptr"),
        F("targetRef", OBJECT_REFERENCE, "omit ptr"),
        F("deprecatedTopology", map_of(STRING), "omit"),
        F("nodeName", STRING, "omit ptr"),
        F("zone", STRING, "omit ptr"),
        F("hints", ENDPOINT_HINTS, "omit ptr"),
    ],
)

ENDPOINT_PORT = Struct(
    "EndpointPort",
    [
        F("name", STRING, "omit ptr"),
        F("protocol", STRING, "omit ptr"),
        F("port", INT32, "omit ptr"),
        F("appProtocol", STRING, "omit ptr"),
    ],
)

# The EndpointSlice object's own fields (the kind has no spec type).
ENDPOINT_SLICE = Struct(
    "EndpointSlice",
    [
        F("addressType", STRING, "req"),
        F("endpoints", list_of(ENDPOINT)),
        F("ports", list_of(ENDPOINT_PORT)),
    ],
)
