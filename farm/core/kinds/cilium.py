"""Field tables of Cilium's cilium.io/v2 types (pkg/policy/api for a policy rule, pkg/k8s/apis/
cilium.io/v2 for the other objects), written from their Go struct tags.

Cilium's endpoint selector, an ICMP field and a rule label unmarshal themselves; the seed has the
kind check them by path all the same, so the selector is a ``self_decoding`` struct (an unknown key
is ``<path>: unknown field``) and the other two are :class:`Custom` types.
"""

from __future__ import annotations

import json
from typing import Any

from farm.core.errors import FieldError
from farm.core.fields import go_type_name
from farm.core.kinds.engine import (
    BOOL,
    INT32,
    INT64,
    INT_OR_STRING,
    STRING,
    Api,
    Custom,
    F,
    Struct,
    decode_value,
    join,
    list_of,
    map_of,
    match_keys,
)
from farm.core.kinds.meta import LABEL_SELECTOR

# --- self-decoding types ---------------------------------------------------------------------------

SELECTOR_REQUIREMENT = Struct(
    "LabelSelectorRequirement",
    [F("key", STRING, "req"), F("operator", STRING, "req"), F("values", list_of(STRING), "omit")],
    self_decoding=True,
)
ENDPOINT_SELECTOR = Struct(
    "EndpointSelector",
    [
        F("matchLabels", map_of(STRING), "omit"),
        F("matchExpressions", list_of(SELECTOR_REQUIREMENT), "omit"),
    ],
    self_decoding=True,
)

_ICMP_FIELD = Struct(
    "ICMPField", [F("family", STRING, "omit"), F("type", INT_OR_STRING, "ptr")], self_decoding=True
)


def _decode_icmp_field(value: Any, path: str, api: Api) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FieldError(f"{path}: must be an object, got {go_type_name(value)}")
    assigned = match_keys(value, _ICMP_FIELD, path)
    if assigned.get("type", (None, None))[1] is None:
        # Cilium's decoder dereferences the type without a check: the seed names the panic.
        raise FieldError(
            f"the decoder of api.ICMPField panicked on this value: {json.dumps(value, sort_keys=True)} "
            "(runtime error: invalid memory address or nil pointer dereference)"
        )
    out: dict[str, Any] = {"type": decode_value(assigned["type"][1], INT_OR_STRING, join(path, "type"), api)}
    family = assigned.get("family", (None, None))[1]
    if family is not None:
        family = decode_value(family, STRING, join(path, "family"), api)
        if family:
            out["family"] = family
    return out


_LABEL = Struct(
    "Label", [F("key", STRING, "req"), F("value", STRING, "omit"), F("source", STRING)], self_decoding=True
)


def _parse_label(text: str) -> dict[str, Any]:
    """labels.ParseLabel: ``[source:]key[=value]``; no source is ``unspec``."""
    source, key = "unspec", text
    colon, equals = text.find(":"), text.find("=")
    if colon > 0 and (equals < 0 or colon < equals):
        source, key = text[:colon], text[colon + 1 :]
    key, _, value = key.partition("=")
    out = {"key": key, "source": source}
    if value:
        out["value"] = value
    return out


def _decode_label(value: Any, path: str, api: Api) -> dict[str, Any]:
    if isinstance(value, str):
        return _parse_label(value)
    if not isinstance(value, dict):
        raise FieldError(f"{path}: must be a string or an object, got {go_type_name(value)}")
    return decode_value(value, _LABEL, path, api)


ICMP_FIELD = Custom("ICMPField", _decode_icmp_field)
LABEL = Custom("Label", _decode_label)

# --- a policy rule (api.Rule) ----------------------------------------------------------------------

SECRET = Struct("Secret", [F("namespace", STRING, "omit"), F("name", STRING, "req")])
TLS_CONTEXT = Struct(
    "TLSContext",
    [
        F("secret", SECRET, "ptr req"),
        F("trustedCA", STRING, "omit"),
        F("certificate", STRING, "omit"),
        F("privateKey", STRING, "omit"),
    ],
)
LISTENER = Struct(
    "Listener",
    [
        F(
            "envoyConfig",
            Struct("EnvoyConfig", [F("kind", STRING, "omit req"), F("name", STRING, "req")]),
            "ptr req",
        ),
        F("name", STRING, "req"),
        F("priority", INT32, "omit req"),  # launcher requires it: the API takes 1..100, the type omits 0
    ],
)
HEADER_MATCH = Struct(
    "HeaderMatch",
    [
        F("mismatch", STRING, "omit"),
        F("name", STRING, "req"),
        F("secret", SECRET, "omit ptr"),
        F("value", STRING, "omit"),
    ],
)
PORT_RULE_HTTP = Struct(
    "PortRuleHTTP",
    [
        F("path", STRING, "omit"),
        F("method", STRING, "omit"),
        F("host", STRING, "omit"),
        F("headers", list_of(STRING), "omit"),
        F("headerMatches", list_of(HEADER_MATCH), "omit"),
    ],
)
FQDN_SELECTOR = Struct("FQDNSelector", [F("matchName", STRING, "omit"), F("matchPattern", STRING, "omit")])
KAFKA_RULE = Struct(
    "PortRule",
    [F(name, STRING, "omit") for name in ("role", "apiKey", "apiVersion", "clientID", "topic")],
)
L7_RULES = Struct(
    "L7Rules",
    [
        F("http", list_of(PORT_RULE_HTTP), "omit"),
        F("kafka", list_of(KAFKA_RULE), "omit"),
        F("dns", list_of(FQDN_SELECTOR), "omit"),
        F("l7proto", STRING, "omit"),
        F("l7", list_of(map_of(STRING)), "omit"),
    ],
)
PORT_PROTOCOL = Struct(
    "PortProtocol", [F("port", STRING, "omit"), F("endPort", INT32, "omit"), F("protocol", STRING, "omit")]
)
PORT_RULE = Struct(
    "PortRule",
    [
        F("ports", list_of(PORT_PROTOCOL), "omit"),
        F("terminatingTLS", TLS_CONTEXT, "omit ptr"),
        F("originatingTLS", TLS_CONTEXT, "omit ptr"),
        F("serverNames", list_of(STRING), "omit"),
        F("listener", LISTENER, "omit ptr"),
        F("rules", L7_RULES, "omit ptr"),
    ],
)
PORT_DENY_RULE = Struct("PortDenyRule", [F("ports", list_of(PORT_PROTOCOL), "omit")])
ICMP_RULE = Struct("ICMPRule", [F("fields", list_of(ICMP_FIELD), "omit")])
CIDR_RULE = Struct(
    "CIDRRule",
    [
        F("cidr", STRING, "omit"),
        F("cidrGroupRef", STRING, "omit"),
        F("cidrGroupSelector", ENDPOINT_SELECTOR, "omit ptr"),
        F("except", list_of(STRING), "omit"),
    ],
)
GROUPS = Struct(
    "Groups",
    [
        F(
            "aws",
            Struct(
                "AWSGroup",
                [
                    F("labels", map_of(STRING), "omit"),
                    F("securityGroupsIds", list_of(STRING), "omit"),
                    F("securityGroupsNames", list_of(STRING), "omit"),
                    F("region", STRING, "omit"),
                ],
            ),
            "omit ptr",
        )
    ],
)
SERVICE = Struct(
    "Service",
    [
        F(
            "k8sServiceSelector",
            Struct(
                "K8sServiceSelectorNamespace",
                [F("selector", ENDPOINT_SELECTOR, "req"), F("namespace", STRING, "omit")],
            ),
            "omit ptr",
        ),
        F(
            "k8sService",
            Struct("K8sServiceNamespace", [F("serviceName", STRING, "omit"), F("namespace", STRING, "omit")]),
            "omit ptr",
        ),
    ],
)
AUTHENTICATION = Struct("Authentication", [F("mode", STRING, "req")])


def _peers(prefix: str) -> list[F]:
    """IngressCommonRule (prefix "from") or EgressCommonRule (prefix "to")."""
    fields = [
        F(f"{prefix}Endpoints", list_of(ENDPOINT_SELECTOR), "omit"),
        F(f"{prefix}Requires", list_of(ENDPOINT_SELECTOR), "omit"),
        F(f"{prefix}CIDR", list_of(STRING), "omit"),
        F(f"{prefix}CIDRSet", list_of(CIDR_RULE), "omit"),
        F(f"{prefix}Entities", list_of(STRING), "omit"),
    ]
    if prefix == "to":
        fields.append(F("toServices", list_of(SERVICE), "omit"))
    fields += [
        F(f"{prefix}Groups", list_of(GROUPS), "omit"),
        F(f"{prefix}Nodes", list_of(ENDPOINT_SELECTOR), "omit"),
    ]
    return fields


INGRESS_RULE = Struct(
    "IngressRule",
    [
        *_peers("from"),
        F("toPorts", list_of(PORT_RULE), "omit"),
        F("icmps", list_of(ICMP_RULE), "omit"),
        F("authentication", AUTHENTICATION, "omit ptr"),
    ],
)
INGRESS_DENY_RULE = Struct(
    "IngressDenyRule",
    [*_peers("from"), F("toPorts", list_of(PORT_DENY_RULE), "omit"), F("icmps", list_of(ICMP_RULE), "omit")],
)
EGRESS_RULE = Struct(
    "EgressRule",
    [
        *_peers("to"),
        F("toPorts", list_of(PORT_RULE), "omit"),
        F("toFQDNs", list_of(FQDN_SELECTOR), "omit"),
        F("icmps", list_of(ICMP_RULE), "omit"),
        F("authentication", AUTHENTICATION, "omit ptr"),
    ],
)
EGRESS_DENY_RULE = Struct(
    "EgressDenyRule",
    [*_peers("to"), F("toPorts", list_of(PORT_DENY_RULE), "omit"), F("icmps", list_of(ICMP_RULE), "omit")],
)
RULE = Struct(
    "Rule",
    [
        F("endpointSelector", ENDPOINT_SELECTOR, "omit ptr"),
        F("nodeSelector", ENDPOINT_SELECTOR, "omit ptr"),
        F("ingress", list_of(INGRESS_RULE), "omit"),
        F("ingressDeny", list_of(INGRESS_DENY_RULE), "omit"),
        F("egress", list_of(EGRESS_RULE), "omit"),
        F("egressDeny", list_of(EGRESS_DENY_RULE), "omit"),
        F("labels", list_of(LABEL), "omit"),
        F(
            "enableDefaultDeny",
            Struct("DefaultDenyConfig", [F("ingress", BOOL, "omit ptr"), F("egress", BOOL, "omit ptr")]),
            "omit ptr",
        ),
        F("description", STRING, "omit"),
        F("log", Struct("LogConfig", [F("value", STRING, "omit")]), "omit ptr"),
    ],
)
# The policy objects have no spec type: their fields are spec (one rule) and specs (a list).
NETWORK_POLICY = Struct(
    "CiliumNetworkPolicy", [F("spec", RULE, "omit ptr"), F("specs", list_of(RULE), "omit")]
)

# --- BGP control plane --------------------------------------------------------------------------------

BGP_ADVERTISEMENT = Struct(
    "BGPAdvertisement",
    [
        F("advertisementType", STRING, "req"),
        F(
            "service",
            Struct(
                "BGPServiceOptions",
                [
                    F("addresses", list_of(STRING), "omit req!"),
                    F("aggregationLengthIPv4", INT32, "omit ptr"),
                    F("aggregationLengthIPv6", INT32, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F("interface", Struct("BGPInterfaceOptions", [F("name", STRING, "omit req!")]), "omit ptr"),
        F("selector", LABEL_SELECTOR, "omit ptr"),
        F(
            "attributes",
            Struct(
                "BGPAttributes",
                [
                    F(
                        "communities",
                        Struct(
                            "BGPCommunities",
                            [F(n, list_of(STRING), "omit") for n in ("standard", "wellKnown", "large")],
                        ),
                        "omit ptr",
                    ),
                    F("localPreference", INT64, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
    ],
)
BGP_ADVERTISEMENT_SPEC = Struct(
    "CiliumBGPAdvertisementSpec", [F("advertisements", list_of(BGP_ADVERTISEMENT), "req")]
)

BGP_PEER = Struct(
    "CiliumBGPPeer",
    [
        F("name", STRING, "req"),
        F("peerAddress", STRING, "omit ptr"),
        F(
            "autoDiscovery",
            Struct(
                "BGPAutoDiscovery",
                [
                    F("mode", STRING, "req"),
                    F(
                        "defaultGateway",
                        Struct("DefaultGateway", [F("addressFamily", STRING, "req")]),
                        "omit ptr",
                    ),
                ],
            ),
            "omit ptr",
        ),
        F("peerASN", INT64, "omit ptr"),
        F("peerConfigRef", Struct("PeerConfigReference", [F("name", STRING, "req")]), "omit ptr"),
    ],
)
BGP_CLUSTER_CONFIG_SPEC = Struct(
    "CiliumBGPClusterConfigSpec",
    [
        F("nodeSelector", LABEL_SELECTOR, "omit ptr"),
        F(
            "bgpInstances",
            list_of(
                Struct(
                    "CiliumBGPInstance",
                    [
                        F("name", STRING, "req"),
                        F("localASN", INT64, "omit ptr"),
                        F("localPort", INT32, "omit ptr"),
                        F("peers", list_of(BGP_PEER), "omit"),
                    ],
                )
            ),
            "req",
        ),
    ],
)
BGP_NODE_CONFIG_OVERRIDE_SPEC = Struct(
    "CiliumBGPNodeConfigOverrideSpec",
    [
        F(
            "bgpInstances",
            list_of(
                Struct(
                    "CiliumBGPNodeConfigInstanceOverride",
                    [
                        F("name", STRING, "req"),
                        F("routerID", STRING, "omit ptr"),
                        F("localPort", INT32, "omit ptr"),
                        F("localASN", INT64, "omit ptr"),
                        F(
                            "peers",
                            list_of(
                                Struct(
                                    "CiliumBGPNodeConfigPeerOverride",
                                    [
                                        F("name", STRING, "req"),
                                        F("localAddress", STRING, "omit ptr"),
                                        F("localPort", INT32, "omit ptr"),
                                    ],
                                )
                            ),
                            "omit",
                        ),
                    ],
                )
            ),
            "req",
        )
    ],
)
BGP_PEER_CONFIG_SPEC = Struct(
    "CiliumBGPPeerConfigSpec",
    [
        F(
            "transport",
            Struct(
                "CiliumBGPTransport",
                [F("peerPort", INT32, "omit ptr"), F("sourceInterface", STRING, "omit ptr")],
            ),
            "omit ptr",
        ),
        F(
            "timers",
            Struct(
                "CiliumBGPTimers",
                [
                    F("connectRetryTimeSeconds", INT32, "omit ptr"),
                    F("holdTimeSeconds", INT32, "omit ptr"),
                    F("keepAliveTimeSeconds", INT32, "omit ptr"),
                ],
            ),
            "omit ptr",
        ),
        F("authSecretRef", STRING, "omit ptr"),
        F(
            "gracefulRestart",
            Struct(
                "CiliumBGPNeighborGracefulRestart",
                [F("enabled", BOOL, "req"), F("restartTimeSeconds", INT32, "omit ptr")],
            ),
            "omit ptr",
        ),
        F("ebgpMultihop", INT32, "omit ptr"),
        F(
            "families",
            list_of(
                Struct(
                    "CiliumBGPFamilyWithAdverts",
                    [
                        F("afi", STRING, "req"),
                        F("safi", STRING, "req"),
                        F("advertisements", LABEL_SELECTOR, "omit ptr"),
                    ],
                )
            ),
            "omit",
        ),
    ],
)

# --- other cilium.io/v2 objects -----------------------------------------------------------------------

CIDR_GROUP_SPEC = Struct("CiliumCIDRGroupSpec", [F("externalCIDRs", list_of(STRING), "req")])

LOAD_BALANCER_IP_POOL_SPEC = Struct(
    "CiliumLoadBalancerIPPoolSpec",
    [
        F("serviceSelector", LABEL_SELECTOR, "omit ptr"),
        F("allowFirstLastIPs", STRING, "omit"),
        F(
            "blocks",
            list_of(
                Struct(
                    "CiliumLoadBalancerIPPoolIPBlock",
                    [F("cidr", STRING, "omit"), F("start", STRING, "omit"), F("stop", STRING, "omit")],
                )
            ),
            "omit",
        ),
        F("disabled", BOOL, "omit"),
    ],
)

EGRESS_GATEWAY = Struct(
    "EgressGateway",
    [
        F("nodeSelector", LABEL_SELECTOR, "ptr req"),
        F("interface", STRING, "omit"),
        F("egressIP", STRING, "omit"),
    ],
)
EGRESS_GATEWAY_POLICY_SPEC = Struct(
    "CiliumEgressGatewayPolicySpec",
    [
        F(
            "selectors",
            list_of(
                Struct(
                    "EgressRule",
                    [
                        F("namespaceSelector", LABEL_SELECTOR, "omit ptr"),
                        F("podSelector", LABEL_SELECTOR, "omit ptr"),
                        F("nodeSelector", LABEL_SELECTOR, "omit ptr"),
                    ],
                )
            ),
            "req",
        ),
        F("destinationCIDRs", list_of(STRING), "req"),
        F("excludedCIDRs", list_of(STRING), "omit"),
        F("egressGateway", EGRESS_GATEWAY, "ptr req"),
        F("egressGateways", list_of(EGRESS_GATEWAY), "omit"),
    ],
)

PORT_INFO = Struct(
    "PortInfo", [F("port", STRING, "req"), F("protocol", STRING, "req"), F("name", STRING, "omit")]
)
LOCAL_REDIRECT_POLICY_SPEC = Struct(
    "CiliumLocalRedirectPolicySpec",
    [
        F(
            "redirectFrontend",
            Struct(
                "RedirectFrontend",
                [
                    F(
                        "addressMatcher",
                        Struct("Frontend", [F("ip", STRING, "req"), F("toPorts", list_of(PORT_INFO), "req")]),
                        "omit ptr",
                    ),
                    F(
                        "serviceMatcher",
                        Struct(
                            "ServiceInfo",
                            [
                                F("serviceName", STRING, "req"),
                                F("namespace", STRING, "req"),
                                F("toPorts", list_of(PORT_INFO), "omit"),
                            ],
                        ),
                        "omit ptr",
                    ),
                ],
            ),
            "req",
        ),
        F(
            "redirectBackend",
            Struct(
                "RedirectBackend",
                [F("localEndpointSelector", LABEL_SELECTOR, "req"), F("toPorts", list_of(PORT_INFO), "req")],
            ),
            "req",
        ),
        F("skipRedirectFromBackend", BOOL, "omit"),
        F("description", STRING, "omit"),
    ],
)

NODE_CONFIG_SPEC = Struct(
    "CiliumNodeConfigSpec",
    [F("defaults", map_of(STRING), "req"), F("nodeSelector", LABEL_SELECTOR, "ptr req")],
)
