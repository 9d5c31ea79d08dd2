"""Field tables of the Gateway API types (sigs.k8s.io/gateway-api apis/v1, v1.6.3, experimental
channel: the Go types hold every field of both channels), written from their Go struct tags.

The HTTPRoute and GRPCRoute kinds require nothing (their recipe has no required list); the TCP, UDP
and TLS routes require an authored parent's and backend's name. So the route tables are built by
:class:`RouteTypes` with or without that marker.
"""

from __future__ import annotations

from farm.core.kinds.engine import BOOL, INT32, STRING, F, Struct, list_of, map_of
from farm.core.kinds.meta import LABEL_SELECTOR

LOCAL_OBJECT_REFERENCE = Struct(
    "LocalObjectReference", [F("group", STRING), F("kind", STRING), F("name", STRING)]
)
HTTP_HEADER = Struct("HTTPHeader", [F("name", STRING), F("value", STRING)])
HTTP_HEADER_FILTER = Struct(
    "HTTPHeaderFilter",
    [
        F("set", list_of(HTTP_HEADER), "omit"),
        F("add", list_of(HTTP_HEADER), "omit"),
        F("remove", list_of(STRING), "omit"),
    ],
)
FRACTION = Struct("Fraction", [F("numerator", INT32), F("denominator", INT32, "omit ptr")])
HTTP_PATH_MODIFIER = Struct(
    "HTTPPathModifier",
    [
        F("type", STRING),
        F("replaceFullPath", STRING, "omit ptr"),
        F("replacePrefixMatch", STRING, "omit ptr"),
    ],
)
HTTP_REQUEST_REDIRECT_FILTER = Struct(
    "HTTPRequestRedirectFilter",
    [
        F("scheme", STRING, "omit ptr"),
        F("hostname", STRING, "omit ptr"),
        F("path", HTTP_PATH_MODIFIER, "omit ptr"),
        F("port", INT32, "omit ptr"),
        F("statusCode", INT32, "omit ptr"),
    ],
)
HTTP_URL_REWRITE_FILTER = Struct(
    "HTTPURLRewriteFilter",
    [F("hostname", STRING, "omit ptr"), F("path", HTTP_PATH_MODIFIER, "omit ptr")],
)
HTTP_CORS_FILTER = Struct(
    "HTTPCORSFilter",
    [
        F("allowOrigins", list_of(STRING), "omit"),
        F("allowCredentials", BOOL, "omit ptr"),
        F("allowMethods", list_of(STRING), "omit"),
        F("allowHeaders", list_of(STRING), "omit"),
        F("exposeHeaders", list_of(STRING), "omit"),
        F("maxAge", INT32, "omit ptr"),
    ],
)
SESSION_PERSISTENCE = Struct(
    "SessionPersistence",
    [
        F("sessionName", STRING, "omit ptr"),
        F("absoluteTimeout", STRING, "omit ptr"),
        F("idleTimeout", STRING, "omit ptr"),
        F("type", STRING, "omit ptr"),
        F("cookieConfig", Struct("CookieConfig", [F("lifetimeType", STRING, "omit ptr")]), "omit ptr"),
    ],
)
HTTP_VALUE_MATCH_FIELDS = [F("type", STRING, "omit ptr"), F("name", STRING), F("value", STRING)]
HTTP_ROUTE_MATCH = Struct(
    "HTTPRouteMatch",
    [
        F(
            "path",
            Struct("HTTPPathMatch", [F("type", STRING, "omit ptr"), F("value", STRING, "omit ptr")]),
            "omit ptr",
        ),
        F("headers", list_of(Struct("HTTPHeaderMatch", HTTP_VALUE_MATCH_FIELDS)), "omit"),
        F("queryParams", list_of(Struct("HTTPQueryParamMatch", HTTP_VALUE_MATCH_FIELDS)), "omit"),
        F("method", STRING, "omit ptr"),
    ],
)
HTTP_ROUTE_TIMEOUTS = Struct(
    "HTTPRouteTimeouts", [F("request", STRING, "omit ptr"), F("backendRequest", STRING, "omit ptr")]
)
HTTP_ROUTE_RETRY = Struct(
    "HTTPRouteRetry",
    [F("codes", list_of(INT32), "omit"), F("attempts", INT32, "omit ptr"), F("backoff", STRING, "omit ptr")],
)
GRPC_ROUTE_MATCH = Struct(
    "GRPCRouteMatch",
    [
        F(
            "method",
            Struct(
                "GRPCMethodMatch",
                [
                    F("type", STRING, "omit ptr"),
                    F("service", STRING, "omit ptr"),
                    F("method", STRING, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F("headers", list_of(Struct("GRPCHeaderMatch", HTTP_VALUE_MATCH_FIELDS)), "omit"),
    ],
)


class RouteTypes:
    """The route field tables, with the parent and backend ``name`` required (``"req"``) or not."""

    def __init__(self, name_flags: str) -> None:
        parent_reference = Struct(
            "ParentReference",
            [
                F("group", STRING, "omit ptr"),
                F("kind", STRING, "omit ptr"),
                F("namespace", STRING, "omit ptr"),
                F("name", STRING, name_flags),
                F("sectionName", STRING, "omit ptr"),
                F("port", INT32, "omit ptr"),
            ],
        )
        backend_object = [
            F("group", STRING, "omit ptr"),
            F("kind", STRING, "omit ptr"),
            F("name", STRING, name_flags),
            F("namespace", STRING, "omit ptr"),
            F("port", INT32, "omit ptr"),
        ]
        backend_object_reference = Struct("BackendObjectReference", backend_object)
        backend_ref_fields = [*backend_object, F("weight", INT32, "omit ptr")]
        self.backend_ref = Struct("BackendRef", backend_ref_fields)
        self.common = [
            F("parentRefs", list_of(parent_reference), "omit"),
            F("useDefaultGateways", STRING, "omit"),
        ]
        mirror = Struct(
            "HTTPRequestMirrorFilter",
            [
                F("backendRef", backend_object_reference),
                F("percent", INT32, "omit ptr"),
                F("fraction", FRACTION, "omit ptr"),
            ],
        )
        external_auth = Struct(
            "HTTPExternalAuthFilter",
            [
                F("protocol", STRING),
                F("backendRef", backend_object_reference),
                F(
                    "grpc",
                    Struct("GRPCAuthConfig", [F("allowedHeaders", list_of(STRING), "omit")]),
                    "omit ptr",
                ),
                F(
                    "http",
                    Struct(
                        "HTTPAuthConfig",
                        [
                            F("path", STRING, "omit"),
                            F("allowedHeaders", list_of(STRING), "omit"),
                            F("allowedResponseHeaders", list_of(STRING), "omit"),
                        ],
                    ),
                    "omit ptr",
                ),
                F("forwardBody", Struct("ForwardBodyConfig", [F("maxSize", INT32, "omit")]), "omit ptr"),
            ],
        )
        http_filter = Struct(
            "HTTPRouteFilter",
            [
                F("type", STRING),
                F("requestHeaderModifier", HTTP_HEADER_FILTER, "omit ptr"),
                F("responseHeaderModifier", HTTP_HEADER_FILTER, "omit ptr"),
                F("requestMirror", mirror, "omit ptr"),
                F("requestRedirect", HTTP_REQUEST_REDIRECT_FILTER, "omit ptr"),
                F("urlRewrite", HTTP_URL_REWRITE_FILTER, "omit ptr"),
                F("cors", HTTP_CORS_FILTER, "omit ptr"),
                F("externalAuth", external_auth, "omit ptr"),
                F("extensionRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),
            ],
        )
        self.http_filter = http_filter  # the httproute trait decodes its filters with it
        grpc_filter = Struct(
            "GRPCRouteFilter",
            [
                F("type", STRING),
                F("requestHeaderModifier", HTTP_HEADER_FILTER, "omit ptr"),
                F("responseHeaderModifier", HTTP_HEADER_FILTER, "omit ptr"),
                F("requestMirror", mirror, "omit ptr"),
                F("extensionRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),
            ],
        )
        http_rule = Struct(
            "HTTPRouteRule",
            [
                F("name", STRING, "omit ptr"),
                F("matches", list_of(HTTP_ROUTE_MATCH), "omit"),
                F("filters", list_of(http_filter), "omit"),
                F(
                    "backendRefs",
                    list_of(
                        Struct(
                            "HTTPBackendRef",
                            [*backend_ref_fields, F("filters", list_of(http_filter), "omit")],
                        )
                    ),
                    "omit",
                ),
                F("timeouts", HTTP_ROUTE_TIMEOUTS, "omit ptr"),
                F("retry", HTTP_ROUTE_RETRY, "omit ptr"),
                F("sessionPersistence", SESSION_PERSISTENCE, "omit ptr"),
            ],
        )
        grpc_rule = Struct(
            "GRPCRouteRule",
            [
                F("name", STRING, "omit ptr"),
                F("matches", list_of(GRPC_ROUTE_MATCH), "omit"),
                F("filters", list_of(grpc_filter), "omit"),
                F(
                    "backendRefs",
                    list_of(
                        Struct(
                            "GRPCBackendRef",
                            [*backend_ref_fields, F("filters", list_of(grpc_filter), "omit")],
                        )
                    ),
                    "omit",
                ),
                F("sessionPersistence", SESSION_PERSISTENCE, "omit ptr"),
            ],
        )
        self.http_route_spec = Struct(
            "HTTPRouteSpec",
            [*self.common, F("hostnames", list_of(STRING), "omit"), F("rules", list_of(http_rule), "omit")],
        )
        self.grpc_route_spec = Struct(
            "GRPCRouteSpec",
            [*self.common, F("hostnames", list_of(STRING), "omit"), F("rules", list_of(grpc_rule), "omit")],
        )


HTTP_ROUTES = RouteTypes("")  # httproute, grpcroute: nothing required
L4_ROUTES = RouteTypes("req")  # tcproute, udproute, tlsroute: an authored parent's / backend's name

L4_RULE = Struct(
    "TCPRouteRule",
    [F("name", STRING, "omit ptr"), F("backendRefs", list_of(L4_ROUTES.backend_ref), "omit req!")],
)
TCP_ROUTE_SPEC = Struct("TCPRouteSpec", [*L4_ROUTES.common, F("rules", list_of(L4_RULE), "req!")])
UDP_ROUTE_SPEC = Struct("UDPRouteSpec", [*L4_ROUTES.common, F("rules", list_of(L4_RULE), "req!")])
TLS_ROUTE_SPEC = Struct(
    "TLSRouteSpec",
    [*L4_ROUTES.common, F("hostnames", list_of(STRING), "req!"), F("rules", list_of(L4_RULE), "req!")],
)

# --- infrastructure kinds ------------------------------------------------------------------------

GROUP_KIND_NAME = [F("group", STRING, "req"), F("kind", STRING, "req"), F("name", STRING, "req")]

PARAMETERS_REFERENCE = Struct("ParametersReference", [*GROUP_KIND_NAME, F("namespace", STRING, "omit ptr")])
GATEWAY_CLASS_SPEC = Struct(
    "GatewayClassSpec",
    [
        F("controllerName", STRING, "req"),
        F("parametersRef", PARAMETERS_REFERENCE, "omit ptr"),
        F("description", STRING, "omit ptr"),
    ],
)

SECRET_OBJECT_REFERENCE = Struct(
    "SecretObjectReference",
    [
        F("group", STRING, "omit ptr"),
        F("kind", STRING, "omit ptr"),
        F("name", STRING, "req"),
        F("namespace", STRING, "omit ptr"),
    ],
)
NAMESPACES_SELECTOR_FIELDS = [F("from", STRING, "omit ptr"), F("selector", LABEL_SELECTOR, "omit ptr")]
ALLOWED_ROUTES = Struct(
    "AllowedRoutes",
    [
        F("namespaces", Struct("RouteNamespaces", NAMESPACES_SELECTOR_FIELDS), "omit ptr"),
        F(
            "kinds",
            list_of(Struct("RouteGroupKind", [F("group", STRING, "omit ptr"), F("kind", STRING, "req")])),
            "omit",
        ),
    ],
)
LISTENER_TLS_CONFIG = Struct(
    "ListenerTLSConfig",
    [
        F("mode", STRING, "omit ptr"),
        F("certificateRefs", list_of(SECRET_OBJECT_REFERENCE), "omit"),
        F("options", map_of(STRING), "omit"),
    ],
)
LISTENER = Struct(
    "Listener",
    [
        F("name", STRING, "req"),
        F("hostname", STRING, "omit ptr"),
        F("port", INT32, "req"),
        F("protocol", STRING, "req"),
        F("tls", LISTENER_TLS_CONFIG, "omit ptr"),
        F("allowedRoutes", ALLOWED_ROUTES, "omit ptr"),
    ],
)
# A ListenerSet's listener omits an empty name, port and protocol, so each is refused absent or empty.
LISTENER_ENTRY = Struct(
    "ListenerEntry",
    [
        F("name", STRING, "omit req!"),
        F("hostname", STRING, "omit ptr"),
        F("port", INT32, "omit req!"),
        F("protocol", STRING, "omit req!"),
        F("tls", LISTENER_TLS_CONFIG, "omit ptr"),
        F("allowedRoutes", ALLOWED_ROUTES, "omit ptr"),
    ],
)
GATEWAY_OBJECT_REFERENCE = Struct("ObjectReference", [*GROUP_KIND_NAME, F("namespace", STRING, "omit ptr")])
FRONTEND_TLS_VALIDATION = Struct(
    "FrontendTLSValidation",
    [
        F("caCertificateRefs", list_of(GATEWAY_OBJECT_REFERENCE), "req"),
        F("mode", STRING, "omit", default='"AllowValidOnly"'),
    ],
)
TLS_CONFIG = Struct("TLSConfig", [F("validation", FRONTEND_TLS_VALIDATION, "omit ptr")])
FRONTEND_TLS_CONFIG = Struct(
    "FrontendTLSConfig",
    [
        F("default", TLS_CONFIG, "req"),
        F(
            "perPort",
            list_of(Struct("TLSPortConfig", [F("port", INT32, "req"), F("tls", TLS_CONFIG, "req")])),
            "omit",
        ),
    ],
)
GATEWAY_TLS_CONFIG = Struct(
    "GatewayTLSConfig",
    [
        F(
            "backend",
            Struct("GatewayBackendTLS", [F("clientCertificateRef", SECRET_OBJECT_REFERENCE, "omit ptr")]),
            "omit ptr",
        ),
        F("frontend", FRONTEND_TLS_CONFIG, "omit ptr"),
    ],
)
GATEWAY_INFRASTRUCTURE = Struct(
    "GatewayInfrastructure",
    [
        F("labels", map_of(STRING), "omit"),
        F("annotations", map_of(STRING), "omit"),
        F("parametersRef", Struct("LocalParametersReference", GROUP_KIND_NAME), "omit ptr"),
    ],
)
GATEWAY_SPEC = Struct(
    "GatewaySpec",
    [
        F("gatewayClassName", STRING, "req"),
        F("listeners", list_of(LISTENER), "req"),
        F(
            "addresses",
            list_of(
                Struct("GatewaySpecAddress", [F("type", STRING, "omit ptr"), F("value", STRING, "omit")])
            ),
            "omit",
        ),
        F("infrastructure", GATEWAY_INFRASTRUCTURE, "omit ptr"),
        F(
            "allowedListeners",
            Struct(
                "AllowedListeners",
                [F("namespaces", Struct("ListenerNamespaces", NAMESPACES_SELECTOR_FIELDS), "omit ptr")],
            ),
            "omit ptr",
        ),
        F("tls", GATEWAY_TLS_CONFIG, "omit ptr"),
        F("defaultScope", STRING, "omit"),
    ],
)

LISTENER_SET_SPEC = Struct(
    "ListenerSetSpec",
    [
        F(
            "parentRef",
            Struct(
                "ParentGatewayReference",
                [
                    F("group", STRING, "omit ptr"),
                    F("kind", STRING, "omit ptr"),
                    F("name", STRING, "req"),
                    F("namespace", STRING, "omit ptr"),
                ],
            ),
            "req",
        ),
        F("listeners", list_of(LISTENER_ENTRY), "omit req!"),
    ],
)

REFERENCE_GRANT_SPEC = Struct(
    "ReferenceGrantSpec",
    [
        F(
            "from",
            list_of(
                Struct(
                    "ReferenceGrantFrom",
                    [F("group", STRING, "req"), F("kind", STRING, "req"), F("namespace", STRING, "req")],
                )
            ),
            "req",
        ),
        F(
            "to",
            list_of(
                Struct(
                    "ReferenceGrantTo",
                    [F("group", STRING, "req"), F("kind", STRING, "req"), F("name", STRING, "omit ptr")],
                )
            ),
            "req",
        ),
    ],
)

BACKEND_TLS_POLICY_SPEC = Struct(
    "BackendTLSPolicySpec",
    [
        F(
            "targetRefs",
            list_of(
                Struct(
                    "LocalPolicyTargetReferenceWithSectionName",
                    [*GROUP_KIND_NAME, F("sectionName", STRING, "omit ptr")],
                )
            ),
            "req!",
        ),
        F(
            "validation",
            Struct(
                "BackendTLSPolicyValidation",
                [
                    F("caCertificateRefs", list_of(Struct("LocalObjectReference", GROUP_KIND_NAME)), "omit"),
                    F("wellKnownCACertificates", STRING, "omit ptr"),
                    F("hostname", STRING, "req"),
                    F(
                        "subjectAltNames",
                        list_of(
                            Struct(
                                "SubjectAltName",
                                [
                                    F("type", STRING, "req"),
                                    F("hostname", STRING, "omit"),
                                    F("uri", STRING, "omit"),
                                ],
                            )
                        ),
                        "omit",
                    ),
                ],
            ),
            "req",
        ),
        F("options", map_of(STRING), "omit"),
    ],
)
