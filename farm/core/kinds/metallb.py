"""Field tables of MetalLB's metallb.io API (v1beta1, and v1beta2 for BGPPeer) at v0.16.1, written
from the Go struct tags of its api package: omitempty, pointers and the CRD's required fields."""

from __future__ import annotations

from farm.core.kinds.engine import BOOL, DURATION, INT32, INT64, STRING, Api, F, Struct, list_of
from farm.core.kinds.meta import LABEL_SELECTOR

METALLB = Api("MetalLB")

SERVICE_ALLOCATION = Struct(
    "ServiceAllocation",
    [
        F("priority", INT64, "omit"),
        F("namespaces", list_of(STRING), "omit"),
        F("namespaceSelectors", list_of(LABEL_SELECTOR), "omit"),
        F("serviceSelectors", list_of(LABEL_SELECTOR), "omit"),
    ],
)

IP_ADDRESS_POOL_SPEC = Struct(
    "IPAddressPoolSpec",
    [
        F("addresses", list_of(STRING), "req"),
        F("autoAssign", BOOL, "omit ptr"),
        F("avoidBuggyIPs", BOOL, "omit"),
        F("serviceAllocation", SERVICE_ALLOCATION, "omit ptr"),
    ],
)

L2_ADVERTISEMENT_SPEC = Struct(
    "L2AdvertisementSpec",
    [
        F("ipAddressPools", list_of(STRING), "omit"),
        F("ipAddressPoolSelectors", list_of(LABEL_SELECTOR), "omit"),
        F("nodeSelectors", list_of(LABEL_SELECTOR), "omit"),
        F("interfaces", list_of(STRING), "omit"),
        F("serviceSelectors", list_of(LABEL_SELECTOR), "omit"),
    ],
)

BGP_ADVERTISEMENT_SPEC = Struct(
    "BGPAdvertisementSpec",
    [
        F("aggregationLength", INT32, "omit ptr"),
        F("aggregationLengthV6", INT32, "omit ptr"),
        F("localPref", INT64, "omit"),  # uint32
        F("communities", list_of(STRING), "omit"),
        F("ipAddressPools", list_of(STRING), "omit"),
        F("ipAddressPoolSelectors", list_of(LABEL_SELECTOR), "omit"),
        F("nodeSelectors", list_of(LABEL_SELECTOR), "omit"),
        F("peers", list_of(STRING), "omit"),
        F("serviceSelectors", list_of(LABEL_SELECTOR), "omit"),
    ],
)

SECRET_REFERENCE = Struct("SecretReference", [F("name", STRING, "omit"), F("namespace", STRING, "omit")])

BGP_PEER_SPEC = Struct(
    "BGPPeerSpec",
    [
        F("myASN", INT64, "req"),  # uint32, always encoded
        F("peerASN", INT64, "omit"),
        F("dynamicASN", STRING, "omit"),
        F("localASN", INT64, "omit"),
        F("peerAddress", STRING, "omit"),
        F("interface", STRING, "omit"),
        F("sourceAddress", STRING, "omit"),
        F("peerPort", INT32, "omit", default="179"),  # uint16
        F("holdTime", DURATION, "omit ptr"),
        F("keepaliveTime", DURATION, "omit ptr"),
        F("connectTime", DURATION, "omit ptr"),
        F("routerID", STRING, "omit"),
        F("nodeSelectors", list_of(LABEL_SELECTOR), "omit"),
        F("password", STRING, "omit"),
        F("passwordSecret", SECRET_REFERENCE, "omit"),  # held by value: always written
        F("bfdProfile", STRING, "omit"),
        F("enableGracefulRestart", BOOL, "omit"),
        F("ebgpMultiHop", BOOL, "omit"),
        F("vrf", STRING, "omit"),
        F("disableMP", BOOL, "omit"),
        F("dualStackAddressFamily", BOOL, "omit"),
    ],
)

BFD_PROFILE_SPEC = Struct(
    "BFDProfileSpec",
    [
        F("receiveInterval", INT64, "omit ptr"),
        F("transmitInterval", INT64, "omit ptr"),
        F("detectMultiplier", INT64, "omit ptr"),
        F("echoInterval", INT64, "omit ptr"),
        F("echoMode", BOOL, "omit ptr"),
        F("passiveMode", BOOL, "omit ptr"),
        F("minimumTtl", INT64, "omit ptr"),
    ],
)

COMMUNITY_ALIAS = Struct("CommunityAlias", [F("name", STRING, "omit"), F("value", STRING, "omit")])

COMMUNITY_SPEC = Struct("CommunitySpec", [F("communities", list_of(COMMUNITY_ALIAS), "omit")])
