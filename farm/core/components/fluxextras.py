"""Flux kind components beside the sources, the HelmRelease and the Kustomization (seed 002, lines
336-414): fluxcd-alert, fluxcd-provider, fluxcd-receiver, imagepolicy, imagerepository,
imageupdateautomation, artifactgenerator and resourcesetinputprovider.

Each is the strict decode of its spec type (tables in ``farm/core/kinds/flux.py``, durations held
to the Flux pattern there), one object named after the component or ``objectName``, no default
filled. The checks here are the seed's policy rules: a user or password in a URL the object
carries is refused under every policy; a Provider address that is the credential is refused under
a policy that forbids explicit secrets; the image of an ImageRepository and the url of a
ResourceSetInputProvider are held to the allowed registries. Cross-namespace references and the
accounts the objects name are written as authored and never gated.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

from farm.core.components import fluxsources as sources
from farm.core.components.cnpg_common import image_registry, registries_text
from farm.core.errors import FieldError
from farm.core.kinds import flux as types
from farm.core.kinds.engine import KindContext, kind_component
from farm.core.policy import REFUSAL_EXPLICIT_SECRET, REFUSAL_REGISTRY, refuse

NOTIFICATION_V1BETA3 = "notification.toolkit.fluxcd.io/v1beta3"
NOTIFICATION_V1 = "notification.toolkit.fluxcd.io/v1"
IMAGE_V1 = "image.toolkit.fluxcd.io/v1"
SOURCE_EXTENSIONS_V1BETA1 = "source.extensions.fluxcd.io/v1beta1"
CONTROLPLANE_V1 = "fluxcd.controlplane.io/v1"

# Types whose notifier posts to the address with no token of its own (notification-controller
# v1.9.4, internal/notifier): the address is the webhook URL that holds the credential. slack is
# among them because the kind does not read the Secret that might hold a token.
ADDRESS_IS_CREDENTIAL_TYPES = ("discord", "rocket", "msteams", "googlechat", "lark", "slack")
AZURE_EVENT_HUB = "azureeventhub"

_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# --- the URL credential rule --------------------------------------------------------------------


def _parse_url(value: str) -> SplitResult | None:
    """The URL as Go's url.Parse reads it, or None where Go would refuse to parse it."""
    if _BAD_ESCAPE.search(value) or _CONTROL.search(value):
        return None
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return None
    return parts


def _credential_error(type_name: str, where: str, kind: str, remedy: str) -> FieldError:
    return FieldError(
        f"{type_name}: {where} must not carry a user or password, which would be written in plain "
        f"text into the {kind}; {remedy}"
    )


def check_url_credentials(
    value: str, type_name: str, where: str, kind: str, remedy: str, *, refuse_unparseable: bool = False
) -> None:
    """A user or password in a URL is refused under every policy and under none, and so is a value
    that names no host and holds an ``@`` (``bot:pw@host`` and ``bot@host`` parse host-less). The
    message names the field, never the value."""
    parts = _parse_url(value)
    if parts is None:
        if refuse_unparseable:
            raise FieldError(f"{type_name}: {where} is not a valid URL (the value is not repeated)")
        if "@" in value:
            raise _credential_error(type_name, where, kind, remedy)
        return
    if "@" in parts.netloc or (not parts.hostname and "@" in value):
        raise _credential_error(type_name, where, kind, remedy)


# --- fluxcd-provider ------------------------------------------------------------------------------


def _address_is_credential(provider_type: str, address: str) -> bool:
    if provider_type in ADDRESS_IS_CREDENTIAL_TYPES:
        return True
    return provider_type == AZURE_EVENT_HUB and "SharedAccessKey" in address


def _check_provider(kc: KindContext) -> None:
    spec = kc.decoded
    address = spec.get("address", "")
    if address:
        check_url_credentials(
            address,
            "fluxcd-provider",
            "address",
            "Provider",
            "put the address under the address key of the Secret secretRef names instead",
        )
    proxy = spec.get("proxy", "")
    if proxy:
        check_url_credentials(
            proxy,
            "fluxcd-provider",
            "proxy",
            "Provider",
            "put the proxy under the address key of the Secret proxySecretRef names instead",
        )
    provider_type = spec.get("type", "")
    if (
        address
        and not kc.build.policy.explicit_secrets_allowed
        and _address_is_credential(provider_type, address)
    ):
        raise refuse(
            f"fluxcd-provider: address: the address of a {provider_type} Provider is the credential it "
            "posts with, and the environment policy forbids explicit secrets; omit address, set "
            "secretRef and put the URL under the address key of that Secret",
            REFUSAL_EXPLICIT_SECRET,
        )


# --- fluxcd-receiver ------------------------------------------------------------------------------


def _check_receiver(kc: KindContext) -> None:
    for index, provider in enumerate(kc.decoded.get("oidcProviders") or []):
        check_url_credentials(
            provider["issuerURL"],
            "fluxcd-receiver",
            f"oidcProviders[{index}].issuerURL",
            "Receiver",
            "an OIDC issuer is named by its URL alone",
            refuse_unparseable=True,
        )


# --- imagerepository ------------------------------------------------------------------------------


def _check_image_repository(kc: KindContext) -> None:
    """The registry of image is held to the allowed registries, as a pod's image is (no tag rule:
    the field names a repository). A name with no registry is docker.io's."""
    policy = kc.build.policy
    image = kc.decoded["image"]
    if policy.allowed_registries and image_registry(image) not in policy.allowed_registries:
        raise refuse(
            f'image "{image}" is not from an allowed registry {registries_text(policy)}', REFUSAL_REGISTRY
        )


# --- resourcesetinputprovider ---------------------------------------------------------------------


def _check_resource_set_input_provider(kc: KindContext) -> None:
    spec = kc.decoded
    for schedule in spec.get("schedule") or []:
        schedule.setdefault("window", "0s")  # metav1.Duration by value: Go writes the zero
    url = spec.get("url", "")
    if not url:
        return
    check_url_credentials(
        url,
        "resourcesetinputprovider",
        "url",
        "ResourceSetInputProvider",
        "put the credentials in the Secret secretRef names",
    )
    policy = kc.build.policy
    where = "resourcesetinputprovider: url"
    if url.startswith("oci://"):
        sources.check_oci_registry_named(policy, url, where)
        if policy.allowed_registries and not url[len("oci://") :].partition("/")[2]:
            raise refuse(
                f"{where}: an oci:// URL must name a repository after its registry "
                "(oci://<registry>/<repository>)",
                REFUSAL_REGISTRY,
            )
    sources.check_allowed_host(policy, sources.url_host(url), where)


# --- the kinds ------------------------------------------------------------------------------------

ALERT = kind_component(
    "fluxcd-alert",
    NOTIFICATION_V1BETA3,
    "Alert",
    "notificationv1beta3.AlertSpec",
    spec=types.ALERT_SPEC,
    api=types.FLUX,
)

PROVIDER = kind_component(
    "fluxcd-provider",
    NOTIFICATION_V1BETA3,
    "Provider",
    "notificationv1beta3.ProviderSpec",
    spec=types.PROVIDER_SPEC,
    api=types.FLUX,
    check=_check_provider,
)

RECEIVER = kind_component(
    "fluxcd-receiver",
    NOTIFICATION_V1,
    "Receiver",
    "notificationv1.ReceiverSpec",
    spec=types.RECEIVER_SPEC,
    api=types.FLUX,
    check=_check_receiver,
)

IMAGE_POLICY = kind_component(
    "imagepolicy",
    IMAGE_V1,
    "ImagePolicy",
    "imagev1.ImagePolicySpec",
    spec=types.IMAGE_POLICY_SPEC,
    api=types.FLUX,
)

IMAGE_REPOSITORY = kind_component(
    "imagerepository",
    IMAGE_V1,
    "ImageRepository",
    "imagev1.ImageRepositorySpec",
    spec=types.IMAGE_REPOSITORY_SPEC,
    api=types.FLUX,
    check=_check_image_repository,
)

IMAGE_UPDATE_AUTOMATION = kind_component(
    "imageupdateautomation",
    IMAGE_V1,
    "ImageUpdateAutomation",
    "imagev1.ImageUpdateAutomationSpec",
    spec=types.IMAGE_UPDATE_AUTOMATION_SPEC,
    api=types.FLUX,
)

ARTIFACT_GENERATOR = kind_component(
    "artifactgenerator",
    SOURCE_EXTENSIONS_V1BETA1,
    "ArtifactGenerator",
    "sourcev1beta1.ArtifactGeneratorSpec",
    spec=types.ARTIFACT_GENERATOR_SPEC,
    api=types.FLUX,
)

RESOURCE_SET_INPUT_PROVIDER = kind_component(
    "resourcesetinputprovider",
    CONTROLPLANE_V1,
    "ResourceSetInputProvider",
    "fluxcdv1.ResourceSetInputProviderSpec",
    spec=types.RESOURCE_SET_INPUT_PROVIDER_SPEC,
    api=types.FLUX_OPERATOR,
    check=_check_resource_set_input_provider,
)
