"""Field tables of the Flux delivery spec types the kind-named terminals decode into (seed 002,
helmrelease, fluxcd-kustomization and the five source kinds), written from the Go struct tags of
the Flux 2.7 API modules: helm-controller helm.toolkit.fluxcd.io/v2 (HelmReleaseSpec),
source-controller source.toolkit.fluxcd.io/v1 (HelmRepositorySpec, OCIRepositorySpec,
GitRepositorySpec, BucketSpec, HelmChartSpec), kustomize-controller kustomize.toolkit.fluxcd.io/v1
(KustomizationSpec), and the fluxcd/pkg apis (meta, kustomize, acl) they embed. Fields the later
CRDs add (Flux 2.8 and 2.9: waitStrategy, the serverSideApply modes, buildMetadata …) are accepted
too, so a spec written for a newer controller is not refused; each is marked where it sits.

No field here carries ``req``: the seed keeps these kinds out of the generic required-field table
("no row is written for them"), and states the few required fields itself, which the kinds check
(farm/core/components/fluxkinds.py). A Go field without ``omitempty`` is written unauthored with its
zero value, as the Go type writes it.

Every duration is a Flux duration: its authored text and its written form are held to the Flux
pattern (``FLUX_DURATION``), and a source's timeout to the narrower pattern without hours, written
with its hours folded into minutes (``SOURCE_TIMEOUT``). A top-level ``interval`` is not a pointer:
unauthored it decodes to null here and the kind writes its default.
"""

from __future__ import annotations

from typing import Any

from farm.core.components.fluxsources import flux_duration
from farm.core.durations import DurationError
from farm.core.errors import FieldError
from farm.core.fields import go_type_name
from farm.core.kinds.engine import BOOL, INT64, RAW, STRING, Api, Custom, F, Struct, list_of, map_of
from farm.core.kinds.flux import COMMON_METADATA, GIT_REPOSITORY_REF, TIMEOUT_PATTERN, go_form
from farm.core.kinds.flux import FLUX as FLUX  # the delivery kinds name their API through this module

_STRINGS = list_of(STRING)
_STRING_MAP = map_of(STRING)

# --- durations -----------------------------------------------------------------------------------


def _flux_duration(value: Any, path: str, api: Api) -> str:
    return flux_duration(value, path)


def source_timeout(value: Any, path: str, api: Api | None = None) -> str:
    """A source's timeout: the source CRDs' pattern has no ``h``, so an hour or more is written in
    minutes (``90m`` -> ``90m0s``, ``3600s`` -> ``60m0s``) where ``Duration.String()`` would write
    an ``h`` the CRD refuses."""
    if not isinstance(value, str):
        raise FieldError(f"{path}: must be a duration string, got {go_type_name(value)}")
    if not TIMEOUT_PATTERN.fullmatch(value):
        raise FieldError(
            f'{path}: "{value}" is not a duration the source API accepts (unsigned, in ms, s or m, '
            f"with no h: {TIMEOUT_PATTERN.pattern}; write an hour as 60m)"
        )
    try:
        written = go_form(value, hours=False)
    except DurationError as exc:
        raise FieldError(f"{path}: {exc}") from None
    if not TIMEOUT_PATTERN.fullmatch(written):
        raise FieldError(
            f'{path}: "{value}" is below Flux\'s millisecond resolution (it would be written as {written})'
        )
    return written


FLUX_DURATION = Custom("Duration", _flux_duration)
SOURCE_TIMEOUT = Custom("Duration", source_timeout)

# --- fluxcd/pkg/apis: meta, kustomize, acl -------------------------------------------------------

# Not flux.LOCAL_OBJECT_REFERENCE: that table requires the name, and these kinds state their own
# required fields (module docstring), so an authored empty reference is written as Go writes it.
LOCAL_OBJECT_REFERENCE = Struct("meta.LocalObjectReference", [F("name", STRING)])
SECRET_KEY_REFERENCE = Struct("meta.SecretKeyReference", [F("name", STRING), F("key", STRING, "omit")])
KUBE_CONFIG_REFERENCE = Struct(
    "meta.KubeConfigReference",
    [
        F("secretRef", SECRET_KEY_REFERENCE, "omit ptr"),
        F("configMapRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),
    ],
)
DEPENDENCY_REFERENCE = Struct(
    "meta.DependencyReference",
    [F("name", STRING), F("namespace", STRING, "omit"), F("readyExpr", STRING, "omit")],
)
NAMESPACED_OBJECT_KIND_REFERENCE = Struct(
    "meta.NamespacedObjectKindReference",
    [
        F("apiVersion", STRING, "omit"),
        F("kind", STRING),
        F("name", STRING),
        F("namespace", STRING, "omit"),
    ],
)
KUSTOMIZE_SELECTOR = Struct(
    "kustomize.Selector",
    [
        F("group", STRING, "omit"),
        F("version", STRING, "omit"),
        F("kind", STRING, "omit"),
        F("namespace", STRING, "omit"),
        F("name", STRING, "omit"),
        F("annotationSelector", STRING, "omit"),
        F("labelSelector", STRING, "omit"),
    ],
)
KUSTOMIZE_PATCH = Struct("kustomize.Patch", [F("patch", STRING), F("target", KUSTOMIZE_SELECTOR, "omit ptr")])
KUSTOMIZE_IMAGE = Struct(
    "kustomize.Image",
    [
        F("name", STRING),
        F("newName", STRING, "omit"),
        F("newTag", STRING, "omit"),
        F("digest", STRING, "omit"),
    ],
)
CUSTOM_HEALTH_CHECK = Struct(
    "kustomize.CustomHealthCheck",
    [
        F("apiVersion", STRING),
        F("kind", STRING),
        F("inProgress", STRING, "omit"),
        F("failed", STRING, "omit"),
        F("current", STRING),
    ],
)
ACCESS_FROM = Struct(
    "acl.AccessFrom",
    [
        F(
            "namespaceSelectors",
            list_of(Struct("acl.NamespaceSelector", [F("matchLabels", _STRING_MAP, "omit")])),
        )
    ],
)

# --- source.toolkit.fluxcd.io/v1 -----------------------------------------------------------------

_SECRET_REF = F("secretRef", LOCAL_OBJECT_REFERENCE, "omit ptr")
_CERT_SECRET_REF = F("certSecretRef", LOCAL_OBJECT_REFERENCE, "omit ptr")
_PROXY_SECRET_REF = F("proxySecretRef", LOCAL_OBJECT_REFERENCE, "omit ptr")
_TIMEOUT = F("timeout", SOURCE_TIMEOUT, "omit ptr")
_IGNORE = F("ignore", STRING, "omit ptr")
_SUSPEND = F("suspend", BOOL, "omit")
_INSECURE = F("insecure", BOOL, "omit")

OIDC_IDENTITY_MATCH = Struct("OIDCIdentityMatch", [F("issuer", STRING), F("subject", STRING)])
# provider is written unauthored; the kinds fill the API's default (cosign)
_VERIFICATION_FIELDS = [
    F("provider", STRING),
    _SECRET_REF,
    F("matchOIDCIdentity", list_of(OIDC_IDENTITY_MATCH), "omit"),
]
# a HelmChart's verify; an OCIRepository's also takes a Sigstore trusted root
OCI_REPOSITORY_VERIFICATION = Struct("OCIRepositoryVerification", _VERIFICATION_FIELDS)
OCI_REPOSITORY_VERIFY = Struct(
    "OCIRepositoryVerification",
    [
        *_VERIFICATION_FIELDS,
        F("trustedRootSecretRef", LOCAL_OBJECT_REFERENCE, "omit ptr"),  # after Flux 2.7
    ],
)

HELM_REPOSITORY_SPEC = Struct(
    "HelmRepositorySpec",
    [
        F("url", STRING),
        _SECRET_REF,
        _CERT_SECRET_REF,
        F("passCredentials", BOOL, "omit"),
        F("interval", FLUX_DURATION, "omit"),
        _INSECURE,
        _TIMEOUT,
        _SUSPEND,
        F("accessFrom", ACCESS_FROM, "omit ptr"),
        F("type", STRING, "omit"),
        F("provider", STRING, "omit"),
    ],
)

OCI_REPOSITORY_SPEC = Struct(
    "OCIRepositorySpec",
    [
        F("url", STRING),
        F(
            "ref",
            Struct(
                "OCIRepositoryRef",
                [
                    F("digest", STRING, "omit"),
                    F("semver", STRING, "omit"),
                    F("semverFilter", STRING, "omit"),
                    F("tag", STRING, "omit"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "layerSelector",
            Struct("OCILayerSelector", [F("mediaType", STRING, "omit"), F("operation", STRING, "omit")]),
            "omit ptr",
        ),
        F("provider", STRING, "omit"),
        _SECRET_REF,
        F("verify", OCI_REPOSITORY_VERIFY, "omit ptr"),
        F("serviceAccountName", STRING, "omit"),
        _CERT_SECRET_REF,
        _PROXY_SECRET_REF,
        F("interval", FLUX_DURATION),
        _TIMEOUT,
        _IGNORE,
        _INSECURE,
        _SUSPEND,
    ],
)

GIT_REPOSITORY_SPEC = Struct(
    "GitRepositorySpec",
    [
        F("url", STRING),
        _SECRET_REF,
        F("provider", STRING, "omit"),
        F("serviceAccountName", STRING, "omit"),
        F("interval", FLUX_DURATION),
        _TIMEOUT,
        F("ref", GIT_REPOSITORY_REF, "omit ptr"),
        F(
            "verify",
            Struct(
                "GitRepositoryVerification",
                [F("mode", STRING, "omit"), F("secretRef", LOCAL_OBJECT_REFERENCE)],
            ),
            "omit ptr",
        ),
        _PROXY_SECRET_REF,
        _IGNORE,
        _SUSPEND,
        F("recurseSubmodules", BOOL, "omit"),
        F(
            "include",
            list_of(
                Struct(
                    "GitRepositoryInclude",
                    [
                        F("repository", LOCAL_OBJECT_REFERENCE),
                        F("fromPath", STRING, "omit"),
                        F("toPath", STRING, "omit"),
                    ],
                )
            ),
            "omit",
        ),
        F("sparseCheckout", _STRINGS, "omit"),
    ],
)

BUCKET_SPEC = Struct(
    "BucketSpec",
    [
        F("provider", STRING, "omit"),
        F("bucketName", STRING),
        F("endpoint", STRING),
        F(
            "sts",
            Struct(
                "BucketSTSSpec",
                [
                    F("provider", STRING),
                    F("endpoint", STRING),
                    _SECRET_REF,
                    _CERT_SECRET_REF,
                ],
            ),
            "omit ptr",
        ),
        _INSECURE,
        F("region", STRING, "omit"),
        F("prefix", STRING, "omit"),
        _SECRET_REF,
        _CERT_SECRET_REF,
        _PROXY_SECRET_REF,
        F("serviceAccountName", STRING, "omit"),
        F("interval", FLUX_DURATION),
        _TIMEOUT,
        _IGNORE,
        _SUSPEND,
    ],
)

HELM_CHART_SPEC = Struct(
    "HelmChartSpec",
    [
        F("chart", STRING),
        F("version", STRING, "omit"),
        F(
            "sourceRef",
            Struct(
                "LocalHelmChartSourceReference",
                [F("apiVersion", STRING, "omit"), F("kind", STRING), F("name", STRING)],
            ),
        ),
        F("interval", FLUX_DURATION),
        F("reconcileStrategy", STRING, "omit"),
        F("valuesFiles", _STRINGS, "omit"),
        F("ignoreMissingValuesFiles", BOOL, "omit"),
        _SUSPEND,
        F("verify", OCI_REPOSITORY_VERIFICATION, "omit ptr"),
    ],
)

# --- helm.toolkit.fluxcd.io/v2 -------------------------------------------------------------------

_DURATION = F("timeout", FLUX_DURATION, "omit ptr")
_OPTIONAL_BOOL = "omit ptr"

HELM_CHART_TEMPLATE_SPEC = Struct(
    "HelmChartTemplateSpec",
    [
        F("chart", STRING),
        F("version", STRING, "omit"),
        F(
            "sourceRef",
            Struct(
                "CrossNamespaceObjectReference",
                [
                    F("apiVersion", STRING, "omit"),
                    F("kind", STRING, "omit"),
                    F("name", STRING),
                    F("namespace", STRING, "omit"),
                ],
            ),
        ),
        F("interval", FLUX_DURATION, "omit ptr"),
        F("reconcileStrategy", STRING, "omit"),
        F("valuesFiles", _STRINGS, "omit"),
        F("ignoreMissingValuesFiles", BOOL, "omit"),
        F(
            "verify",
            Struct("HelmChartTemplateVerification", [F("provider", STRING), _SECRET_REF]),
            "omit ptr",
        ),
    ],
)

HELM_CHART_TEMPLATE = Struct(
    "HelmChartTemplate",
    [
        F(
            "metadata",
            Struct(
                "HelmChartTemplateObjectMeta",
                [F("labels", _STRING_MAP, "omit"), F("annotations", _STRING_MAP, "omit")],
            ),
            "omit ptr",
        ),
        F("spec", HELM_CHART_TEMPLATE_SPEC),
    ],
)

CROSS_NAMESPACE_SOURCE_REFERENCE = Struct(
    "CrossNamespaceSourceReference",
    [
        F("apiVersion", STRING, "omit"),
        F("kind", STRING),
        F("name", STRING),
        F("namespace", STRING, "omit"),
    ],
)

_REMEDIATION_COMMON = [
    F("retries", INT64, "omit"),
    F("ignoreTestFailures", BOOL, _OPTIONAL_BOOL),
    F("remediateLastFailure", BOOL, _OPTIONAL_BOOL),
]


def _strategy(name: str) -> Struct:
    return Struct(name, [F("name", STRING), F("retryInterval", FLUX_DURATION, "omit ptr")])


_ACTION_FLAGS = [
    F("disableTakeOwnership", BOOL, "omit"),
    F("disableWait", BOOL, "omit"),
    F("disableWaitForJobs", BOOL, "omit"),
    F("disableHooks", BOOL, "omit"),
    F("disableOpenAPIValidation", BOOL, "omit"),
    F("disableSchemaValidation", BOOL, "omit"),
]

INSTALL = Struct(
    "Install",
    [
        _DURATION,
        F("remediation", Struct("InstallRemediation", _REMEDIATION_COMMON), "omit ptr"),
        F("strategy", _strategy("InstallStrategy"), "omit ptr"),
        *_ACTION_FLAGS,
        F("replace", BOOL, "omit"),
        F("skipCRDs", BOOL, "omit"),
        F("crds", STRING, "omit"),
        F("createNamespace", BOOL, "omit"),
        F("serverSideApply", BOOL, "omit ptr"),  # after Flux 2.7
    ],
)

UPGRADE = Struct(
    "Upgrade",
    [
        _DURATION,
        F(
            "remediation",
            Struct("UpgradeRemediation", [*_REMEDIATION_COMMON, F("strategy", STRING, "omit ptr")]),
            "omit ptr",
        ),
        F("strategy", _strategy("UpgradeStrategy"), "omit ptr"),
        *_ACTION_FLAGS,
        F("force", BOOL, "omit"),
        F("preserveValues", BOOL, "omit"),
        F("cleanupOnFail", BOOL, "omit"),
        F("crds", STRING, "omit"),
        F("serverSideApply", STRING, "omit"),  # after Flux 2.7
        F("chartNameChangeStrategy", STRING, "omit"),  # after Flux 2.7
    ],
)

TEST = Struct(
    "Test",
    [
        F("enable", BOOL, "omit"),
        F("ignoreFailures", BOOL, "omit"),
        _DURATION,
        F("filters", list_of(Struct("Filter", [F("name", STRING), F("exclude", BOOL, "omit")])), "omit ptr"),
    ],
)

ROLLBACK = Struct(
    "Rollback",
    [
        _DURATION,
        F("disableWait", BOOL, "omit"),
        F("disableWaitForJobs", BOOL, "omit"),
        F("disableHooks", BOOL, "omit"),
        F("recreate", BOOL, "omit"),
        F("force", BOOL, "omit"),
        F("cleanupOnFail", BOOL, "omit"),
        F("serverSideApply", STRING, "omit"),  # after Flux 2.7
    ],
)

UNINSTALL = Struct(
    "Uninstall",
    [
        _DURATION,
        F("disableHooks", BOOL, "omit"),
        F("keepHistory", BOOL, "omit"),
        F("disableWait", BOOL, "omit"),
        F("deletionPropagation", STRING, "omit ptr"),
    ],
)

IGNORE_RULE = Struct("IgnoreRule", [F("paths", _STRINGS), F("target", KUSTOMIZE_SELECTOR, "omit ptr")])

DRIFT_DETECTION = Struct(
    "DriftDetection",
    [F("mode", STRING, "omit"), F("ignore", list_of(IGNORE_RULE), "omit")],
)

VALUES_REFERENCE = Struct(
    "ValuesReference",
    [
        F("kind", STRING),
        F("name", STRING),
        F("valuesKey", STRING, "omit"),
        F("targetPath", STRING, "omit"),
        F("optional", BOOL, "omit"),
        F("literal", BOOL, "omit"),  # after Flux 2.7
    ],
)

POST_RENDERER = Struct(
    "PostRenderer",
    [
        F(
            "kustomize",
            Struct(
                "Kustomize",
                [
                    F("patches", list_of(KUSTOMIZE_PATCH), "omit"),
                    F("images", list_of(KUSTOMIZE_IMAGE), "omit"),
                ],
            ),
            "omit ptr",
        )
    ],
)

HELM_RELEASE_SPEC = Struct(
    "HelmReleaseSpec",
    [
        F("chart", HELM_CHART_TEMPLATE, "omit ptr"),
        F("chartRef", CROSS_NAMESPACE_SOURCE_REFERENCE, "omit ptr"),
        F("interval", FLUX_DURATION),
        F("kubeConfig", KUBE_CONFIG_REFERENCE, "omit ptr"),
        F("suspend", BOOL, "omit"),
        F("releaseName", STRING, "omit"),
        F("targetNamespace", STRING, "omit"),
        F("storageNamespace", STRING, "omit"),
        F("dependsOn", list_of(DEPENDENCY_REFERENCE), "omit"),
        F("timeout", FLUX_DURATION, "omit ptr"),
        F("maxHistory", INT64, "omit ptr"),
        F("serviceAccountName", STRING, "omit"),
        F("persistentClient", BOOL, "omit ptr"),
        F("driftDetection", DRIFT_DETECTION, "omit ptr"),
        F("install", INSTALL, "omit ptr"),
        F("upgrade", UPGRADE, "omit ptr"),
        F("test", TEST, "omit ptr"),
        F("rollback", ROLLBACK, "omit ptr"),
        F("uninstall", UNINSTALL, "omit ptr"),
        F("valuesFrom", list_of(VALUES_REFERENCE), "omit"),
        F("values", RAW, "omit ptr"),
        F("postRenderers", list_of(POST_RENDERER), "omit"),
        F("commonMetadata", COMMON_METADATA, "omit ptr"),
        # fields of the helm-controller CRDs released after Flux 2.7
        F("healthCheckExprs", list_of(CUSTOM_HEALTH_CHECK), "omit"),
        F("waitStrategy", Struct("WaitStrategy", [F("name", STRING)]), "omit ptr"),
        F("postRenderStrategy", STRING, "omit"),
    ],
)

# --- kustomize.toolkit.fluxcd.io/v1 --------------------------------------------------------------

KUSTOMIZATION_SPEC = Struct(
    "KustomizationSpec",
    [
        F("commonMetadata", COMMON_METADATA, "omit ptr"),
        F("dependsOn", list_of(DEPENDENCY_REFERENCE), "omit"),
        F(
            "decryption",
            Struct(
                "Decryption",
                [F("provider", STRING), _SECRET_REF, F("serviceAccountName", STRING, "omit")],
            ),
            "omit ptr",
        ),
        F("interval", FLUX_DURATION),
        F("retryInterval", FLUX_DURATION, "omit ptr"),
        F("kubeConfig", KUBE_CONFIG_REFERENCE, "omit ptr"),
        F("path", STRING, "omit"),
        F(
            "postBuild",
            Struct(
                "PostBuild",
                [
                    F("substitute", _STRING_MAP, "omit"),
                    F(
                        "substituteFrom",
                        list_of(
                            Struct(
                                "SubstituteReference",
                                [F("kind", STRING), F("name", STRING), F("optional", BOOL, "omit")],
                            )
                        ),
                        "omit",
                    ),
                    F("substituteStrategy", STRING, "omit"),  # after Flux 2.7
                ],
            ),
            "omit ptr",
        ),
        F("prune", BOOL),
        F("deletionPolicy", STRING, "omit"),
        F("healthChecks", list_of(NAMESPACED_OBJECT_KIND_REFERENCE), "omit"),
        F("namePrefix", STRING, "omit"),
        F("nameSuffix", STRING, "omit"),
        F("patches", list_of(KUSTOMIZE_PATCH), "omit"),
        F("images", list_of(KUSTOMIZE_IMAGE), "omit"),
        F("serviceAccountName", STRING, "omit"),
        F("sourceRef", CROSS_NAMESPACE_SOURCE_REFERENCE),
        F("suspend", BOOL, "omit"),
        F("targetNamespace", STRING, "omit"),
        F("timeout", FLUX_DURATION, "omit ptr"),
        F("force", BOOL, "omit"),
        F("wait", BOOL, "omit"),
        F("components", _STRINGS, "omit"),
        F("ignoreMissingComponents", BOOL, "omit"),
        F("healthCheckExprs", list_of(CUSTOM_HEALTH_CHECK), "omit"),
        # fields of the kustomize-controller CRDs released after Flux 2.7
        F("buildMetadata", _STRINGS, "omit"),
        F("ignore", list_of(IGNORE_RULE), "omit"),
    ],
)
