"""Flux kind components (seed 002, lines 336-414): the seed's refusals with exact messages, the
policy rules, and inputs no shared case shows."""

from __future__ import annotations

import pytest

from farm.core.errors import PolicyRefusal
from farm.core.policy import REFUSAL_EXPLICIT_SECRET, REFUSAL_REGISTRY, Policy

from .kindbuild import build, message, refusal

FORBID_SECRETS = Policy(explicit_secrets_allowed=False)
REGISTRY_EXAMPLE = Policy(allowed_registries=("registry.example",))
FLUX_PATTERN = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
TIMEOUT_PATTERN = r"^([0-9]+(\.[0-9]+)?(ms|s|m))+$"


def _required(path: str, api: str = "Flux") -> str:
    return f'component "c": {path}: required (the {api} API requires this field)'


# --- shared rules ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "props", "path", "default"),
    [
        ("fluxcd-alert", {"providerRef": {"name": "p"}, "eventSources": []}, "eventSeverity", '"info"'),
        (
            "imagepolicy",
            {"imageRepositoryRef": {"name": "r"}, "policy": {}},
            "digestReflectionPolicy",
            '"Never"',
        ),
        ("imagerepository", {"image": "ghcr.io/a/b", "interval": "5m"}, "provider", '"generic"'),
    ],
)
def test_defaulted_empty_strings_cannot_be_carried(type_: str, props: dict, path: str, default: str) -> None:
    assert message(type_, {**props, path: ""}) == (
        f'component "c": {path}: "" cannot be carried by the Flux API types (the field is omitted when '
        f"zero, so the API server would apply its default {default})"
    )


def test_nested_defaulted_zeros_cannot_be_carried() -> None:
    policy = {"imageRepositoryRef": {"name": "r"}, "policy": {"alphabetical": {"order": ""}}}
    assert message("imagepolicy", policy) == (
        'component "c": policy.alphabetical.order: "" cannot be carried by the Flux API types (the field '
        'is omitted when zero, so the API server would apply its default "asc")'
    )
    automation = {"sourceRef": {"kind": "GitRepository", "name": "g"}, "interval": "5m"}
    assert message("imageupdateautomation", {**automation, "update": {"strategy": ""}}) == (
        'component "c": update.strategy: "" cannot be carried by the Flux API types (the field is '
        'omitted when zero, so the API server would apply its default "Setters")'
    )
    assert message(
        "resourcesetinputprovider", {"type": "Static", "schedule": [{"cron": "* * * * *", "timeZone": ""}]}
    ) == (
        'component "c": schedule[0].timeZone: "" cannot be carried by the Flux Operator API types (the '
        'field is omitted when zero, so the API server would apply its default "UTC")'
    )
    assert message("resourcesetinputprovider", {"type": "Static", "filter": {"limit": 0}}) == (
        'component "c": filter.limit: 0 cannot be carried by the Flux Operator API types (the field is '
        "omitted when zero, so the API server would apply its default 100)"
    )


def test_durations_are_held_to_the_flux_pattern() -> None:
    props = {"imageRepositoryRef": {"name": "r"}, "policy": {}}
    assert message("imagepolicy", {**props, "interval": "-5m"}) == (
        'component "c": imagepolicy: interval "-5m" is invalid: must be a Flux duration (unsigned, in the '
        f"units ms, s, m and h: {FLUX_PATTERN})"
    )
    assert message("imagepolicy", {**props, "interval": "0.5ms"}) == (
        'component "c": imagepolicy: interval "0.5ms" is invalid: must be a Flux duration (at least a '
        "millisecond: it would be written 500µs)"
    )
    assert message("fluxcd-receiver", {"type": "github", "resources": [], "interval": "1d"}).startswith(
        'component "c": fluxcd-receiver: interval "1d" is invalid: must be a Flux duration'
    )
    assert build("imagepolicy", {**props, "interval": "90m"})["spec"]["interval"] == "1h30m0s"


def test_a_timeout_takes_no_hours_and_is_written_in_minutes() -> None:
    props = {"image": "ghcr.io/a/b", "interval": "5m"}
    assert message("imagerepository", {**props, "timeout": "1h"}) == (
        'component "c": imagerepository: timeout "1h" is invalid: must be a Flux duration (unsigned, in '
        f"the units ms, s and m: {TIMEOUT_PATTERN})"
    )
    assert build("imagerepository", {**props, "timeout": "60m"})["spec"]["timeout"] == "60m0s"
    assert build("imagerepository", {**props, "timeout": "150m30s"})["spec"]["timeout"] == "150m30s"
    spec = build("fluxcd-provider", {"type": "generic", "timeout": "30s", "interval": "10m"})["spec"]
    assert spec == {"type": "generic", "timeout": "30s", "interval": "10m0s"}
    assert message("fluxcd-provider", {"type": "generic", "timeout": "2h"}).startswith(
        'component "c": fluxcd-provider: timeout "2h" is invalid'
    )


def test_unknown_keys_are_refused_at_any_depth() -> None:
    props = {"providerRef": {"name": "p", "namespace": "other"}, "eventSources": []}
    assert message("fluxcd-alert", props) == 'component "c": unknown field "providerRef.namespace"'
    props = {"sourceRef": {"kind": "GitRepository", "name": "g"}, "interval": "5m", "git": {"comit": {}}}
    assert message("imageupdateautomation", props) == 'component "c": unknown field "git.comit"'


def test_object_name_labels_and_annotations_are_the_objects_metadata() -> None:
    obj = build(
        "imagepolicy",
        {
            "objectName": "web-latest",
            "labels": {"team": "shop"},
            "annotations": {"note": "semver"},
            "imageRepositoryRef": {"name": "web"},
            "policy": {"alphabetical": {}},
        },
        name="web",
        namespace="shop",
    )
    assert obj["metadata"] == {
        "name": "web-latest",
        "namespace": "shop",
        "labels": {"team": "shop", "launcher.gokure.dev/component": "web"},
        "annotations": {"note": "semver"},
    }
    assert obj["spec"] == {"imageRepositoryRef": {"name": "web"}, "policy": {"alphabetical": {}}}


# --- fluxcd-alert ---------------------------------------------------------------------------


def test_alert_requires_provider_ref_and_each_sources_kind_and_name() -> None:
    assert message("fluxcd-alert", {"eventSources": []}) == _required("providerRef")
    assert message("fluxcd-alert", {"providerRef": {}, "eventSources": []}) == _required("providerRef.name")
    assert message("fluxcd-alert", {"providerRef": {"name": "p"}}) == _required("eventSources")
    sources = [{"kind": "Kustomization", "name": "a"}, {"kind": "HelmRelease"}]
    assert message("fluxcd-alert", {"providerRef": {"name": "p"}, "eventSources": sources}) == _required(
        "eventSources[1].name"
    )


def test_alert_writes_optional_fields_and_an_authored_empty_name() -> None:
    spec = build(
        "fluxcd-alert",
        {
            "providerRef": {"name": ""},
            "eventSources": [
                {"kind": "GitRepository", "name": "*", "apiVersion": "source.toolkit.fluxcd.io/v1"}
            ],
            "inclusionList": [".*succeeded.*"],
            "summary": "deprecated",
            "suspend": True,
            "exclusionList": [],
        },
        policy=FORBID_SECRETS,
    )["spec"]
    assert spec == {
        "providerRef": {"name": ""},
        "eventSources": [{"kind": "GitRepository", "name": "*", "apiVersion": "source.toolkit.fluxcd.io/v1"}],
        "inclusionList": [".*succeeded.*"],
        "summary": "deprecated",
        "suspend": True,
    }


# --- fluxcd-provider ------------------------------------------------------------------------


def test_provider_requires_type_and_the_name_of_each_secret_reference() -> None:
    assert message("fluxcd-provider", {"channel": "x"}) == _required("type")
    for ref in ("secretRef", "proxySecretRef", "certSecretRef"):
        assert message("fluxcd-provider", {"type": "github", ref: {}}) == _required(f"{ref}.name")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("address", "https://bot:pw@hooks.example/notify"),
        ("address", "https://bot@hooks.example/notify"),
        ("address", "bot:pw@hooks.example"),
        ("address", "bot@hooks.example"),
        ("proxy", "http://user:secret@proxy.example:3128"),
    ],
)
def test_provider_url_with_a_user_is_refused_under_every_policy(field: str, value: str) -> None:
    text = message("fluxcd-provider", {"type": "generic", field: value})
    assert text.startswith(
        f'component "c": fluxcd-provider: {field} must not carry a user or password, which would be written '
        "in plain text into the Provider; "
    )
    assert value not in text


def test_provider_address_without_at_passes_as_a_project_id() -> None:
    spec = build("fluxcd-provider", {"type": "googlepubsub", "address": "my-project", "channel": "topic"})[
        "spec"
    ]
    assert spec == {"type": "googlepubsub", "address": "my-project", "channel": "topic"}


@pytest.mark.parametrize("provider_type", ["discord", "rocket", "msteams", "googlechat", "lark", "slack"])
def test_provider_address_that_is_the_credential_is_an_explicit_secret(provider_type: str) -> None:
    props = {"type": provider_type, "address": "https://hooks.example/T000/B000/XXXX"}
    caught = refusal("fluxcd-provider", props, policy=FORBID_SECRETS)
    assert isinstance(caught, PolicyRefusal)
    assert caught.refusal_class == REFUSAL_EXPLICIT_SECRET
    assert caught.message == (
        f'component "c": fluxcd-provider: address: the address of a {provider_type} Provider is the credential '
        "it posts with, and the environment policy forbids explicit secrets; omit address, set secretRef "
        "and put the URL under the address key of that Secret"
    )
    assert build("fluxcd-provider", props)["spec"]["address"] == props["address"]


def test_provider_azure_event_hub_address_is_the_credential_only_with_a_key() -> None:
    keyed = {"type": "azureeventhub", "address": "Endpoint=sb://hub.example/;SharedAccessKey=abc"}
    assert refusal("fluxcd-provider", keyed, policy=FORBID_SECRETS).refusal_class == REFUSAL_EXPLICIT_SECRET
    endpoint = {"type": "azureeventhub", "address": "https://hub.example/events"}
    assert build("fluxcd-provider", endpoint, policy=FORBID_SECRETS)["spec"] == endpoint


def test_provider_generic_address_and_empty_address_pass_under_a_secret_forbidding_policy() -> None:
    generic = {"type": "generic-hmac", "address": "https://hooks.example/notify?token=abc"}
    assert build("fluxcd-provider", generic, policy=FORBID_SECRETS)["spec"] == generic
    slack = {"type": "slack", "address": "", "secretRef": {"name": "slack-url"}}
    assert build("fluxcd-provider", slack, policy=FORBID_SECRETS)["spec"] == {
        "type": "slack",
        "secretRef": {"name": "slack-url"},
    }


# --- fluxcd-receiver ------------------------------------------------------------------------


def test_receiver_requires_type_resources_and_their_kind_and_name() -> None:
    assert message("fluxcd-receiver", {"resources": []}) == _required("type")
    assert message("fluxcd-receiver", {"type": "github"}) == _required("resources")
    assert message("fluxcd-receiver", {"type": "github", "resources": [{"name": "a"}]}) == _required(
        "resources[0].kind"
    )
    assert message("fluxcd-receiver", {"type": "github", "resources": [], "secretRef": {}}) == _required(
        "secretRef.name"
    )


def test_receiver_oidc_providers_require_their_fields() -> None:
    base = {"type": "generic-oidc", "resources": []}
    assert message("fluxcd-receiver", {**base, "oidcProviders": [{"validations": []}]}) == _required(
        "oidcProviders[0].issuerURL"
    )
    assert message("fluxcd-receiver", {**base, "oidcProviders": [{"issuerURL": "https://a.example"}]}) == (
        _required("oidcProviders[0].validations")
    )
    provider = {"issuerURL": "https://a.example", "validations": [{"expression": "true"}]}
    assert message("fluxcd-receiver", {**base, "oidcProviders": [provider]}) == _required(
        "oidcProviders[0].validations[0].message"
    )
    provider = {"issuerURL": "https://a.example", "validations": [], "variables": [{"name": "v"}]}
    assert message("fluxcd-receiver", {**base, "oidcProviders": [provider]}) == _required(
        "oidcProviders[0].variables[0].expression"
    )


def test_receiver_issuer_url_credentials_are_refused_by_index() -> None:
    base = {"type": "generic-oidc", "resources": []}
    good = {"issuerURL": "https://token.example", "validations": []}
    for issuer in ("https://u:p@token.example", "user@token.example"):
        text = message("fluxcd-receiver", {**base, "oidcProviders": [good, {**good, "issuerURL": issuer}]})
        assert text.startswith(
            'component "c": fluxcd-receiver: oidcProviders[1].issuerURL must not carry a user or password, '
            "which would be written in plain text into the Receiver; "
        )
        assert issuer not in text
    assert message(
        "fluxcd-receiver", {**base, "oidcProviders": [{**good, "issuerURL": "https://a.example:x/"}]}
    ) == (
        'component "c": fluxcd-receiver: oidcProviders[0].issuerURL is not a valid URL (the value is not repeated)'
    )


def test_receiver_oidc_rules_the_api_holds_are_left_to_it() -> None:
    # generic-oidc with a secretRef, an empty validations list and a host-less issuer without @
    props = {
        "type": "generic-oidc",
        "resources": [{"kind": "Bucket", "name": "b"}],
        "secretRef": {"name": "token"},
        "oidcProviders": [{"issuerURL": "token-issuer", "validations": []}],
        "interval": "0s",
    }
    assert build("fluxcd-receiver", props)["spec"] == props


# --- imagepolicy ----------------------------------------------------------------------------


def test_imagepolicy_requires_repository_reference_policy_and_semver_range() -> None:
    assert message("imagepolicy", {"policy": {}}) == _required("imageRepositoryRef")
    assert message("imagepolicy", {"imageRepositoryRef": {}, "policy": {}}) == _required(
        "imageRepositoryRef.name"
    )
    assert message("imagepolicy", {"imageRepositoryRef": {"name": "r"}}) == _required("policy")
    assert message("imagepolicy", {"imageRepositoryRef": {"name": "r"}, "policy": {"semver": {}}}) == (
        _required("policy.semver.range")
    )


def test_imagepolicy_filter_tags_is_written_with_both_fields() -> None:
    props = {
        "imageRepositoryRef": {"name": "r"},
        "policy": {"numerical": {}},
        "filterTags": {"pattern": "^v"},
    }
    assert build("imagepolicy", props)["spec"]["filterTags"] == {"pattern": "^v", "extract": ""}
    props["filterTags"] = {}
    assert build("imagepolicy", props)["spec"]["filterTags"] == {"pattern": "", "extract": ""}


def test_imagepolicy_union_and_interval_rules_are_left_to_the_api() -> None:
    props = {
        "imageRepositoryRef": {"name": "r"},
        "policy": {"semver": {"range": "1.x"}, "alphabetical": {"order": "desc"}},
        "interval": "5m",
        "suspend": False,
    }
    assert build("imagepolicy", props)["spec"] == {
        "imageRepositoryRef": {"name": "r"},
        "policy": {"semver": {"range": "1.x"}, "alphabetical": {"order": "desc"}},
        "interval": "5m0s",
    }


# --- imagerepository ------------------------------------------------------------------------


def test_imagerepository_requires_image_even_when_authored_empty_and_interval() -> None:
    assert message("imagerepository", {"interval": "5m"}) == _required("image")
    assert message("imagerepository", {"image": "", "interval": "5m"}) == _required("image")
    assert message("imagerepository", {"image": "ghcr.io/a/b"}) == _required("interval")
    props = {"image": "ghcr.io/a/b", "interval": "5m"}
    assert message("imagerepository", {**props, "accessFrom": {}}) == _required(
        "accessFrom.namespaceSelectors"
    )
    assert message("imagerepository", {**props, "certSecretRef": {}}) == _required("certSecretRef.name")


def test_imagerepository_image_registry_is_held_to_the_allowed_registries() -> None:
    caught = refusal(
        "imagerepository", {"image": "ghcr.io/shop/web", "interval": "5m"}, policy=REGISTRY_EXAMPLE
    )
    assert isinstance(caught, PolicyRefusal)
    assert caught.refusal_class == REFUSAL_REGISTRY
    assert caught.message == (
        'component "c": image "ghcr.io/shop/web" is not from an allowed registry [registry.example]'
    )
    assert message("imagerepository", {"image": "shop/web", "interval": "5m"}, policy=REGISTRY_EXAMPLE) == (
        'component "c": image "shop/web" is not from an allowed registry [registry.example]'
    )
    assert message(
        "imagerepository",
        {"image": "registry.example:5000/shop/web", "interval": "5m"},
        policy=REGISTRY_EXAMPLE,
    ).endswith("is not from an allowed registry [registry.example]")
    # the tag rule is not applied; docker.io holds a name with no registry
    kept = build(
        "imagerepository",
        {"image": "registry.example/shop/web:latest", "interval": "5m"},
        policy=REGISTRY_EXAMPLE,
    )
    assert kept["spec"]["image"] == "registry.example/shop/web:latest"
    hub = Policy(allowed_registries=("docker.io",))
    assert (
        build("imagerepository", {"image": "nginx", "interval": "5m"}, policy=hub)["spec"]["image"] == "nginx"
    )


def test_imagerepository_empty_exclusion_list_is_omitted_and_open_access_is_written() -> None:
    props = {
        "image": "ghcr.io/a/b",
        "interval": "5m",
        "exclusionList": [],
        "accessFrom": {"namespaceSelectors": [{}]},
        "insecure": True,
    }
    assert build("imagerepository", props)["spec"] == {
        "image": "ghcr.io/a/b",
        "interval": "5m0s",
        "accessFrom": {"namespaceSelectors": [{}]},
        "insecure": True,
    }


# --- imageupdateautomation ------------------------------------------------------------------


def test_imageupdateautomation_required_fields_follow_what_was_authored() -> None:
    assert message("imageupdateautomation", {"interval": "5m"}) == _required("sourceRef")
    assert message("imageupdateautomation", {"sourceRef": {"name": "g"}, "interval": "5m"}) == _required(
        "sourceRef.kind"
    )
    source = {"sourceRef": {"kind": "GitRepository", "name": "g"}}
    assert message("imageupdateautomation", source) == _required("interval")
    props = {**source, "interval": "5m"}
    assert message("imageupdateautomation", {**props, "git": {}}) == _required("git.commit")
    assert message("imageupdateautomation", {**props, "git": {"commit": {}}}) == _required(
        "git.commit.author"
    )
    assert message("imageupdateautomation", {**props, "git": {"commit": {"author": {"name": "bot"}}}}) == (
        _required("git.commit.author.email")
    )
    commit = {"author": {"email": "bot@example.com"}}
    assert message("imageupdateautomation", {**props, "git": {"commit": commit, "checkout": {}}}) == (
        _required("git.checkout.ref")
    )
    signed = {**commit, "signingKey": {}}
    assert message("imageupdateautomation", {**props, "git": {"commit": signed}}) == _required(
        "git.commit.signingKey.secretRef"
    )
    signed = {**commit, "signingKey": {"secretRef": {}}}
    assert message("imageupdateautomation", {**props, "git": {"commit": signed}}) == _required(
        "git.commit.signingKey.secretRef.name"
    )
    selector = {"matchExpressions": [{"key": "app"}]}
    assert message("imageupdateautomation", {**props, "policySelector": selector}) == _required(
        "policySelector.matchExpressions[0].operator"
    )


def test_imageupdateautomation_full_object() -> None:
    props = {
        "sourceRef": {"kind": "GitRepository", "name": "fleet", "namespace": "flux-system"},
        "interval": "30m",
        "git": {
            "checkout": {"ref": {"branch": "main"}},
            "commit": {
                "author": {"name": "fluxbot", "email": "fluxbot@example.com"},
                "messageTemplate": "Update {{ range .Changed.Changes }}{{ .NewValue }}{{ end }}",
                "messageTemplateValues": {"env": "prod"},
                "signingKey": {"secretRef": {"name": "signing-key"}},
            },
            "push": {"branch": "auto", "options": {"merge_request.create": ""}},
        },
        "policySelector": {"matchLabels": {"team": "shop"}},
        "update": {"path": "./clusters/prod"},
    }
    assert build("imageupdateautomation", props)["spec"] == {**props, "interval": "30m0s"}
    # no git at all builds
    assert build("imageupdateautomation", {"sourceRef": {"kind": "", "name": "g"}, "interval": "1h"})[
        "spec"
    ] == {
        "sourceRef": {"kind": "", "name": "g"},
        "interval": "1h0m0s",
    }


# --- artifactgenerator ----------------------------------------------------------------------


def test_artifactgenerator_requires_sources_artifacts_and_their_fields() -> None:
    assert message("artifactgenerator", {"artifacts": []}) == _required("sources")
    assert message("artifactgenerator", {"sources": []}) == _required("artifacts")
    sources = [{"alias": "a", "kind": "GitRepository"}]
    assert message("artifactgenerator", {"sources": sources, "artifacts": []}) == _required("sources[0].name")
    sources = [{"alias": "a", "kind": "GitRepository", "name": "g"}]
    assert message("artifactgenerator", {"sources": sources, "artifacts": [{"name": "x"}]}) == _required(
        "artifacts[0].copy"
    )
    artifacts = [{"name": "x", "copy": [{"from": "@a/**"}]}]
    assert message("artifactgenerator", {"sources": sources, "artifacts": artifacts}) == _required(
        "artifacts[0].copy[0].to"
    )


def test_artifactgenerator_empty_lists_and_common_annotations_are_written() -> None:
    props = {
        "commonMetadata": {"annotations": {"owner": "shop"}},
        "sources": [],
        "artifacts": [{"name": "App_Manifests", "revision": "@a", "copy": []}],
    }
    assert build("artifactgenerator", props, policy=FORBID_SECRETS)["spec"] == props


# --- resourcesetinputprovider ---------------------------------------------------------------


def test_resourcesetinputprovider_required_fields() -> None:
    assert message("resourcesetinputprovider", {"url": "https://git.example/a"}) == _required(
        "type", "Flux Operator"
    )
    assert message("resourcesetinputprovider", {"type": "GitHubBranch", "secretRef": {}}) == _required(
        "secretRef.name", "Flux Operator"
    )
    assert message("resourcesetinputprovider", {"type": "Static", "schedule": [{}]}) == _required(
        "schedule[0].cron", "Flux Operator"
    )
    selectors = [{"matchExpressions": [{"key": "a", "operator": "Exists"}, {"key": "b"}]}]
    assert message(
        "resourcesetinputprovider", {"type": "ExternalArtifact", "selectors": selectors}
    ) == _required("selectors[0].matchExpressions[1].operator", "Flux Operator")


def test_resourcesetinputprovider_schedule_windows() -> None:
    schedule = [{"cron": "0 * * * *", "window": "90m"}, {"cron": "30 * * * *", "timeZone": "Europe/Paris"}]
    spec = build("resourcesetinputprovider", {"type": "Static", "schedule": schedule})["spec"]
    assert spec["schedule"] == [
        {"cron": "0 * * * *", "window": "1h30m0s"},
        {"cron": "30 * * * *", "timeZone": "Europe/Paris", "window": "0s"},
    ]
    schedule = [{"cron": "0 * * * *"}, {"cron": "30 * * * *", "window": "500us"}]
    assert message("resourcesetinputprovider", {"type": "Static", "schedule": schedule}) == (
        'component "c": resourcesetinputprovider: schedule[].window "500us" is invalid: must be a Flux '
        f"duration (unsigned, in the units ms, s, m and h: {FLUX_PATTERN})"
    )


def test_resourcesetinputprovider_default_values_and_filter_are_written_as_authored() -> None:
    props = {
        "type": "GitHubPullRequest",
        "url": "https://github.example/shop/app",
        "defaultValues": {"env": "prod", "replicas": 2, "nested": {"password": "not-checked"}},
        "filter": {"labels": ["deploy"], "limit": 5, "includeBranch": "^feat-"},
        "skip": {"labels": ["skip"]},
    }
    assert build("resourcesetinputprovider", props, policy=FORBID_SECRETS)["spec"] == props


def test_resourcesetinputprovider_url_credentials_are_refused() -> None:
    for url in ("https://bot:token@github.example/shop/app", "bot@github.example"):
        text = message("resourcesetinputprovider", {"type": "GitHubBranch", "url": url})
        assert text.startswith(
            'component "c": resourcesetinputprovider: url must not carry a user or password, which would be '
            "written in plain text into the ResourceSetInputProvider; "
        )


def test_resourcesetinputprovider_url_host_is_held_to_the_allowed_registries() -> None:
    caught = refusal(
        "resourcesetinputprovider",
        {"type": "GitLabBranch", "url": "https://git.other.example/shop/fleet"},
        policy=REGISTRY_EXAMPLE,
    )
    assert caught.refusal_class == REFUSAL_REGISTRY
    assert "resourcesetinputprovider: url" in caught.message
    ok = {"type": "GitLabBranch", "url": "https://registry.example/shop/fleet"}
    assert build("resourcesetinputprovider", ok, policy=REGISTRY_EXAMPLE)["spec"] == ok
    assert (
        refusal(
            "resourcesetinputprovider",
            {"type": "OCIArtifactTag", "url": "oci://app"},
            policy=REGISTRY_EXAMPLE,
        ).refusal_class
        == REFUSAL_REGISTRY
    )
    assert message(
        "resourcesetinputprovider",
        {"type": "OCIArtifactTag", "url": "oci://registry.example/"},
        policy=REGISTRY_EXAMPLE,
    ).endswith("must name a repository after its registry (oci://<registry>/<repository>)")
    oci = {"type": "OCIArtifactTag", "url": "oci://registry.example/shop/app"}
    assert build("resourcesetinputprovider", oci, policy=REGISTRY_EXAMPLE)["spec"] == oci
    # no url, or no allowlist: nothing is held
    assert build("resourcesetinputprovider", {"type": "Static"}, policy=REGISTRY_EXAMPLE)["spec"] == {
        "type": "Static"
    }
    other = {"type": "GitLabBranch", "url": "https://git.other.example/shop/fleet"}
    assert build("resourcesetinputprovider", other)["spec"] == other
