"""Field tables of the Flux APIs beside the sources, the HelmRelease and the Kustomization (seed 002,
the fluxcd-alert … resourcesetinputprovider entries), written from the Go struct tags and the
``+required`` markers of the linked modules: notification.toolkit.fluxcd.io v1beta3 (Alert,
Provider) and v1 (Receiver), image.toolkit.fluxcd.io v1 (ImagePolicy, ImageRepository,
ImageUpdateAutomation), source.extensions.fluxcd.io v1beta1 (ArtifactGenerator) and the Flux
Operator's fluxcd.controlplane.io v1 (ResourceSetInputProvider).

A Flux duration is a :class:`~farm.core.kinds.engine.Custom` type: its authored text is held to the
pattern the field declares (unsigned, in ms, s, m and h; a timeout takes no h), and it is written
as Go formats it, a timeout of an hour or more in minutes (``90m`` as ``90m0s``).
"""

from __future__ import annotations

import re
from typing import Any

from farm.core.durations import DurationError, format_duration, parse_duration
from farm.core.errors import FieldError
from farm.core.fields import go_type_name
from farm.core.kinds.engine import (
    BOOL,
    INT64,
    RAW,
    STRING,
    Api,
    Custom,
    F,
    Struct,
    list_of,
    map_of,
)
from farm.core.kinds.meta import LABEL_SELECTOR, LABEL_SELECTOR_REQUIREMENT

FLUX = Api("Flux")
FLUX_OPERATOR = Api("Flux Operator")

# --- durations --------------------------------------------------------------------------------

# The patterns the Flux CRDs give their duration fields; a timeout's takes no h.
DURATION_PATTERN = re.compile(r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$")
TIMEOUT_PATTERN = re.compile(r"^([0-9]+(\.[0-9]+)?(ms|s|m))+$")
_HOUR_FORM = re.compile(r"^(\d+)h(\d+)m(.*)\Z", re.ASCII)


def minutes_form(written: str) -> str:
    """Go's form of a duration with its hours folded into minutes (``1h30m0s`` -> ``90m0s``)."""
    match = _HOUR_FORM.match(written)
    if match is None:
        return written
    hours, minutes, rest = match.groups()
    return f"{int(hours) * 60 + int(minutes)}m{rest}"


def go_form(text: str, *, hours: bool = True) -> str:
    """The form Go writes a duration in, with the hours folded into minutes where the field's
    pattern has no h. Raises ``DurationError`` where the text does not parse."""
    written = format_duration(parse_duration(text))
    return written if hours else minutes_form(written)


def flux_duration(type_name: str, *, hours: bool = True) -> Custom:
    """The duration type of one kind's field: refusals say ``<type>: <path> "<text>" is invalid``.
    A path inside a list is named by its list (``schedule[].window``): the rule is the field's."""
    pattern = DURATION_PATTERN if hours else TIMEOUT_PATTERN
    units = "ms, s, m and h" if hours else "ms, s and m"

    def invalid(path: str, text: str, why: str) -> FieldError:
        shown = re.sub(r"\[\d+\]", "[]", path)
        return FieldError(f'{type_name}: {shown} "{text}" is invalid: must be a Flux duration ({why})')

    def decode(value: Any, path: str, api: Api) -> str:
        if not isinstance(value, str):
            raise FieldError(f"{path}: must be a duration string, got {go_type_name(value)}")
        if not pattern.fullmatch(value):
            raise invalid(path, value, f"unsigned, in the units {units}: {pattern.pattern}")
        try:
            written = go_form(value, hours=hours)
        except DurationError:
            raise invalid(path, value, f"unsigned, in the units {units}: {pattern.pattern}") from None
        if not pattern.fullmatch(written):
            raise invalid(path, value, f"at least a millisecond: it would be written {written}")
        return written

    return Custom("Duration", decode)


# --- shared references ------------------------------------------------------------------------

LOCAL_OBJECT_REFERENCE = Struct("LocalObjectReference", [F("name", STRING, "req")])

NAMESPACED_OBJECT_REFERENCE = Struct(
    "NamespacedObjectReference", [F("name", STRING, "req"), F("namespace", STRING, "omit")]
)

COMMON_METADATA = Struct(
    "CommonMetadata", [F("annotations", map_of(STRING), "omit"), F("labels", map_of(STRING), "omit")]
)

GIT_REPOSITORY_REF = Struct(
    "GitRepositoryRef",
    [
        F("branch", STRING, "omit"),
        F("tag", STRING, "omit"),
        F("semver", STRING, "omit"),
        F("name", STRING, "omit"),
        F("commit", STRING, "omit"),
    ],
)

# --- notification.toolkit.fluxcd.io -----------------------------------------------------------

ALERT_EVENT_SOURCE = Struct(
    "CrossNamespaceObjectReference",
    [
        F("apiVersion", STRING, "omit"),
        F("kind", STRING, "req"),
        F("name", STRING, "req"),
        F("namespace", STRING, "omit"),
        F("matchLabels", map_of(STRING), "omit"),
    ],
)

ALERT_SPEC = Struct(
    "AlertSpec",
    [
        F("providerRef", LOCAL_OBJECT_REFERENCE, "req"),
        F("eventSources", list_of(ALERT_EVENT_SOURCE), "req"),
        F("inclusionList", list_of(STRING), "omit"),
        F("eventMetadata", map_of(STRING), "omit"),
        F("exclusionList", list_of(STRING), "omit"),
        F("eventSeverity", STRING, "omit", default='"info"'),
        F("summary", STRING, "omit"),
        F("suspend", BOOL, "omit"),
    ],
)

PROVIDER_SPEC = Struct(
    "ProviderSpec",
    [
        F("type", STRING, "req"),
        F("interval", flux_duration("fluxcd-provider"), "omit ptr"),
        F("channel", STRING, "omit"),
        F("username", STRING, "omit"),
        F("address", STRING, "omit"),
        F("timeout", flux_duration("fluxcd-provider", hours=False), "omit ptr"),
        F("proxy", STRING, "omit"),
        F("proxySecretRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),
        F("secretRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),
        F("certSecretRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),
        F("serviceAccountName", STRING, "omit"),
        F("suspend", BOOL, "omit"),
        F("commitStatusExpr", STRING, "omit"),
    ],
)

RECEIVER_RESOURCE = Struct(
    "CrossNamespaceObjectReference",
    [
        F("apiVersion", STRING, "omit"),
        F("kind", STRING, "req"),
        F("name", STRING, "req"),
        F("namespace", STRING, "omit"),
        F("matchLabels", map_of(STRING), "omit"),
        F("filter", STRING, "omit"),
    ],
)

OIDC_VARIABLE = Struct("OIDCVariable", [F("name", STRING, "req"), F("expression", STRING, "req")])
OIDC_VALIDATION = Struct("OIDCValidation", [F("expression", STRING, "req"), F("message", STRING, "req")])

OIDC_PROVIDER = Struct(
    "OIDCProvider",
    [
        F("issuerURL", STRING, "req"),
        F("audience", STRING, "omit"),
        F("variables", list_of(OIDC_VARIABLE), "omit"),
        F("validations", list_of(OIDC_VALIDATION), "req"),
    ],
)

RECEIVER_SPEC = Struct(
    "ReceiverSpec",
    [
        F("type", STRING, "req"),
        F("interval", flux_duration("fluxcd-receiver"), "omit ptr"),
        F("events", list_of(STRING), "omit"),
        F("resources", list_of(RECEIVER_RESOURCE), "req"),
        F("resourceFilter", STRING, "omit"),
        F("secretRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),
        F("oidcProviders", list_of(OIDC_PROVIDER), "omit"),
        F("suspend", BOOL, "omit"),
    ],
)

# --- image.toolkit.fluxcd.io ------------------------------------------------------------------

_ORDERED_POLICY = [F("order", STRING, "omit", default='"asc"')]

IMAGE_POLICY_CHOICE = Struct(
    "ImagePolicyChoice",
    [
        F("semver", Struct("SemVerPolicy", [F("range", STRING, "req")]), "omit ptr"),
        F("alphabetical", Struct("AlphabeticalPolicy", _ORDERED_POLICY), "omit ptr"),
        F("numerical", Struct("NumericalPolicy", _ORDERED_POLICY), "omit ptr"),
    ],
)

# Neither field is omitempty: an authored filterTags is written with both.
TAG_FILTER = Struct("TagFilter", [F("pattern", STRING), F("extract", STRING)])

IMAGE_POLICY_SPEC = Struct(
    "ImagePolicySpec",
    [
        F("imageRepositoryRef", NAMESPACED_OBJECT_REFERENCE, "req"),
        F("policy", IMAGE_POLICY_CHOICE, "req"),
        F("filterTags", TAG_FILTER, "omit ptr"),
        F("digestReflectionPolicy", STRING, "omit", default='"Never"'),
        F("interval", flux_duration("imagepolicy"), "omit ptr"),
        F("suspend", BOOL, "omit"),
    ],
)

ACCESS_FROM = Struct(
    "AccessFrom",
    [
        F(
            "namespaceSelectors",
            list_of(Struct("NamespaceSelector", [F("matchLabels", map_of(STRING), "omit")])),
            "req",
        )
    ],
)

IMAGE_REPOSITORY_SPEC = Struct(
    "ImageRepositorySpec",
    [
        # json:"image,omitempty" and +required: an empty image would be dropped, so it is refused.
        F("image", STRING, "omit req"),
        F("interval", flux_duration("imagerepository"), "req"),
        F("timeout", flux_duration("imagerepository", hours=False), "omit ptr"),
        F("secretRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),
        F("proxySecretRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),
        F("serviceAccountName", STRING, "omit"),
        F("certSecretRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),
        F("suspend", BOOL, "omit"),
        F("accessFrom", ACCESS_FROM, "omit ptr"),
        F("exclusionList", list_of(STRING), "omit"),
        F("provider", STRING, "omit", default='"generic"'),
        F("insecure", BOOL, "omit"),
    ],
)

COMMIT_SPEC = Struct(
    "CommitSpec",
    [
        F(
            "author",
            Struct("CommitUser", [F("name", STRING, "omit"), F("email", STRING, "req")]),
            "req",
        ),
        F(
            "signingKey",
            Struct(
                "SigningKey",
                [F("secretRef", LOCAL_OBJECT_REFERENCE, "omit req"), F("type", STRING, "omit")],
            ),
            "omit ptr",
        ),
        F("messageTemplate", STRING, "omit"),
        F("messageTemplateValues", map_of(STRING), "omit"),
    ],
)

GIT_SPEC = Struct(
    "GitSpec",
    [
        F("checkout", Struct("GitCheckoutSpec", [F("ref", GIT_REPOSITORY_REF, "req")]), "omit ptr"),
        F("commit", COMMIT_SPEC, "req"),
        F(
            "push",
            Struct(
                "PushSpec",
                [
                    F("branch", STRING, "omit"),
                    F("refspec", STRING, "omit"),
                    F("options", map_of(STRING), "omit"),
                ],
            ),
            "omit ptr",
        ),
    ],
)

IMAGE_UPDATE_AUTOMATION_SPEC = Struct(
    "ImageUpdateAutomationSpec",
    [
        F(
            "sourceRef",
            Struct(
                "CrossNamespaceSourceReference",
                [
                    F("apiVersion", STRING, "omit"),
                    # the API defaults it to GitRepository, but the type writes "" unauthored
                    F("kind", STRING, "req"),
                    F("name", STRING, "req"),
                    F("namespace", STRING, "omit"),
                ],
            ),
            "req",
        ),
        F("git", GIT_SPEC, "omit ptr"),
        F("interval", flux_duration("imageupdateautomation"), "req"),
        F("policySelector", LABEL_SELECTOR, "omit ptr"),
        F(
            "update",
            Struct(
                "UpdateStrategy",
                [F("strategy", STRING, "omit", default='"Setters"'), F("path", STRING, "omit")],
            ),
            "omit ptr",
        ),
        F("suspend", BOOL, "omit"),
    ],
)

# --- source.extensions.fluxcd.io --------------------------------------------------------------

COPY_OPERATION = Struct(
    "CopyOperation",
    [
        F("from", STRING, "req"),
        F("to", STRING, "req"),
        F("exclude", list_of(STRING), "omit"),
        F("strategy", STRING, "omit"),
    ],
)

ARTIFACT_GENERATOR_SPEC = Struct(
    "ArtifactGeneratorSpec",
    [
        F("commonMetadata", COMMON_METADATA, "omit ptr"),
        F(
            "sources",
            list_of(
                Struct(
                    "SourceReference",
                    [
                        F("alias", STRING, "req"),
                        F("kind", STRING, "req"),
                        F("name", STRING, "req"),
                        F("namespace", STRING, "omit"),
                    ],
                )
            ),
            "req",
        ),
        F("pathPattern", STRING, "omit"),
        F(
            "artifacts",
            list_of(
                Struct(
                    "OutputArtifact",
                    [
                        F("name", STRING, "req"),
                        F("revision", STRING, "omit"),
                        F("originRevision", STRING, "omit"),
                        F("copy", list_of(COPY_OPERATION), "req"),
                    ],
                )
            ),
            "req",
        ),
    ],
)

# --- fluxcd.controlplane.io (Flux Operator) ---------------------------------------------------

RSIP_FILTER = Struct(
    "ResourceSetInputFilter",
    [
        F("includeBranch", STRING, "omit"),
        F("excludeBranch", STRING, "omit"),
        F("includeTag", STRING, "omit"),
        F("excludeTag", STRING, "omit"),
        F("includeEnvironment", STRING, "omit"),
        F("excludeEnvironment", STRING, "omit"),
        F("labels", list_of(STRING), "omit"),
        F("limit", INT64, "omit", default="100"),
        F("semver", STRING, "omit"),
    ],
)

RSIP_SCHEDULE = Struct(
    "Schedule",
    [
        F("cron", STRING, "req"),
        F("timeZone", STRING, "omit", default='"UTC"'),
        # metav1.Duration held by value: the kind writes 0s where it is left out
        F("window", flux_duration("resourcesetinputprovider"), "omit"),
    ],
)

RSIP_SELECTOR = Struct(
    "ResourceSetInputSelector",
    [
        F("name", STRING, "omit"),
        F("namespace", STRING, "omit"),
        F("matchLabels", map_of(STRING), "omit"),
        F("matchExpressions", list_of(LABEL_SELECTOR_REQUIREMENT), "omit"),
    ],
)

RESOURCE_SET_INPUT_PROVIDER_SPEC = Struct(
    "ResourceSetInputProviderSpec",
    [
        F("type", STRING, "req"),
        F("url", STRING, "omit"),
        F("serviceAccountName", STRING, "omit"),
        F("secretRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),
        F("certSecretRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),
        F("insecure", BOOL, "omit"),
        F("defaultValues", map_of(RAW), "omit"),
        F("filter", RSIP_FILTER, "omit ptr"),
        F("skip", Struct("ResourceSetInputSkip", [F("labels", list_of(STRING), "omit")]), "omit ptr"),
        F("schedule", list_of(RSIP_SCHEDULE), "omit"),
        F("selectors", list_of(RSIP_SELECTOR), "omit"),
    ],
)
