"""The kind-named Flux delivery terminals: helmrelease, fluxcd-kustomization, helmrepository,
ocirepository, gitrepository, bucket and helmchart (seed 002, their entries). Refusals with exact
messages, and inputs no shared case shows."""

from __future__ import annotations

from typing import Any

import pytest

from farm.core.errors import PolicyRefusal
from farm.core.policy import REFUSAL_EXPLICIT_SECRET, REFUSAL_REGISTRY, Policy

from .kindbuild import build, build_all, message, refusal

CHART = {"spec": {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "repo"}}}
SOURCE_REF = {"kind": "GitRepository", "name": "repo"}


def release(**props: Any) -> dict[str, Any]:
    return {"chart": CHART, **props}


def kustomization(**props: Any) -> dict[str, Any]:
    return {"sourceRef": SOURCE_REF, **props}


def allow(*registries: str) -> Policy:
    return Policy(allowed_registries=registries)


# --- strict decode ---------------------------------------------------------------------------------


def test_unknown_nested_key_is_refused_with_its_path_from_the_root() -> None:
    props = kustomization(patches=[{"patch": "p", "target": {"kinds": "Deployment"}}])
    assert message("fluxcd-kustomization", props) == 'component "c": unknown field "patches[0].target.kinds"'
    chart = {"spec": {**CHART["spec"], "chartVersion": "1.0"}}
    assert (
        message("helmrelease", {"chart": chart}) == 'component "c": unknown field "chart.spec.chartVersion"'
    )
    stray = release(valuesFrom=[{"kind": "Secret", "name": "s", "valueKey": "v"}])
    assert message("helmrelease", stray) == 'component "c": unknown field "valuesFrom[0].valueKey"'
    assert message("gitrepository", {"url": "https://h/r", "secretRef": {"name": "s", "namespace": "x"}}) == (
        'component "c": unknown field "secretRef.namespace"'
    )
    include = [{"repository": {"name": "lib"}, "toPath": "lib", "from": "x"}]
    assert message("gitrepository", {"url": "https://h/r", "include": include}) == (
        'component "c": unknown field "include[0].from"'
    )


def test_wrongly_typed_values_are_refused_by_path() -> None:
    assert (
        message("helmrelease", release(suspend="yes"))
        == 'component "c": suspend: must be a boolean, got string'
    )
    assert message("helmrelease", release(maxHistory="3")) == (
        'component "c": maxHistory: must be an integer, got string'
    )
    assert message("bucket", {"bucketName": "b", "endpoint": "e", "suspend": "yes"}) == (
        'component "c": suspend: must be a boolean, got string'
    )
    assert message("fluxcd-kustomization", kustomization(postBuild={"substitute": {"replicas": 3}})) == (
        'component "c": postBuild.substitute.replicas: must be a string, got int'
    )


def test_keys_match_ignoring_case_but_two_spellings_are_refused() -> None:
    spec = build("helmrelease", {"Chart": CHART, "Interval": "5m"})["spec"]
    assert spec["chart"]["spec"]["chart"] == "podinfo"
    assert spec["interval"] == "5m0s"
    assert message("helmrelease", release(suspend=True, Suspend=False)) == (
        'component "c": suspend: sets the same field as Suspend (the decoder would keep only one)'
    )


def test_null_is_absence_but_a_null_list_element_is_refused() -> None:
    assert build("helmrelease", release(timeout=None, valuesFrom=None))["spec"].keys() == {
        "chart",
        "interval",
        "postRenderers",
    }
    assert message("helmrelease", release(valuesFrom=[None])) == (
        'component "c": valuesFrom[0]: null is not a valid array element'
    )


def test_labels_and_annotations_and_object_name_are_the_objects_own() -> None:
    props = {"url": "https://charts.example", "objectName": "charts", "labels": {"team": "a"}}
    obj = build("helmrepository", props, name="repo")
    assert obj["metadata"] == {
        "name": "charts",
        "namespace": "default",
        "labels": {"team": "a", "launcher.gokure.dev/component": "repo"},
    }
    assert obj["spec"] == {"interval": "1h0m0s", "url": "https://charts.example"}


# --- helmrelease -----------------------------------------------------------------------------------


def test_helmrelease_needs_exactly_one_of_chart_and_chart_ref() -> None:
    assert message("helmrelease", {}) == (
        'component "c": chart and chartRef: exactly one of them is required, neither is set'
    )
    both = release(chartRef={"kind": "OCIRepository", "name": "o"})
    assert message("helmrelease", both) == (
        'component "c": chart and chartRef: exactly one of them is required, both are set'
    )


def test_helmrelease_chart_needs_its_source_kind() -> None:
    no_kind = {"spec": {"chart": "podinfo", "sourceRef": {"name": "repo"}}}
    expected = 'component "c": chart.spec.sourceRef.kind: required (the Flux API requires this field)'
    assert message("helmrelease", {"chart": no_kind}) == expected
    assert message("helmrelease", {"chart": {}}) == expected
    empty_kind = {"spec": {"chart": "podinfo", "sourceRef": {"kind": "", "name": "repo"}}}
    assert message("helmrelease", {"chart": empty_kind}) == expected


def test_helmrelease_verify_provider_defaults_to_cosign_and_empty_is_refused() -> None:
    chart = {"spec": {**CHART["spec"], "verify": {"secretRef": {"name": "keys"}}}}
    verify = build("helmrelease", {"chart": chart})["spec"]["chart"]["spec"]["verify"]
    assert verify == {"provider": "cosign", "secretRef": {"name": "keys"}}
    notation = {"spec": {**CHART["spec"], "verify": {"provider": "notation"}}}
    assert build("helmrelease", {"chart": notation})["spec"]["chart"]["spec"]["verify"] == {
        "provider": "notation"
    }
    empty = {"spec": {**CHART["spec"], "verify": {"provider": ""}}}
    assert message("helmrelease", {"chart": empty}) == (
        'component "c": chart.spec.verify.provider: "" cannot be carried by the Flux API types (the type '
        "writes the field whether or not it is authored, so an empty provider reads as an unauthored one; "
        "write cosign or notation, or leave it out for the API's default cosign)"
    )
    twice = {"spec": {**CHART["spec"], "verify": {"provider": "cosign", "Provider": "notation"}}}
    assert message("helmrelease", {"chart": twice}) == (
        'component "c": chart.spec.verify.provider: sets the same field as chart.spec.verify.Provider '
        "(the decoder would keep only one)"
    )


@pytest.mark.parametrize(
    ("authored", "written"),
    [("10m", "10m0s"), ("1.5h", "1h30m0s"), ("500ms", "500ms"), ("0s", "1h0m0s"), ("1h0m0s", "1h0m0s")],
)
def test_helmrelease_interval_is_written_the_go_way(authored: str, written: str) -> None:
    assert build("helmrelease", release(interval=authored))["spec"]["interval"] == written


def test_helmrelease_durations_are_held_to_the_flux_pattern_at_every_field() -> None:
    assert message("helmrelease", release(interval="-5m")) == (
        'component "c": interval: "-5m" is not a duration Flux accepts '
        r"(unsigned, in ms, s, m or h: ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$)"
    )
    assert message("helmrelease", release(timeout="500us")) == (
        'component "c": timeout: "500us" is not a duration Flux accepts '
        r"(unsigned, in ms, s, m or h: ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$)"
    )
    assert message(
        "helmrelease", release(install={"strategy": {"name": "RetryOnFailure", "retryInterval": "0.5ms"}})
    ) == (
        'component "c": install.strategy.retryInterval: "0.5ms" is below Flux\'s millisecond resolution '
        "(it would be written as 500µs)"
    )
    chart = {"spec": {**CHART["spec"], "interval": "ten"}}
    assert message("helmrelease", {"chart": chart}).startswith(
        'component "c": chart.spec.interval: "ten" is not'
    )
    spec = build("helmrelease", release(upgrade={"Timeout": "90m"}, uninstall={"timeout": "1h"}))["spec"]
    assert spec["upgrade"] == {"timeout": "1h30m0s"}
    assert spec["uninstall"] == {"timeout": "1h0m0s"}


def test_helmrelease_values_and_values_from_checks() -> None:
    assert (
        message("helmrelease", release(values=[1]))
        == 'component "c": values: must be a JSON object, got []interface {}'
    )
    assert message("helmrelease", release(values={"a": {"b": float("nan")}})) == (
        'component "c": values.a.b: a non-finite number cannot be written as JSON'
    )
    assert message(
        "helmrelease", release(valuesFrom=[{"kind": "ConfigMap", "name": "a"}, {"kind": "secret"}])
    ) == ('component "c": valuesFrom[1].kind: must be "Secret" or "ConfigMap", got \'secret\'')
    assert message("helmrelease", release(valuesFrom=[{"kind": "Secret"}])) == (
        'component "c": valuesFrom[0].name: required (the name of the Secret)'
    )
    spec = build("helmrelease", release(valuesFrom=[{"kind": "Secret", "name": "s", "optional": False}]))[
        "spec"
    ]
    assert spec["valuesFrom"] == [{"kind": "Secret", "name": "s"}]


def test_helmrelease_values_mode_is_refused_with_a_pointer_to_its_replacements() -> None:
    assert message("helmrelease", release(valuesMode="configMap")) == (
        'component "c": unknown field "valuesMode"; values in a ConfigMap come from the helm component\'s '
        "valuesMode: configMap, or from a configmap trait and a valuesFrom entry naming its ConfigMap"
    )


def test_helmrelease_carries_the_component_label_post_renderer_before_authored_ones() -> None:
    authored = [{"kustomize": {"images": [{"name": "nginx", "newTag": "1.27"}]}}]
    spec = build("helmrelease", release(postRenderers=authored), name="web")["spec"]
    first, second = spec["postRenderers"]
    assert second == authored[0]
    patches = first["kustomize"]["patches"]
    assert [p["target"]["kind"] for p in patches][:2] == ["Deployment", "StatefulSet"]
    assert "launcher.gokure.dev/component: web" in patches[0]["patch"]
    chart_ref = build("helmrelease", {"chartRef": {"kind": "OCIRepository", "name": "o"}}, name="web")["spec"]
    assert len(chart_ref["postRenderers"][0]["kustomize"]["patches"]) == 9


def test_helmrelease_object_name_renames_the_object_not_the_label() -> None:
    obj = build("helmrelease", release(objectName="podinfo-prod"), name="web")
    assert obj["metadata"]["name"] == "podinfo-prod"
    assert obj["metadata"]["labels"] == {"launcher.gokure.dev/component": "web"}
    assert (
        "launcher.gokure.dev/component: web"
        in obj["spec"]["postRenderers"][0]["kustomize"]["patches"][0]["patch"]
    )
    assert "releaseName" not in obj["spec"]


def test_helmrelease_writes_what_the_go_type_writes_unauthored() -> None:
    spec = build(
        "helmrelease",
        release(driftDetection={"mode": "enabled", "ignore": [{"target": {"kind": "Secret"}}]}, maxHistory=0),
    )["spec"]
    assert spec["driftDetection"] == {
        "mode": "enabled",
        "ignore": [{"paths": None, "target": {"kind": "Secret"}}],
    }
    assert spec["maxHistory"] == 0


# --- fluxcd-kustomization ----------------------------------------------------------------------------


def test_kustomization_source_ref_is_required_and_kind_one_of_the_enum() -> None:
    assert message("fluxcd-kustomization", {"path": "./"}) == (
        'component "c": sourceRef.kind: required (the Flux API requires this field)'
    )
    assert message("fluxcd-kustomization", {"sourceRef": {"kind": "HelmRepository", "name": "r"}}) == (
        'component "c": sourceRef.kind: unsupported value "HelmRepository" (must be one of "OCIRepository", '
        '"GitRepository", "Bucket", "ExternalArtifact")'
    )
    assert message("fluxcd-kustomization", {"sourceRef": {"kind": "Bucket"}}) == (
        'component "c": sourceRef.name: required (the Flux API requires this field)'
    )


def test_kustomization_prune_defaults_false_and_target_namespace_is_never_defaulted() -> None:
    spec = build("fluxcd-kustomization", kustomization())["spec"]
    assert spec == {"interval": "1h0m0s", "prune": False, "sourceRef": SOURCE_REF}


def test_kustomization_emits_wait_beside_health_checks_as_authored() -> None:
    checks = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "shop"}]
    spec = build(
        "fluxcd-kustomization",
        kustomization(wait=True, healthChecks=checks, retryInterval="2m", timeout="90m", prune=True),
    )["spec"]
    assert spec["wait"] is True
    assert spec["healthChecks"] == checks
    assert (spec["retryInterval"], spec["timeout"], spec["prune"]) == ("2m0s", "1h30m0s", True)


# --- the sources ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "props", "field"),
    [
        ("helmrepository", {}, "url"),
        ("ocirepository", {"url": ""}, "url"),
        ("gitrepository", {"ref": {"branch": "main"}}, "url"),
        ("bucket", {"endpoint": "minio:9000"}, "bucketName"),
        ("bucket", {"bucketName": "b"}, "endpoint"),
        ("helmchart", {"sourceRef": {"kind": "HelmRepository", "name": "r"}}, "chart"),
        ("helmchart", {"chart": "c", "sourceRef": {"name": "r"}}, "sourceRef.kind"),
        ("helmchart", {"chart": "c", "sourceRef": {"kind": "HelmRepository"}}, "sourceRef.name"),
    ],
)
def test_sources_refuse_their_required_fields(type_: str, props: dict[str, Any], field: str) -> None:
    assert message(type_, props) == f'component "c": {field}: required (the Flux API requires this field)'


@pytest.mark.parametrize(
    ("type_", "props", "form"),
    [
        ("helmrepository", {"url": "ftp://charts.example"}, "http://, https:// or oci://"),
        ("helmrepository", {"url": "https://charts.example", "type": "oci"}, "oci:// under type: oci"),
        ("ocirepository", {"url": "https://ghcr.io/org/app"}, "oci://"),
    ],
)
def test_sources_refuse_a_url_scheme_their_crd_refuses(type_: str, props: dict[str, Any], form: str) -> None:
    assert message(type_, props) == f'component "c": url: must start with {form}'


def test_gitrepository_refuses_an_scp_style_address() -> None:
    assert message("gitrepository", {"url": "git@github.com:org/repo"}) == (
        'component "c": url: must start with http://, https:// or ssh:// (write an scp-style '
        "git@host:org/repo as ssh://git@host/org/repo)"
    )


def test_helmrepository_of_type_oci_takes_no_interval_default() -> None:
    spec = build("helmrepository", {"url": "oci://ghcr.io/org/charts", "type": "oci"})["spec"]
    assert spec == {"interval": "0s", "type": "oci", "url": "oci://ghcr.io/org/charts"}
    spec = build("helmrepository", {"url": "oci://ghcr.io/org/charts", "type": "oci", "interval": "5m"})[
        "spec"
    ]
    assert spec["interval"] == "5m0s"
    assert message("helmrepository", {"url": "oci://ghcr.io", "type": "oci", "interval": "-1m"}).startswith(
        'component "c": interval: "-1m" is not a duration Flux accepts'
    )


@pytest.mark.parametrize(
    ("authored", "written"), [("90m", "90m0s"), ("3600s", "60m0s"), ("61m30.5s", "61m30.5s"), ("30s", "30s")]
)
def test_source_timeout_folds_hours_into_minutes(authored: str, written: str) -> None:
    spec = build("gitrepository", {"url": "https://git.example/r", "timeout": authored})["spec"]
    assert spec["timeout"] == written


def test_source_timeout_takes_no_hours() -> None:
    assert message("bucket", {"bucketName": "b", "endpoint": "e", "timeout": "1h"}) == (
        'component "c": timeout: "1h" is not a duration the source API accepts (unsigned, in ms, s or m, '
        r"with no h: ^([0-9]+(\.[0-9]+)?(ms|s|m))+$; write an hour as 60m)"
    )
    assert message("ocirepository", {"url": "oci://r.example/a", "timeout": "0.5ms"}) == (
        'component "c": timeout: "0.5ms" is below Flux\'s millisecond resolution (it would be written as 500µs)'
    )


def test_ocirepository_and_helmchart_verify_provider_defaults_to_cosign() -> None:
    oci = build("ocirepository", {"url": "oci://ghcr.io/org/app", "verify": {}})["spec"]
    assert oci["verify"] == {"provider": "cosign"}
    chart = build(
        "helmchart", {"chart": "c", "sourceRef": {"kind": "HelmRepository", "name": "r"}, "verify": {}}
    )
    assert chart["spec"]["verify"] == {"provider": "cosign"}
    assert message("ocirepository", {"url": "oci://ghcr.io/org/app", "verify": {"provider": ""}}).startswith(
        'component "c": verify.provider: "" cannot be carried by the Flux API types'
    )


def test_helmchart_refuses_the_composite_keys_with_a_pointer_to_helm() -> None:
    props = {"chart": "c", "sourceRef": {"kind": "HelmRepository", "name": "r"}, "delivery": "native"}
    assert message("helmchart", props) == (
        'component "c": unknown field "delivery"; helmchart is Flux\'s HelmChart source kind (its properties '
        "are HelmChartSpec's); the former chart composite is the helm component: write type: helm "
        "(delivery: native is delivery: flux there)"
    )
    other = {"chart": "c", "sourceRef": {"kind": "HelmRepository", "name": "r"}, "repo": "x"}
    assert message("helmchart", other) == 'component "c": unknown field "repo"'


def test_two_sources_on_one_url_are_two_objects() -> None:
    url = {"url": "https://charts.example"}
    objects = build_all(
        [
            {"name": "a", "type": "helmrepository", "properties": url},
            {"name": "b", "type": "helmrepository", "properties": url},
        ]
    )
    assert [o["metadata"]["name"] for o in objects] == ["a", "b"]


# --- policy -------------------------------------------------------------------------------------------


def _registry_refusal(type_: str, props: dict[str, Any], policy: Policy) -> str:
    caught = refusal(type_, props, policy=policy)
    assert isinstance(caught, PolicyRefusal)
    assert caught.refusal_class == REFUSAL_REGISTRY
    return caught.message


def test_allowlist_matches_the_host_exactly_port_included() -> None:
    policy = allow("registry.local:5000")
    assert build("helmrepository", {"url": "https://registry.local:5000/charts"}, policy=policy)
    assert _registry_refusal("helmrepository", {"url": "https://registry.local/charts"}, policy) == (
        'component "c": helmrepository: url: host "registry.local" is not in the allowed registries '
        "[registry.local:5000]"
    )


def test_allowlist_drops_an_ssh_user_but_refuses_userinfo_elsewhere() -> None:
    policy = allow("github.com")
    assert build("gitrepository", {"url": "ssh://git@github.com/org/repo"}, policy=policy)
    assert _registry_refusal("gitrepository", {"url": "https://bot:token@github.com/org/repo"}, policy) == (
        'component "c": gitrepository: url: host "github.com" (shown without its userinfo) is not in the '
        "allowed registries [github.com]"
    )
    assert "token" not in _registry_refusal(
        "gitrepository", {"url": "https://bot:token@evil.example?x=1/org"}, policy
    )


def test_allowlist_names_no_host_when_the_authority_is_no_plain_host() -> None:
    assert _registry_refusal("gitrepository", {"url": "https://a?b@evil.example/r"}, allow("github.com")) == (
        'component "c": gitrepository: url: the host (not shown: the URL names no plain host) is not in '
        "the allowed registries [github.com]"
    )


def test_oci_urls_must_name_their_registry_explicitly() -> None:
    policy = allow("ghcr.io")
    unqualified = (
        'component "c": ocirepository: url: an oci:// URL must name its registry explicitly, or Flux pulls it '
        "from Docker Hub (oci://<registry>/<repository>, e.g. oci://docker.io/library/app or "
        "oci://registry.example:5000/org/app)"
    )
    assert _registry_refusal("ocirepository", {"url": "oci://ghcr.io"}, policy) == unqualified
    assert _registry_refusal("ocirepository", {"url": "oci://registry/app"}, allow("registry")) == unqualified
    assert _registry_refusal("ocirepository", {"url": "oci://ghcr.io/"}, policy) == (
        'component "c": ocirepository: url: an oci:// URL must name a repository after its registry '
        "(oci://<registry>/<repository>)"
    )
    assert build("ocirepository", {"url": "oci://ghcr.io/org/app"}, policy=policy)
    # a Helm repository's oci:// URL may stop at the registry: Flux appends the chart name
    assert build("helmrepository", {"url": "oci://ghcr.io", "type": "oci"}, policy=policy)
    assert _registry_refusal("helmrepository", {"url": "oci://charts"}, allow("charts")).startswith(
        'component "c": helmrepository: url: an oci:// URL must name its registry explicitly'
    )
    # no allowlist: every oci:// URL
    assert build("ocirepository", {"url": "oci://registry/app"})


def test_bucket_checks_its_endpoint_gcs_for_gcp_and_refuses_amazon_s3() -> None:
    bucket = {"bucketName": "b", "endpoint": "minio.example:9000"}
    assert build("bucket", bucket, policy=allow("minio.example:9000"))
    assert _registry_refusal("bucket", bucket, allow("minio.example")) == (
        'component "c": bucket: endpoint: host "minio.example:9000" is not in the allowed registries [minio.example]'
    )
    gcp = {**bucket, "provider": "gcp"}
    assert build("bucket", gcp, policy=allow("storage.googleapis.com"))
    assert _registry_refusal("bucket", gcp, allow("minio.example:9000")).startswith(
        'component "c": bucket: endpoint: host "storage.googleapis.com" is not in'
    )
    s3 = {"bucketName": "b", "endpoint": "s3.eu-west-1.AmazonAWS.com", "provider": "aws"}
    assert _registry_refusal("bucket", s3, allow("s3.eu-west-1.AmazonAWS.com")) == (
        'component "c": bucket: endpoint: host "s3.eu-west-1.AmazonAWS.com" is an Amazon S3 endpoint: the S3 '
        "client fetches from the host of the bucket's region, chosen at runtime, which the allowed registries "
        "cannot hold; use provider azure or gcp, or an endpoint that is not Amazon S3"
    )
    assert build("bucket", {**s3, "provider": "azure"}, policy=allow("s3.eu-west-1.AmazonAWS.com"))
    assert build("bucket", s3)  # no allowlist: no rule applies


def test_helmchart_kustomization_and_release_fetch_nothing_so_the_allowlist_passes_them() -> None:
    policy = allow("ghcr.io")
    assert build(
        "helmchart", {"chart": "c", "sourceRef": {"kind": "GitRepository", "name": "r"}}, policy=policy
    )
    assert build("fluxcd-kustomization", kustomization(), policy=policy)
    assert build("helmrelease", release(), policy=policy)


def test_secret_references_build_under_a_policy_that_forbids_explicit_secrets() -> None:
    """These kinds carry references to Secrets created out of band, never secret material: the
    helm rule's secretValues is what such a policy refuses, and a helmrelease names its Secret."""
    forbid = Policy(explicit_secrets_allowed=False)
    helm = {"chart": "podinfo", "source": {"url": "https://charts.example"}, "secretValues": {"token": "t"}}
    caught = refusal("helm", helm, policy=forbid)
    assert isinstance(caught, PolicyRefusal)
    assert caught.refusal_class == REFUSAL_EXPLICIT_SECRET
    spec = build("helmrelease", release(valuesFrom=[{"kind": "Secret", "name": "tokens"}]), policy=forbid)[
        "spec"
    ]
    assert spec["valuesFrom"] == [{"kind": "Secret", "name": "tokens"}]
    git = build(
        "gitrepository", {"url": "https://git.example/r", "secretRef": {"name": "auth"}}, policy=forbid
    )
    assert git["spec"]["secretRef"] == {"name": "auth"}


def test_the_helm_and_oci_rules_refuse_a_generated_source_in_its_terminals_words() -> None:
    policy = allow("charts.example.com", "ghcr.io")
    helm = {"chart": "x", "source": {"url": "https://other.example.com/charts"}}
    assert _registry_refusal("helm", helm, policy) == (
        'component "c": helmrepository: url: host "other.example.com" is not in the allowed registries '
        "[charts.example.com, ghcr.io]"
    )
    kind = {"url": "https://other.example.com/charts"}
    assert _registry_refusal("helmrepository", kind, policy) == _registry_refusal("helm", helm, policy)
    oci = {"version": "1.0.0", "source": {"url": "oci://ghcr.io/"}}
    assert _registry_refusal("oci", oci, policy) == _registry_refusal(
        "ocirepository", {"url": "oci://ghcr.io/"}, policy
    )
    bucket = {"source": {"kind": "Bucket", "endpoint": "s3.amazonaws.com", "bucketName": "b"}, "chart": "c"}
    assert _registry_refusal("helm", bucket, policy).startswith(
        'component "c": bucket: endpoint: host "s3.amazonaws.com" is an Amazon S3 endpoint'
    )
