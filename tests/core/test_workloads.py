"""The shared container/pod surface and the deployment-shaped kinds (webservice, worker,
deployment, service, serviceaccount)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from farm.core.components import containers as c
from farm.core.components import podspec as p
from farm.core.components.deployment import build as build_deployment
from farm.core.components.roles import build_webservice, build_worker
from farm.core.components.service import build as build_service_component
from farm.core.documents import ClusterProfile
from farm.core.errors import FieldError, PolicyRefusal
from farm.core.model import BuildContext, ComponentSpec
from farm.core.policy import DEFAULT_POLICY, Policy

PROFILE = ClusterProfile.model_validate(
    {
        "apiVersion": "launcher.gokure.dev/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": "t"},
        "spec": {},
    }
)
IMAGE = "registry.example/app:1.0.0"


def ctx(policy: Policy = DEFAULT_POLICY) -> BuildContext:
    return BuildContext(app_name="app", namespace="ns", profile=PROFILE, policy=policy)


def component(name: str, type_: str, **props: Any) -> ComponentSpec:
    return ComponentSpec(name=name, type=type_, properties={"image": IMAGE, **props})


def refusal(fn: Any, *args: Any) -> str:
    with pytest.raises(FieldError) as caught:
        fn(*args)
    return caught.value.message


# --- image and names -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "image", ["nginx:1.25", "ghcr.io/a/b:v1", "localhost:5000/x:2", "a/b@sha256:" + "a" * 64]
)
def test_tagged_or_digested_images_pass(image: str) -> None:
    c.validate_image(image)


def test_untagged_and_latest_images_are_refused() -> None:
    assert refusal(c.validate_image, "nginx") == (
        'image: image "nginx" rejected: no tag or digest specified; use an explicit version tag or digest'
    )
    assert refusal(c.validate_image, "nginx:latest") == (
        'image: image "nginx:latest" rejected: :latest tag not allowed; use an explicit version tag or digest'
    )
    assert "latest tag not allowed" in refusal(c.validate_image, "nginx:latest@sha256:" + "a" * 64)
    # A registry port is not a tag.
    assert "no tag or digest" in refusal(c.validate_image, "localhost:5000/app")


# --- env ----------------------------------------------------------------------------------------


def test_env_name_rules_hold_at_every_position() -> None:
    assert refusal(c.parse_env, [{"value": "x"}]) == "env[0]: name is required"
    assert refusal(c.parse_env, [{"name": "", "value": "x"}]) == "env[0]: name is required"
    assert refusal(c.parse_env, [{"name": None}]) == "env[0]: name is required"
    assert refusal(c.parse_env, [{"name": 1}]) == "env[0].name: must be a string, got int"
    entries = [{"name": "s", "image": IMAGE, "env": [{"value": "x"}]}]
    assert (
        refusal(c.parse_extra_containers, entries, "sidecars") == 'sidecars[0] "s": env[0]: name is required'
    )


def test_env_value_from_rules() -> None:
    assert refusal(c.parse_env, {"name": "A"}) == "env: must be a list, got map[string]interface {}"
    ok = c.parse_env([{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}}])
    assert ok == [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}}]
    assert (
        refusal(c.parse_env, [{"name": "A", "valueFrom": {"fieldRef": {}}}])
        == "env[0]: fieldRef: fieldPath is required"
    )
    assert "unsupported value" in refusal(
        c.parse_env, [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "status.phase"}}}]
    )
    divisor = [{"name": "A", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "0"}}}]
    assert "divisor" in refusal(c.parse_env, divisor)
    typo = [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k", "optionl": True}}}]
    assert refusal(c.parse_env, typo) == 'env[0]: secretKeyRef: unrecognized key "optionl"'


def test_env_from_needs_exactly_one_ref() -> None:
    assert (
        refusal(c.parse_env_from, [{"prefix": "X_"}])
        == "envFrom[0]: exactly one of configMapRef and secretRef must be set"
    )
    assert refusal(c.parse_env_from, [{"configMapRef": {}}]) == "envFrom[0]: configMapRef: name is required"
    assert (
        refusal(c.parse_env_from, [{"prefx": "A", "secretRef": {"name": "s"}}])
        == 'envFrom[0]: unrecognized key "prefx"'
    )


# --- resources ----------------------------------------------------------------------------------


def test_resource_tiers_and_canonical_quantities() -> None:
    effective = c.build_resource_requirements(
        c.parse_resources({"requests": {"memory": "0.5Gi"}}), DEFAULT_POLICY
    )
    assert effective.resources == {
        "limits": {"memory": "512Mi"},
        "requests": {"cpu": "100m", "memory": "512Mi"},
    }
    policy = Policy(default_cpu_request="200m", default_memory_limit="1Gi")
    effective = c.build_resource_requirements({}, policy)
    assert effective.resources == {
        "limits": {"memory": "1Gi"},
        "requests": {"cpu": "200m", "memory": "128Mi"},
    }


def test_resource_maximum_names_a_generated_default() -> None:
    effective = c.build_resource_requirements({}, Policy(max_cpu="50m"))
    with pytest.raises(PolicyRefusal) as caught:
        c.enforce_resource_maximum(effective, Policy(max_cpu="50m"), "")
    assert (
        caught.value.message
        == "resources.requests.cpu: 100m (generated default) exceeds enforced maximum 50m"
    )


def test_resource_shapes_are_checked() -> None:
    assert refusal(c.parse_resources, "big") == "resources: must be an object, got string"
    assert (
        refusal(c.parse_resources, {"requests": {"foo": 1}})
        == 'resources.requests.foo: unsupported resource name "foo"'
    )
    assert refusal(c.parse_resources, {"requests": {"cpu": 2}, "limits": {"cpu": 1}}) == (
        "resources: cpu: request 2 must not exceed limit 1"
    )
    assert "pages" in refusal(c.parse_resources, {"limits": {"hugepages-2Mi": "3Mi"}})
    assert "not read by this component" in refusal(c.parse_resources, {"claims": []})


# --- probes, lifecycle, securityContext ---------------------------------------------------------


def test_named_probe_port_resolves_against_declared_ports() -> None:
    names = c.PortNames(("http",))
    probe = {"liveness": {"httpGet": {"port": "metrics"}}}
    assert "not declared" in refusal(c.parse_probes, probe, names)
    assert "declares no ports" in refusal(c.parse_probes, probe, c.PortNames(()))
    assert c.parse_probes({"readiness": {"httpGet": {"port": "http"}}}, names) == {
        "readinessProbe": {"httpGet": {"port": "http"}}
    }


def test_probe_rules() -> None:
    names = c.PortNames(())
    assert "must specify a handler" in refusal(c.parse_probes, {"liveness": {"periodSeconds": 3}}, names)
    assert "must be 1" in refusal(
        c.parse_probes, {"liveness": {"exec": {"command": ["x"]}, "successThreshold": 2}}, names
    )
    assert refusal(c.parse_probes, {"live": {}}, names) == 'probes: unrecognized key "live"'


def test_lifecycle_refuses_tcp_socket_and_keeps_sleep_zero() -> None:
    names = c.PortNames(())
    assert "tcpSocket" in refusal(c.parse_lifecycle, {"preStop": {"tcpSocket": "x"}}, names)
    assert c.parse_lifecycle({"preStop": {"sleep": {"seconds": 0}}}, names) == {
        "preStop": {"sleep": {"seconds": 0}}
    }


def test_security_context_contradictions_and_types() -> None:
    assert "runAsNonRoot" in refusal(c.parse_security_context, {"runAsUser": 0, "runAsNonRoot": True})
    assert "allowPrivilegeEscalation" in refusal(
        c.parse_security_context, {"privileged": True, "allowPrivilegeEscalation": False}
    )
    assert (
        refusal(c.parse_security_context, {"privileged": "false"})
        == "securityContext.privileged: must be a boolean, got string"
    )
    assert refusal(c.parse_security_context, {"readOnlyRootFileSystem": True}) == (
        'securityContext: unrecognized key "readOnlyRootFileSystem"'
    )
    assert c.parse_security_context({"allowPrivilegeEscalation": False}) == {
        "allowPrivilegeEscalation": False
    }


# --- volumes and scheduling ---------------------------------------------------------------------


def test_claim_names_double_interior_hyphens() -> None:
    assert p.qualified_claim_name("my-app", "data") == "my--app-data"
    assert p.qualified_claim_name("a-b", "data") != p.qualified_claim_name("a", "b-data")


def test_a_qualified_claim_name_over_253_characters_cuts_the_component_and_keeps_the_volume() -> None:
    component = "-".join(["a"] * 100)  # escaped: 298 characters, past the limit alone
    name = p.qualified_claim_name(component, "data-x")
    digest = hashlib.sha256(component.replace("-", "--").encode()).hexdigest()[:10]
    assert len(name) <= 253
    assert name.endswith(f"-{digest}-data--x")
    assert name.startswith("a--a--")
    assert p.qualified_claim_name(component, "data-y") != name


def test_the_longest_claim_name_a_document_can_give_is_kept_whole() -> None:
    label = "-".join(["a"] * 32)  # 63 characters, the most hyphens a label holds
    name = p.qualified_claim_name(label, label)
    assert len(name) == 189
    assert name == label.replace("-", "--") + "-" + label.replace("-", "--")


def test_volume_rules() -> None:
    assert refusal(p.parse_volumes, [{"name": "d", "mountPath": "/d", "pvc": {"size": "0"}}]).endswith(
        "must be greater than zero, got 0"
    )
    claim_and_size = [{"name": "d", "mountPath": "/d", "pvc": {"claimName": "x", "size": "1Gi"}}]
    assert refusal(p.parse_volumes, claim_and_size).startswith(
        'volume "d": size cannot be set with claimName'
    )
    block_mount = [{"name": "d", "mountPath": "/d", "pvc": {"claimName": "x", "volumeMode": "Block"}}]
    assert "devicePath" in refusal(p.parse_volumes, block_mount)
    twice = [
        {"name": "a", "mountPath": "/d", "emptyDir": {}},
        {"name": "b", "mountPath": "/d", "emptyDir": {}},
    ]
    assert "already mounted" in refusal(p.parse_volumes, twice)
    block = p.parse_volumes(
        [{"name": "d", "devicePath": "/dev/xvda", "pvc": {"claimName": "x", "volumeMode": "Block"}}]
    )
    assert block.devices == [{"name": "d", "devicePath": "/dev/xvda"}] and block.mounts == []


def test_affinity_shorthand() -> None:
    assert p.parse_affinity_shorthand({"topologyKey": "zone"}, "w") == {}
    assert refusal(p.parse_affinity_shorthand, {"podAntiAffinityType": ""}, "w").startswith(
        'affinity.podAntiAffinityType: invalid value ""'
    )
    assert refusal(p.parse_affinity_shorthand, {"zone": "a"}, "w") == 'affinity: unrecognized key "zone"'
    assert refusal(p.parse_affinity_shorthand, {"nodeSelector": {"zone": "a", "rack": 3}}, "w") == (
        'affinity.nodeSelector["rack"]: must be a string, got int'
    )
    required = p.parse_affinity_shorthand(
        {"enablePodAntiAffinity": True, "podAntiAffinityType": "required"}, "w"
    )
    term = required["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term == {"labelSelector": {"matchLabels": {"app": "w"}}, "topologyKey": "kubernetes.io/hostname"}


def test_topology_spread_for_two_and_three_replicas() -> None:
    assert p.default_topology_spread("w", 1) == []
    assert [s["topologyKey"] for s in p.default_topology_spread("w", 2)] == ["kubernetes.io/hostname"]
    three = p.default_topology_spread("w", 3)
    assert [s["whenUnsatisfiable"] for s in three] == ["DoNotSchedule", "ScheduleAnyway"]


def test_toleration_rules() -> None:
    assert "Exists" in refusal(p.parse_tolerations, [{"operator": "Equal", "value": "x"}])
    assert "NoExecute" in refusal(
        p.parse_tolerations, [{"key": "k", "operator": "Exists", "tolerationSeconds": 5}]
    )
    assert (
        refusal(p.parse_tolerations, {"key": "k"})
        == "tolerations: must be a list, got map[string]interface {}"
    )


def test_match_label_keys_rules() -> None:
    constraint = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "matchLabelKeys": ["app"],
    }
    assert "without labelSelector" in refusal(p.parse_topology_spread, [constraint])
    overlapping = {**constraint, "labelSelector": {"matchLabels": {"app": "x"}}}
    assert "already constrained" in refusal(p.parse_topology_spread, [overlapping])


# --- handlers -----------------------------------------------------------------------------------


def test_deployment_is_worker_without_opinions() -> None:
    deployment = build_deployment(component("w", "deployment", replicas=3), ctx()).objects[0]
    worker = build_worker(component("w", "worker", replicas=3), ctx()).objects[0]
    assert "topologySpreadConstraints" not in deployment["spec"]["template"]["spec"]
    assert "serviceAccountName" not in deployment["spec"]["template"]["spec"]
    del worker["spec"]["template"]["spec"]["topologySpreadConstraints"]
    del worker["spec"]["template"]["spec"]["serviceAccountName"]
    assert deployment == worker


def test_role_kinds_refuse_unknown_and_reasoned_properties() -> None:
    assert refusal(build_worker, component("w", "worker", port=80), ctx()) == 'unknown property "port"'
    assert refusal(build_deployment, component("w", "deployment", serviceAccount="x"), ctx()).startswith(
        "serviceAccount: not accepted"
    )
    assert refusal(build_deployment, component("w", "deployment", restartPolicy="Never"), ctx()).startswith(
        "restartPolicy: not accepted"
    )


def test_authored_service_account_suppresses_the_generated_one() -> None:
    generated = build_webservice(component("web", "webservice", serviceAccountName="shared"), ctx())
    assert [o["kind"] for o in generated.objects] == ["Deployment", "Service"]
    assert generated.objects[0]["spec"]["template"]["spec"]["serviceAccountName"] == "shared"


def test_non_rwx_claim_forces_recreate_even_at_zero_replicas() -> None:
    volume = [{"name": "d", "mountPath": "/d", "pvc": {"size": "1Gi"}}]
    generated = build_worker(component("w", "worker", replicas=0, volumes=volume), ctx())
    assert generated.objects[0]["spec"]["strategy"] == {"type": "Recreate"}
    rolling = component("w", "worker", volumes=volume, strategy={"type": "RollingUpdate"})
    assert "requires strategy Recreate" in refusal(build_worker, rolling, ctx())
    shared = [
        {
            "name": "d",
            "mountPath": "/d",
            "pvc": {"size": "1Gi", "accessModes": ["ReadWriteOnce", "ReadWriteMany"]},
        }
    ]
    generated = build_worker(component("w", "worker", replicas=2, volumes=shared), ctx())
    assert generated.objects[0]["spec"]["strategy"] == {}


def test_policy_default_replicas_only_fills_an_absent_count() -> None:
    policy = Policy(default_replicas=4)
    assert build_worker(component("w", "worker"), ctx(policy)).objects[0]["spec"]["replicas"] == 4
    assert build_worker(component("w", "worker", replicas=0), ctx(policy)).objects[0]["spec"]["replicas"] == 0


def test_service_component_defaults_and_refusals() -> None:
    spec = build_service_component(ComponentSpec("api", "service", {"ports": [{"port": 80}]}), ctx()).objects[
        0
    ]["spec"]
    assert spec == {
        "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
        "selector": {"app": "api"},
        "type": "ClusterIP",
    }
    no_ports = ComponentSpec("api", "service", {})
    assert refusal(build_service_component, no_ports, ctx()) == "ports: at least one port is required"
    external = ComponentSpec("db", "service", {"type": "ExternalName", "externalName": "db.example.com."})
    assert build_service_component(external, ctx()).objects[0]["spec"] == {
        "externalName": "db.example.com.",
        "type": "ExternalName",
    }
