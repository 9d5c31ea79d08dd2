"""MetalLB kind components (seed 002, the metallb-* entries): bfdprofile, bgpadvertisement,
bgppeer (emitted at v1beta2, the version the CRD stores), community, ipaddresspool and
l2advertisement. Each is the strict decode of its spec type, plus the CRD expression rules the seed
says are checked and the bgppeer's explicit-secret policy check."""

from __future__ import annotations

from farm.core.durations import parse_duration
from farm.core.errors import FieldError
from farm.core.kinds import metallb as types
from farm.core.kinds.engine import KindContext, kind_component
from farm.core.policy import REFUSAL_EXPLICIT_SECRET, refuse

V1BETA1 = "metallb.io/v1beta1"
V1BETA2 = "metallb.io/v1beta2"

_DEFAULT_LENGTHS = (("aggregationLength", 32), ("aggregationLengthV6", 128))
_NANOS_PER_MS = 1_000_000
_MAX_CONNECT_SECONDS = 65535


def _check_bgp_advertisement(kc: KindContext) -> None:
    """The CRD's one rule: service selectors only with one route per address. The API server
    evaluates it after defaulting, so an unauthored length counts as its default."""
    if not kc.decoded.get("serviceSelectors"):
        return
    for key, default in _DEFAULT_LENGTHS:
        length = kc.decoded.get(key, default)
        if length != default:
            raise FieldError(
                f"serviceSelectors: not allowed with {key} {length}: the API takes service selectors "
                f"only with one route per address ({key} {default})"
            )


def _check_connect_time(duration: str) -> None:
    """connectTime is 1..65535 s and a whole number of seconds, read as the API server reads a
    duration: whole seconds and whole milliseconds, anything smaller dropped."""
    millis = parse_duration(duration) // _NANOS_PER_MS
    seconds = millis // 1000
    if not 1 <= seconds <= _MAX_CONNECT_SECONDS:
        raise FieldError(
            f"connectTime: {duration} is not from 1 to {_MAX_CONNECT_SECONDS} seconds, which the API requires"
        )
    if millis % 1000:
        raise FieldError(f"connectTime: {duration} is not a whole number of seconds, which the API requires")


def _check_bgp_peer(kc: KindContext) -> None:
    connect_time = kc.decoded.get("connectTime")
    if connect_time is not None:
        _check_connect_time(connect_time)
    if kc.decoded.get("password") and not kc.build.policy.explicit_secrets_allowed:
        raise refuse(
            "password: holds the BGP session password in the object, and the environment policy "
            "forbids explicit secrets; name a Secret created out of band in passwordSecret instead",
            REFUSAL_EXPLICIT_SECRET,
        )


BFD_PROFILE = kind_component(
    "metallb-bfdprofile",
    V1BETA1,
    "BFDProfile",
    "metallbv1beta1.BFDProfileSpec",
    spec=types.BFD_PROFILE_SPEC,
    api=types.METALLB,
)

BGP_ADVERTISEMENT = kind_component(
    "metallb-bgpadvertisement",
    V1BETA1,
    "BGPAdvertisement",
    "metallbv1beta1.BGPAdvertisementSpec",
    spec=types.BGP_ADVERTISEMENT_SPEC,
    api=types.METALLB,
    check=_check_bgp_advertisement,
)

BGP_PEER = kind_component(
    "metallb-bgppeer",
    V1BETA2,
    "BGPPeer",
    "metallbv1beta2.BGPPeerSpec",
    spec=types.BGP_PEER_SPEC,
    api=types.METALLB,
    check=_check_bgp_peer,
)

COMMUNITY = kind_component(
    "metallb-community",
    V1BETA1,
    "Community",
    "metallbv1beta1.CommunitySpec",
    spec=types.COMMUNITY_SPEC,
    api=types.METALLB,
)

IP_ADDRESS_POOL = kind_component(
    "metallb-ipaddresspool",
    V1BETA1,
    "IPAddressPool",
    "metallbv1beta1.IPAddressPoolSpec",
    spec=types.IP_ADDRESS_POOL_SPEC,
    api=types.METALLB,
)

L2_ADVERTISEMENT = kind_component(
    "metallb-l2advertisement",
    V1BETA1,
    "L2Advertisement",
    "metallbv1beta1.L2AdvertisementSpec",
    spec=types.L2_ADVERTISEMENT_SPEC,
    api=types.METALLB,
)
