"""Delivery and raw-object component types: helm, passthrough, manifests, crd (and, as they
land, oci, fluxcd-kustomization and the Flux source kinds)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from farm.core import yamlio
from farm.core.errors import CoreError, PolicyRefusal
from farm.core.policy import (
    REFUSAL_EXPLICIT_SECRET,
    REFUSAL_PRIVILEGED,
    REFUSAL_REGISTRY,
    REFUSAL_REPLICA_MAXIMUM,
    REFUSAL_UNREADABLE_OBJECT,
    Policy,
)
from farm.core.render import RenderRequest, render

PROFILE = b"""apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: test
spec:
  capabilities: {}
"""


def _app(components: list[dict[str, Any]], name: str = "doc", namespace: str = "demo") -> bytes:
    document = {
        "apiVersion": "launcher.gokure.dev/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"components": components},
    }
    return yamlio.dump_document(document).encode()


def build(components: list[dict[str, Any]], policy: Policy | None = None, **kw: Any) -> list[dict[str, Any]]:
    kwargs = {"policy": policy} if policy else {}
    return list(render(RenderRequest(_app(components, **kw), PROFILE), **kwargs).objects)


def error(components: list[dict[str, Any]], policy: Policy | None = None) -> CoreError:
    with pytest.raises(CoreError) as caught:
        build(components, policy)
    return caught.value


def helm(name: str = "app", **props: Any) -> dict[str, Any]:
    return {"name": name, "type": "helm", "properties": props}


def _digest(identity: str) -> str:
    return hashlib.sha256(identity.encode()).hexdigest()[:10]


# --- helm -----------------------------------------------------------------------------------


def test_helm_repository_source_name_is_document_and_identity_digest() -> None:
    url = "https://charts.example.com"
    objects = build([helm(chart="nginx", version="1.2.3", source={"url": url})])
    source, release = objects
    assert source["kind"] == "HelmRepository"
    assert source["metadata"] == {"name": f"doc-source-{_digest('helm:' + url)}", "namespace": "demo"}
    assert source["spec"] == {"interval": "1h0m0s", "url": url}
    assert "labels" not in source["metadata"]
    assert release["spec"]["chart"]["spec"] == {
        "chart": "nginx",
        "version": "1.2.3",
        "sourceRef": {"kind": "HelmRepository", "name": source["metadata"]["name"]},
    }


def test_helm_oci_source_identity_includes_version() -> None:
    url = "oci://ghcr.io/acme/charts/api"
    objects = build([helm(version="2.0.0", source={"url": url})])
    assert objects[0]["kind"] == "OCIRepository"
    assert objects[0]["metadata"]["name"] == f"doc-source-{_digest(f'oci:{url}:2.0.0')}"
    assert objects[0]["spec"]["ref"] == {"tag": "2.0.0"}
    assert objects[1]["spec"]["chartRef"] == {"kind": "OCIRepository", "name": objects[0]["metadata"]["name"]}


def test_helm_components_with_one_identity_share_one_source() -> None:
    source = {"url": "https://charts.example.com"}
    objects = build([helm("a", chart="x", source=source), helm("b", chart="y", source=source)])
    assert [o["kind"] for o in objects] == ["HelmRepository", "HelmRelease", "HelmRelease"]


def test_helm_source_goes_ahead_of_every_tier() -> None:
    infra = helm("a", chart="x", source={"url": "https://one.example.com"})
    infra["annotations"] = {"launcher.gokure.dev/tier": "infra"}
    apps = helm("b", chart="y", source={"url": "https://two.example.com"})
    kinds = [o["kind"] for o in build([apps, infra])]
    assert kinds == ["HelmRepository", "HelmRepository", "HelmRelease", "HelmRelease"]


def test_helm_git_source_sets_revision_strategy_and_json_identity() -> None:
    src = {"kind": "GitRepository", "url": "https://git.example.com/org/repo", "ref": {"branch": "main"}}
    source, release = build([helm(chart="charts/app", source=src)])
    identity = 'git:{"url":"https://git.example.com/org/repo","branch":"main"}'
    assert source["metadata"]["name"] == f"doc-source-{_digest(identity)}"
    assert source["spec"]["ref"] == {"branch": "main"}
    assert release["spec"]["chart"]["spec"]["reconcileStrategy"] == "Revision"


def test_helm_bucket_source_keeps_exactly_its_keys() -> None:
    src = {"kind": "Bucket", "endpoint": "minio.example.com:9000", "bucketName": "charts", "provider": "aws"}
    source, _ = build([helm(chart="app", source=src)])
    assert source["spec"] == {
        "interval": "1h0m0s",
        "endpoint": "minio.example.com:9000",
        "bucketName": "charts",
        "provider": "aws",
    }


def test_helm_reference_form_emits_no_source() -> None:
    objects = build(
        [helm(chart="app", source={"name": "shared", "kind": "HelmRepository", "namespace": "flux"})]
    )
    assert [o["kind"] for o in objects] == ["HelmRelease"]
    assert objects[0]["spec"]["chart"]["spec"]["sourceRef"] == {
        "kind": "HelmRepository",
        "name": "shared",
        "namespace": "flux",
    }


def test_helm_release_carries_label_and_post_renderer() -> None:
    _, release = build([helm(chart="x", source={"url": "https://c.example.com"}, interval="5m")])
    assert release["metadata"]["labels"] == {"launcher.gokure.dev/component": "app"}
    assert release["spec"]["interval"] == "5m0s"
    patches = release["spec"]["postRenderers"][0]["kustomize"]["patches"]
    assert "launcher.gokure.dev/component: app" in patches[0]["patch"]


def test_helm_values_configmap_and_secret_order_in_values_from() -> None:
    objects = build(
        [
            helm(
                chart="x",
                source={"url": "https://c.example.com"},
                valuesMode="configMap",
                values={"b": 1, "a": {"c": True}},
                secretValues={"auth": {"password": "s3cret"}},
                valuesFrom=[{"kind": "ConfigMap", "name": "mine"}],
            )
        ]
    )
    release, configmap, secret = objects[1], objects[2], objects[3]
    text = '{\n  "a": {\n    "c": true\n  },\n  "b": 1\n}'
    assert configmap["data"] == {"values.json": text}
    assert configmap["metadata"]["name"] == f"app-values-{hashlib.sha256(text.encode()).hexdigest()[:10]}"
    assert [entry["kind"] for entry in release["spec"]["valuesFrom"]] == ["ConfigMap", "Secret", "ConfigMap"]
    assert "values" not in release["spec"]
    assert "s3cret" not in yamlio.dump_document(release)
    assert secret["kind"] == "Secret"


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"source": {"url": "https://c.example.com", "namespace": "x"}, "chart": "a"},
            "helm: source.namespace is only valid with a reference to an existing source (source.name and no "
            "inline source); a generated source is created beside the HelmRelease",
        ),
        (
            {"source": {"url": "https://c.example.com"}, "chart": "a", "scopeOverrides": []},
            "helm: delivery: flux does not support scopeOverrides (only a client-side render reads it)",
        ),
        (
            {
                "source": {"url": "https://c.example.com"},
                "chart": "a",
                "values": {"auth": {"password": "x"}},
                "secretValues": {"auth": {"password": "y"}},
            },
            "helm: auth.password is set in both values and secretValues; a path may be set in only one of them.",
        ),
        (
            {"source": {"url": "https://c.example.com"}, "chart": "a", "bogus": 1},
            'helm: unknown field "bogus"',
        ),
        (
            {"source": {"url": "https://c.example.com", "tag": "x"}, "chart": "a"},
            'helm: unknown field "source.tag"',
        ),
        (
            {"source": {"url": "oci://r.example.com/c"}, "chart": "a"},
            "helm: chart: not used with an OCIRepository",
        ),
        ({"source": {"url": "https://c.example.com"}}, "helm: chart: required with a HelmRepository source"),
        (
            {"source": {"url": "https://u:p@c.example.com"}, "chart": "a"},
            "helm: source.url: a URL carrying a user",
        ),
        (
            {
                "source": {
                    "kind": "GitRepository",
                    "url": "https://g.example.com/r",
                    "ref": {"tag": "1", "branch": "m"},
                }
            },
            "helm: source.ref: an inline GitRepository needs exactly one of branch, tag, semver, name, commit, got 2",
        ),
        (
            {"source": {"url": "https://c.example.com"}, "chart": "a", "delivery": "native"},
            "helm: delivery: native",
        ),
        ({"source": {"url": "https://c.example.com"}, "chart": "a", "interval": "-5m"}, "helm: interval:"),
        ({"source": {"url": "https://c.example.com"}, "chart": "a", "interval": "0.5ms"}, "helm: interval:"),
    ],
)
def test_helm_refusals(props: dict[str, Any], message: str) -> None:
    assert error([helm(**props)]).message.startswith(
        f'component "app" (type "helm") in document "doc": {message}'
    )


def test_helm_source_name_equal_to_own_component_is_refused() -> None:
    exc = error([helm("web", chart="x", source={"url": "https://c.example.com", "name": "web"})])
    assert exc.message == (
        'component "web" (type "helm") in document "doc": helm: source.name "web" is the component\'s own name; the generated source is a '
        "component of the document too, so give it another name"
    )


def test_helm_secret_values_refused_by_explicit_secret_policy() -> None:
    exc = error(
        [helm(chart="x", source={"url": "https://c.example.com"}, secretValues={"k": "v"})],
        Policy(explicit_secrets_allowed=False),
    )
    assert isinstance(exc, PolicyRefusal)
    assert exc.refusal_class == REFUSAL_EXPLICIT_SECRET


def test_helm_inline_source_held_to_the_registry_allowlist() -> None:
    policy = Policy(allowed_registries=("charts.example.com",))
    assert build([helm(chart="x", source={"url": "https://charts.example.com/s"})], policy)
    exc = error([helm(chart="x", source={"url": "https://other.example.com/s"})], policy)
    assert isinstance(exc, PolicyRefusal) and exc.refusal_class == REFUSAL_REGISTRY


# --- passthrough ----------------------------------------------------------------------------


def passthrough(obj: Any, name: str = "obj", **props: Any) -> dict[str, Any]:
    return {"name": name, "type": "passthrough", "properties": {"object": obj, **props}}


def test_passthrough_fills_name_and_namespace() -> None:
    (obj,) = build([passthrough({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": 5}})])
    assert obj["metadata"]["name"] == "obj"
    assert obj["metadata"]["namespace"] == "demo"


def test_passthrough_keeps_authored_namespace_and_unknown_kind_is_namespaced() -> None:
    (obj,) = build(
        [passthrough({"apiVersion": "x.example.com/v1", "kind": "Widget", "metadata": {"namespace": "o"}})]
    )
    assert obj["metadata"]["namespace"] == "o"


def test_passthrough_registered_cluster_scoped_kind_gets_no_namespace() -> None:
    (obj,) = build([passthrough({"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer", "spec": {}})])
    assert "namespace" not in obj["metadata"]


def test_passthrough_cluster_scoped_with_namespace_is_refused() -> None:
    exc = error(
        [
            passthrough(
                {
                    "apiVersion": "cert-manager.io/v1",
                    "kind": "ClusterIssuer",
                    "metadata": {"namespace": "other"},
                },
                "ca",
            )
        ]
    )
    assert exc.message == (
        'component "ca": passthrough component "ca": object.metadata.namespace must not be set ("other"): '
        "cert-manager.io/v1 ClusterIssuer is registered as cluster-scoped (set clusterScoped: false if the "
        "cluster serves it namespaced); the Kubernetes API rejects a namespace on a cluster-scoped object"
    )


def test_passthrough_cluster_scoped_false_keeps_a_registered_cluster_kind_namespaced() -> None:
    (obj,) = build(
        [passthrough({"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer"}, clusterScoped=False)]
    )
    assert obj["metadata"]["namespace"] == "demo"


def test_passthrough_cluster_scoped_true_on_namespaced_builtin_is_refused() -> None:
    exc = error([passthrough({"apiVersion": "v1", "kind": "ConfigMap"}, "cm", clusterScoped=True)])
    assert exc.message.endswith(
        "clusterScoped is true, but the Kubernetes API defines v1 ConfigMap as namespaced; remove clusterScoped"
    )


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "v1", "kind": "ConfigMapList", "items": []},
        {"apiVersion": "x.example.com/v1", "kind": "Widget", "items": [{"a": 1}]},
        {"apiVersion": "v1", "kind": "List", "items": None},
    ],
)
def test_passthrough_refuses_lists(obj: dict[str, Any]) -> None:
    assert "declare one component per object" in error([passthrough(obj)]).message


def test_passthrough_secret_refused_only_when_policy_forbids_explicit_secrets() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}, "stringData": {"a": "b"}}
    assert build([passthrough(secret)])
    exc = error([passthrough(secret)], Policy(explicit_secrets_allowed=False))
    assert isinstance(exc, PolicyRefusal)
    assert exc.refusal_class == REFUSAL_EXPLICIT_SECRET
    assert exc.message.startswith(
        'component "obj": passthrough: object Secret "demo/creds": the object is a Secret, and the environment '
        "policy forbids explicit secrets; "
    )
    assert "stringData" not in exc.message and '"b"' not in exc.message


def _deployment(**container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 3,
            "template": {"spec": {"containers": [{"name": "app", "image": "a:1", **container}]}},
        },
    }


def test_passthrough_privileged_container_refused_by_default_policy() -> None:
    exc = error([passthrough(_deployment(securityContext={"privileged": True}), "web")])
    assert isinstance(exc, PolicyRefusal) and exc.refusal_class == REFUSAL_PRIVILEGED
    assert exc.message == (
        'component "web": passthrough: object Deployment "demo/web": spec.template.spec.containers[0] "app": '
        "securityContext.privileged: privileged containers are not allowed by the environment policy"
    )


def test_passthrough_image_rule_and_replica_maximum() -> None:
    assert "rejected: :latest tag not allowed" in error([passthrough(_deployment(image="a:latest"))]).message
    assert "no tag or digest specified" in error([passthrough(_deployment(image="a"))]).message
    exc = error([passthrough(_deployment())], Policy(max_replicas=2))
    assert isinstance(exc, PolicyRefusal) and exc.refusal_class == REFUSAL_REPLICA_MAXIMUM


def test_passthrough_workload_in_unread_version_is_unreadable() -> None:
    obj = _deployment()
    obj["apiVersion"] = "apps/v1beta2"
    exc = error([passthrough(obj)])
    assert isinstance(exc, PolicyRefusal) and exc.refusal_class == REFUSAL_UNREADABLE_OBJECT


# --- manifests and crd ----------------------------------------------------------------------


def manifests(inline: str, **props: Any) -> dict[str, Any]:
    return {"name": "m", "type": "manifests", "properties": {"inline": inline, **props}}


def test_manifests_expand_lists_and_stamp_namespaces() -> None:
    inline = (
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n"
    )
    cm, role = build([manifests(inline)])
    assert cm["metadata"]["namespace"] == "demo"
    assert "namespace" not in role["metadata"]


def test_manifests_unknown_scope_fails_closed_and_overrides_resolve_it() -> None:
    inline = "apiVersion: x.example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
    assert "scope of x.example.com/v1 Widget is unknown" in error([manifests(inline)]).message
    override = [{"apiVersion": "x.example.com/v1", "kind": "Widget", "scope": "Namespaced"}]
    (widget,) = build([manifests(inline, scopeOverrides=override)])
    assert widget["metadata"]["namespace"] == "demo"


def test_manifests_scope_from_crd_in_same_source_and_disagreement() -> None:
    crd = (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.x.example.com}\n"
        "spec: {group: x.example.com, scope: Cluster, names: {kind: Widget}}\n---\n"
        "apiVersion: x.example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
    )
    _, widget = build([manifests(crd)])
    assert "namespace" not in widget["metadata"]
    override = [{"apiVersion": "x.example.com/v1", "kind": "Widget", "scope": "Namespaced"}]
    assert (
        "scopeOverrides says Namespaced but the CustomResourceDefinition"
        in error([manifests(crd, scopeOverrides=override)]).message
    )


def test_manifests_malformed_override_names_entry() -> None:
    override = [{"apiVersion": "v1", "kind": "W", "scope": "cluster"}]
    assert error([manifests("{}", scopeOverrides=override)]).message == (
        'component "m": scopeOverrides[0]: scope "cluster" is invalid; must be "Cluster" or "Namespaced"'
    )


def test_manifests_secret_and_privileged_refusals() -> None:
    secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\n"
    exc = error([manifests(secret)], Policy(explicit_secrets_allowed=False))
    assert exc.message.startswith(
        'component "m": manifest source: object Secret "demo/creds": the object is a Secret'
    )
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {hostNetwork: true, containers: []}\n"
    assert isinstance(error([manifests(pod)]), PolicyRefusal)


def test_manifests_and_crd_refuse_url_sources() -> None:
    for kind in ("manifests", "crd"):
        exc = error([{"name": "m", "type": kind, "properties": {"url": "https://example.com/x.yaml"}}])
        assert "this build's core is pure" in exc.message


def test_crd_refuses_other_kinds() -> None:
    inline = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
    exc = error([{"name": "c", "type": "crd", "properties": {"inline": inline}}])
    assert "a crd source holds only apiextensions.k8s.io CustomResourceDefinitions" in exc.message


# --- oci ------------------------------------------------------------------------------------


def oci(name: str, **props: Any) -> dict[str, Any]:
    return {"name": name, "type": "oci", "properties": props}


def test_oci_alone_emits_its_own_source_first() -> None:
    repo, kustomization = build([oci("app", source={"url": "oci://r.example.com/a"}, version="1.0.0")])
    assert (repo["kind"], repo["metadata"]["name"]) == ("OCIRepository", "app")
    assert repo["metadata"]["labels"] == {"launcher.gokure.dev/component": "app"}
    assert kustomization["spec"] == {
        "interval": "1h0m0s",
        "prune": True,
        "sourceRef": {"kind": "OCIRepository", "name": "app"},
    }


def test_oci_shared_identity_treats_equal_intervals_alike() -> None:
    src = {"url": "oci://r.example.com/a"}
    objects = build([oci("a", source=src, version="1", interval="1h"), oci("b", source=src, version="1")])
    assert [o["kind"] for o in objects] == ["OCIRepository", "Kustomization", "Kustomization"]
    assert objects[0]["metadata"]["name"].startswith("doc-source-")
    assert "labels" not in objects[0]["metadata"]


def test_oci_source_name_forces_the_shared_form() -> None:
    objects = build([oci("a", source={"url": "oci://r.example.com/a", "name": "artifact"}, version="1")])
    assert objects[0]["metadata"] == {"name": "artifact", "namespace": "demo"}
    assert objects[1]["spec"]["sourceRef"]["name"] == "artifact"


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"source": {"url": "oci://r.example.com/a"}}, "oci: version is required"),
        (
            {"source": {"url": "oci://r.example.com/a"}, "version": "1", "wait": True, "healthChecks": [{}]},
            "oci: healthChecks[0].apiVersion: required",
        ),
        (
            {
                "source": {"url": "oci://r.example.com/a"},
                "version": "1",
                "wait": True,
                "healthChecks": [{"apiVersion": "v1", "kind": "Service", "name": "s"}],
            },
            "oci: wait: true waits for every object",
        ),
        (
            {"source": {"url": "oci://r.example.com/a", "name": "x"}, "version": "1"},
            'oci: source.name "x" is',
        ),
        (
            {"source": {"url": "https://r.example.com/a"}, "version": "1"},
            "oci: source.url: must be an oci:// URL",
        ),
    ],
)
def test_oci_refusals(props: dict[str, Any], message: str) -> None:
    assert error([oci("x", **props)]).message.startswith(
        f'component "x" (type "oci") in document "doc": {message}'
    )
