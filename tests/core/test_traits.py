"""Unit tests of the trait family: each trait applied to a hand-built Generated, the capability
renderings, the expose lowering and the refusals with their exact messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from farm.core.components import configmap as configmap_component
from farm.core.components import persistentvolumeclaim, secret
from farm.core.documents import ClusterProfile
from farm.core.errors import CoreError, FieldError, PolicyRefusal, TransformError
from farm.core.model import DELIVERY_ANNOTATIONS, BuildContext, ComponentSpec, Generated, TraitSpec
from farm.core.policy import REFUSAL_EXPLICIT_SECRET, REFUSAL_REPLICA_MAXIMUM, Policy
from farm.core.registry import TraitApplication, trait_type
from farm.core.render import RenderRequest, render
from farm.core.transform import evaluate_profile

PROFILE = ClusterProfile.model_validate(
    {
        "apiVersion": "launcher.gokure.dev/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": "lab"},
        "spec": {},
    }
)
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "apps"},
    "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "web", "image": "web:1.0.0"}]}}},
}


def _generated(**overrides: Any) -> Generated:
    workload = copy.deepcopy(DEPLOYMENT)
    values = {
        "objects": [workload],
        "workload": workload,
        "service_name": "web",
        "service_port": 8080,
        "service_port_name": "http",
    }
    values.update(overrides)
    return Generated(**values)


def _apply(
    trait: str,
    props: dict[str, Any],
    generated: Generated | None = None,
    *,
    sealed: bool = False,
    policy=None,
) -> tuple[list[dict[str, Any]], TraitApplication]:
    ctx = BuildContext(app_name="shop", namespace="apps", profile=PROFILE, policy=policy or Policy())
    app = TraitApplication(
        TraitSpec(trait, props, sealed),
        props,
        ComponentSpec("web", "webservice", {}),
        generated or _generated(),
        ctx,
    )
    handler = trait_type(trait)
    assert handler is not None and handler.apply is not None
    return handler.apply(app), app


def _refusal(trait: str, props: dict[str, Any], generated: Generated | None = None, **kw: Any) -> str:
    with pytest.raises(CoreError) as caught:
        _apply(trait, props, generated, **kw)
    return caught.value.message


# --- ingress -------------------------------------------------------------------------------------


def test_ingress_defaults_path_type_and_backend() -> None:
    [ingress], _ = _apply("ingress", {"rules": [{"host": "a.example.com", "paths": [{"path": "/api"}]}]})
    assert ingress["metadata"]["name"] == "web-ingress"
    assert ingress["metadata"]["labels"] == {"app": "web"}
    path = ingress["spec"]["rules"][0]["http"]["paths"][0]
    assert path == {
        "backend": {"service": {"name": "web", "port": {"number": 8080}}},
        "path": "/api",
        "pathType": "Prefix",
    }
    assert "ingressClassName" not in ingress["spec"]


def test_ingress_scope_names_the_object_and_port_name_is_used() -> None:
    [ingress], _ = _apply("ingress", {"scope": "internal", "rules": [{"paths": [{"portName": "http"}]}]})
    assert ingress["metadata"]["name"] == "web-ingress-internal"
    assert ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"] == {"name": "http"}


def test_ingress_refuses_another_port_on_the_implicit_backend() -> None:
    props = {"rules": [{"paths": [{"port": 9090}]}]}
    assert _refusal("ingress", props) == "cannot route implicit backend to port 9090"
    props = {"rules": [{"paths": [{"portName": "metrics"}]}]}
    assert _refusal("ingress", props) == 'cannot route implicit backend to port "metrics"'


def test_ingress_without_a_service_port_is_refused() -> None:
    generated = _generated(service_name=None, service_port=None, service_port_name=None)
    assert (
        _refusal("ingress", {"rules": [{"paths": [{}]}]}, generated) == 'component "web" has no service port'
    )


def test_ingress_trait_level_backend_needs_no_component_port() -> None:
    generated = _generated(service_name=None, service_port=None, service_port_name=None)
    [ingress], _ = _apply("ingress", {"serviceName": "api", "servicePort": 9000, "rules": [{}]}, generated)
    assert ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"] == {
        "name": "api",
        "port": {"number": 9000},
    }
    assert _refusal("ingress", {"serviceName": "api", "rules": [{}]}) == "serviceName requires servicePort"


def test_ingress_annotations_are_stringified() -> None:
    [ingress], _ = _apply("ingress", {"annotations": {"a": True, "b": 30}, "rules": [{}]})
    assert ingress["metadata"]["annotations"] == {"a": "true", "b": "30"}


def test_routing_network_policy_is_platform_reserved() -> None:
    props = {"rules": [{}], "networkPolicy": {"trafficSources": [{"namespace": "edge"}]}}
    assert _refusal("ingress", props).startswith("networkPolicy: platform-reserved property")


def test_traffic_sources_synthesize_one_policy_at_the_bundle_tail() -> None:
    props = {"rules": [{}], "networkPolicy": {"trafficSources": [{"namespace": "edge"}]}}
    objects, app = _apply("ingress", props, sealed=True)
    assert len(objects) == 1
    [policy] = app.bundle_tail
    assert policy["metadata"] == {"name": "web-allow-ingress-traffic", "namespace": "apps"}
    assert policy["spec"] == {
        "podSelector": {"matchLabels": {"launcher.gokure.dev/component": "web"}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "edge"}}}],
                "ports": [{"port": 8080, "protocol": "TCP"}],
            }
        ],
    }


def test_synthesized_policy_opens_the_target_port_on_the_service_selector() -> None:
    generated = _generated(
        facts={
            "service_ports": [{"name": "http", "port": 8080, "targetPort": 3000, "protocol": "TCP"}],
            "service_selector": {"app": "backend"},
        }
    )
    props = {"rules": [{}], "networkPolicy": {"trafficSources": [{"podLabels": {"role": "edge"}}]}}
    _, app = _apply("httproute", props, generated, sealed=True)
    [policy] = app.bundle_tail
    assert policy["spec"]["podSelector"] == {"matchLabels": {"app": "backend"}}
    assert policy["spec"]["ingress"][0]["ports"] == [{"port": 3000, "protocol": "TCP"}]


# --- httproute -----------------------------------------------------------------------------------


def test_httproute_defaults_and_durations() -> None:
    props = {
        "gatewayName": "gw",
        "rules": [
            {
                "matches": [{"path": {}, "headers": [{"name": "x-env", "value": "beta"}]}],
                "timeouts": {"request": "1h", "backendRequest": "90s"},
            }
        ],
    }
    [route], _ = _apply("httproute", props)
    spec = route["spec"]
    assert spec["parentRefs"] == [{"name": "gw", "namespace": "gateway-system"}]
    rule = spec["rules"][0]
    assert rule["backendRefs"] == [{"name": "web", "port": 8080}]
    assert rule["matches"] == [
        {
            "path": {"type": "PathPrefix", "value": "/"},
            "headers": [{"name": "x-env", "value": "beta", "type": "Exact"}],
        }
    ]
    assert rule["timeouts"] == {"request": "1h0m0s", "backendRequest": "1m30s"}


def test_httproute_authored_parent_refs_win_over_the_capability() -> None:
    [route], _ = _apply("httproute", {"parentRefs": [{"name": "mine"}], "gatewayName": "gw"})
    assert route["spec"]["parentRefs"] == [{"name": "mine"}]
    assert route["spec"]["rules"] == [{"backendRefs": [{"name": "web", "port": 8080}]}]


def test_httproute_refusals() -> None:
    assert (
        _refusal("httproute", {"rules": [{"backendRefs": [{"port": 81}]}]})
        == "cannot route implicit backend to port 81"
    )
    message = _refusal("httproute", {"rules": [{"timeouts": {"request": "10"}}]})
    assert message == 'rules[0].timeouts.request: time: missing unit in duration "10"'
    message = _refusal("httproute", {"rules": [{"filters": [{"type": "Teleport"}]}]})
    assert message.startswith("rules[0].filters[0].type: must be one of RequestHeaderModifier")
    assert _refusal("httproute", {"hostname": "x"}).startswith("hostname: unknown property")


def test_httproute_filters_take_the_gateway_api_shape() -> None:
    redirect = {
        "type": "RequestRedirect",
        "requestRedirect": {"scheme": "https", "statusCode": 301, "path": {"type": "ReplaceFullPath"}},
    }
    mirror = {"type": "RequestMirror", "requestMirror": {"percent": 0}}
    auth = {"type": "ExternalAuth", "externalAuth": {"protocol": "HTTP", "http": {"path": ""}, "grpc": None}}
    rule = {"filters": [redirect, mirror, auth]}
    [route], _ = _apply("httproute", {"rules": [rule]})
    assert route["spec"]["rules"][0]["filters"] == [
        {
            "type": "RequestRedirect",
            "requestRedirect": {"scheme": "https", "statusCode": 301, "path": {"type": "ReplaceFullPath"}},
        },
        # a non-pointer backendRef is written even when unauthored; a pointer 0 is kept
        {"type": "RequestMirror", "requestMirror": {"backendRef": {"name": ""}, "percent": 0}},
        # an omitempty "" is dropped, a null pointer is absent
        {
            "type": "ExternalAuth",
            "externalAuth": {"protocol": "HTTP", "backendRef": {"name": ""}, "http": {}},
        },
    ]


def test_httproute_backend_ref_filters_are_decoded_too() -> None:
    header = {"type": "RequestHeaderModifier", "requestHeaderModifier": {"remove": ["X-Debug"]}}
    rule = {"backendRefs": [{"name": "other", "port": 80, "filters": [header]}]}
    [route], _ = _apply("httproute", {"rules": [rule]})
    assert route["spec"]["rules"][0]["backendRefs"] == [{"name": "other", "port": 80, "filters": [header]}]
    bad = {"type": "RequestHeaderModifier", "requestHeaderModifier": {"remove": "X-Debug"}}
    rule = {"backendRefs": [{"name": "other", "port": 80, "filters": [bad]}]}
    assert (
        _refusal("httproute", {"rules": [rule]})
        == "rules[0].backendRefs[0].filters[0].requestHeaderModifier.remove: must be a list, got string"
    )


def test_httproute_filter_refusals_name_the_field() -> None:
    cors = {"type": "CORS", "cors": {"allowOrigins": ["https://a.example"], "maxAge": "10m"}}
    assert _refusal("httproute", {"rules": [{"filters": [cors]}]}) == (
        "rules[0].filters[0].cors.maxAge: must be an integer, got string"
    )
    typo = {"type": "URLRewrite", "urlRewrite": {"host": "a.example"}}
    assert _refusal("httproute", {"rules": [{"filters": [typo]}]}) == (
        'unknown field "rules[0].filters[0].urlRewrite.host"'
    )
    mismatched = {"type": "CORS", "urlRewrite": {}}
    assert _refusal("httproute", {"rules": [{"filters": [mismatched]}]}) == (
        "rules[0].filters[0].urlRewrite: unknown property (allowed: cors, type)"
    )


# --- expose --------------------------------------------------------------------------------------


def _lower(props: dict[str, Any], authored: dict[str, Any] | None = None) -> TraitSpec:
    handler = trait_type("expose")
    assert handler is not None and handler.lower is not None
    ctx = BuildContext(app_name="shop", namespace="apps", profile=PROFILE)
    return handler.lower(
        TraitSpec("expose", authored or {}), props, ComponentSpec("web", "webservice", {}), ctx
    )


def test_expose_lowers_to_a_sealed_ingress() -> None:
    lowered = _lower(
        {"controllerType": "ingress", "ingressClassName": "nginx", "hostnames": ["a.example.com"]}
    )
    assert lowered.type == "ingress" and lowered.sealed
    assert lowered.properties == {
        "ingressClassName": "nginx",
        "rules": [{"host": "a.example.com", "paths": [{"path": "/"}]}],
    }


def test_expose_lowers_to_an_httproute_for_a_gateway() -> None:
    lowered = _lower(
        {
            "controllerType": "gateway",
            "gatewayName": "gw",
            "gatewayNamespace": "edge",
            "hostnames": ["a.example.com"],
        }
    )
    assert lowered.type == "httproute"
    assert lowered.properties["parentRefs"] == [{"name": "gw", "namespace": "edge"}]
    assert lowered.properties["hostnames"] == ["a.example.com"]


def test_expose_refuses_authored_network_policy() -> None:
    with pytest.raises(FieldError, match="networkPolicy: platform-reserved"):
        _lower({"controllerType": "ingress"}, {"networkPolicy": {}})


@pytest.mark.parametrize(
    ("rendering", "message"),
    [
        ({"controllerType": "istio"}, 'controllerType: must be "ingress" or "gateway", got "istio"'),
        ({"controllerType": "ingress"}, 'ingressClassName is required when controllerType is "ingress"'),
        ({"controllerType": "gateway"}, 'gatewayName is required when controllerType is "gateway"'),
        (
            {"controllerType": "gateway", "gatewayName": "gw", "ingressClassName": "nginx"},
            'ingressClassName: not allowed when controllerType is "gateway"',
        ),
    ],
)
def test_expose_rendering_refusals(rendering: dict[str, Any], message: str) -> None:
    handler = trait_type("expose")
    assert handler is not None and handler.validate_rendering is not None
    with pytest.raises(FieldError) as caught:
        handler.validate_rendering(rendering, "expose")
    assert caught.value.message == message


def test_expose_gateway_rendering_defaults_namespace() -> None:
    handler = trait_type("expose")
    assert handler is not None and handler.validate_rendering is not None
    rendering = handler.validate_rendering({"controllerType": "gateway", "gatewayName": "gw"}, "expose")
    assert rendering["gatewayNamespace"] == "gateway-system"


# --- capability renderings through the profile -----------------------------------------------------


def _profile(capabilities: dict[str, Any]) -> ClusterProfile:
    return ClusterProfile.model_validate(
        {
            "apiVersion": "launcher.gokure.dev/v1alpha1",
            "kind": "ClusterProfile",
            "metadata": {"name": "lab"},
            "spec": {"capabilities": capabilities},
        }
    )


def test_certificate_and_external_secret_renderings_are_defaulted() -> None:
    evaluated = evaluate_profile(
        _profile(
            {
                "certificate": {"rendering": {"issuerRef": {"name": "le"}}},
                "external-secret.aws": {
                    "rendering": {"secretStoreRef": {"name": "aws"}, "refreshInterval": "5m"}
                },
            }
        )
    )
    assert evaluated["certificate"] == {"issuerRef": {"name": "le", "kind": "ClusterIssuer"}}
    assert evaluated["external-secret.aws"]["secretStoreRef"] == {"name": "aws", "kind": "ClusterSecretStore"}


@pytest.mark.parametrize(
    ("capabilities", "message"),
    [
        (
            {"certificate": {"rendering": {"issuerRef": {}}}},
            'capability "certificate": issuerRef.name is required',
        ),
        (
            {"external-secret": {"rendering": {}}},
            'capability "external-secret": secretStoreRef.name is required',
        ),
        (
            {"pvc": {"rendering": {"size": "1Gi"}}},
            'capability "pvc": unknown rendering key "size" for trait "pvc" (allowed: storageClassName)',
        ),
        (
            {"networkpolicy": {"rendering": {"x": 1}}},
            'capability "networkpolicy": rendering key "x" is not allowed: trait "networkpolicy" takes no rendering keys',
        ),
    ],
)
def test_rendering_refusals_name_the_capability(capabilities: dict[str, Any], message: str) -> None:
    with pytest.raises(CoreError) as caught:
        evaluate_profile(_profile(capabilities))
    assert caught.value.message == f'ClusterProfile "lab": {message}'


# --- certificate, external-secret, configmap --------------------------------------------------------


def test_certificate_defaults_durations_and_carries_no_labels() -> None:
    props = {
        "secretName": "web-tls",
        "dnsNames": ["a.example.com"],
        "issuerRef": {"name": "le", "kind": "Issuer"},
    }
    [certificate], _ = _apply("certificate", props)
    assert certificate["metadata"] == {"name": "web-tls", "namespace": "apps"}
    assert certificate["spec"]["duration"] == "2160h0m0s"
    assert certificate["spec"]["renewBefore"] == "360h0m0s"
    assert certificate["spec"]["issuerRef"] == {"name": "le", "kind": "Issuer"}
    assert _refusal("certificate", {"issuerRef": {"name": "le"}}) == "secretName is required"


def test_external_secret_mounts_and_injects() -> None:
    props = {
        "secretName": "creds",
        "secretStoreRef": {"name": "vault"},
        "envFrom": True,
        "mountPath": "/run/creds",
    }
    generated = _generated()
    [external], _ = _apply("external-secret", props, generated)
    assert external["spec"]["refreshInterval"] == "1h0m0s"
    pod = generated.pod_spec()
    assert pod is not None
    container = pod["containers"][0]
    assert container["envFrom"] == [{"secretRef": {"name": "creds"}}]
    assert container["volumeMounts"] == [{"mountPath": "/run/creds", "name": "creds"}]
    assert pod["volumes"] == [{"name": "creds", "secret": {"secretName": "creds"}}]


def test_configmap_trait_refuses_non_string_data() -> None:
    assert _refusal("configmap", {"name": "cfg", "data": {"n": 3}}) == "data.n: must be a string, got int"


def test_configmap_trait_needs_a_workload_to_mount() -> None:
    generated = Generated(objects=[])
    message = _refusal("configmap", {"name": "cfg", "mountPath": "/etc/cfg"}, generated)
    assert message == 'component "web" generates no workload the trait "configmap" can act on'


# --- scaler ----------------------------------------------------------------------------------------


def test_scaler_with_pdb() -> None:
    objects, _ = _apply(
        "scaler", {"minReplicas": 2, "maxReplicas": 5, "targetCPUUtilization": 60, "enablePDB": True}
    )
    hpa, pdb = objects
    assert hpa["spec"]["metrics"][0]["resource"]["target"] == {
        "type": "Utilization",
        "averageUtilization": 60,
    }
    assert pdb["metadata"]["name"] == "web-pdb"
    assert pdb["spec"] == {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}


def test_scaler_refusals() -> None:
    assert _refusal("scaler", {"minReplicas": 2}) == "maxReplicas is required"
    assert (
        _refusal("scaler", {"minReplicas": 4, "maxReplicas": 3})
        == "maxReplicas: must be >= minReplicas (4), got 3"
    )
    assert _refusal("scaler", {"maxReplicas": 3, "enablePDB": True}).startswith("enablePDB: minAvailable 50%")
    generated = _generated(facts={"non_rwx_claim": "data"})
    assert 'volume "data" is a non-RWX PVC' in _refusal("scaler", {"maxReplicas": 2}, generated)
    with pytest.raises(PolicyRefusal) as caught:
        _apply("scaler", {"maxReplicas": 9}, policy=Policy(max_replicas=4))
    assert caught.value.refusal_class == REFUSAL_REPLICA_MAXIMUM
    assert caught.value.message == "maxReplicas: replicas 9 exceeds enforced maximum 4"


def test_scaler_only_on_deployment_kinds() -> None:
    handler = trait_type("scaler")
    assert handler is not None and handler.component_types == frozenset(
        {"deployment", "webservice", "worker"}
    )


# --- decorators ------------------------------------------------------------------------------------


def test_topology_spread_uses_replicas_and_refuses_other_kinds() -> None:
    generated = _generated()
    _apply("topology-spread", {}, generated)
    pod = generated.pod_spec()
    assert pod is not None
    assert [c["topologyKey"] for c in pod["topologySpreadConstraints"]] == ["kubernetes.io/hostname"]
    stateful = copy.deepcopy(DEPLOYMENT) | {"kind": "StatefulSet"}
    message = _refusal("topology-spread", {}, Generated(objects=[stateful], workload=stateful))
    assert message == 'component "web" generates no Deployment the trait can act on'


def test_security_context_restricted_backfills_pod_and_replaces_containers() -> None:
    generated = _generated()
    pod = generated.pod_spec()
    assert pod is not None
    pod["securityContext"] = {"runAsNonRoot": False}
    pod["containers"][0]["securityContext"] = {"privileged": True}
    _apply("security-context", {"level": "restricted"}, generated)
    assert pod["securityContext"] == {"runAsNonRoot": False, "seccompProfile": {"type": "RuntimeDefault"}}
    assert pod["containers"][0]["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert "privileged" in pod["containers"][0]["securityContext"]
    assert pod["containers"][0]["securityContext"]["privileged"] is False
    assert (
        _refusal("security-context", {"level": "lax"})
        == 'level: must be one of privileged, baseline, restricted, got "lax"'
    )


def test_prune_protection_records_a_delivery_intent() -> None:
    generated = _generated()
    objects, _ = _apply("prune-protection", {}, generated)
    assert objects == []
    assert generated.facts[DELIVERY_ANNOTATIONS] == {"kustomize.toolkit.fluxcd.io/prune": "disabled"}
    assert _refusal("force-replace", {"enabled": True}).startswith("enabled: unknown property")


def test_rbac_refuses_a_component_without_service_account() -> None:
    props = {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    message = _refusal("rbac", props)
    assert message.startswith('component "web" runs its pods under no ServiceAccount')
    generated = _generated()
    pod = generated.pod_spec()
    assert pod is not None
    pod["serviceAccountName"] = "runner"
    role, binding = _apply("rbac", props, generated)[0]
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "runner", "namespace": "apps"}]


def test_cilium_networkpolicy_needs_selector_and_rules() -> None:
    assert _refusal("cilium-networkpolicy", {"name": "p", "ingress": [{}]}).startswith(
        "endpointSelector is required"
    )
    message = _refusal("cilium-networkpolicy", {"name": "p", "endpointSelector": {}})
    assert message == "a rule needs at least one entry in ingress or egress"


def test_networkpolicy_lists_a_direction_when_its_key_is_present() -> None:
    [policy], _ = _apply("networkpolicy", {"egress": []})
    assert policy["spec"] == {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Egress"]}


def test_volsync_defaults() -> None:
    [source], _ = _apply("volsync", {"sourcePVC": "data", "schedule": "0 3 * * *"})
    assert source["metadata"] == {"name": "data-backup", "namespace": "apps"}
    assert source["spec"]["restic"] == {
        "copyMethod": "Snapshot",
        "customCA": {},
        "pruneIntervalDays": 14,
        "repository": "web-volsync-secret",
        "retain": {"daily": 7, "weekly": 4, "monthly": 3},
    }


def test_volsync_retain_keeps_within() -> None:
    props = {"sourcePVC": "data", "retain": {"hourly": 6, "within": "3d"}}
    [source], _ = _apply("volsync", props)
    assert source["spec"]["restic"]["retain"] == {"hourly": 6, "within": "3d"}
    props = {"sourcePVC": "data", "retain": {"within": 3}}
    assert _refusal("volsync", props) == "retain.within: must be a string, got int"


# --- components: persistentvolumeclaim, configmap, secret -----------------------------------------


def _ctx(policy: Policy | None = None, capabilities: dict[str, Any] | None = None) -> BuildContext:
    return BuildContext("shop", "apps", PROFILE, policy or Policy(), capabilities or {})


def test_claim_takes_the_pvc_capability_class_unless_authored() -> None:
    ctx = _ctx(capabilities={"pvc": {"storageClassName": "fast"}})
    claim = persistentvolumeclaim.build(ComponentSpec("data", "persistentvolumeclaim", {"size": "1Gi"}), ctx)
    assert claim.objects[0]["spec"]["storageClassName"] == "fast"
    authored = {"size": "1Gi", "storageClassName": ""}
    claim = persistentvolumeclaim.build(ComponentSpec("data", "persistentvolumeclaim", authored), ctx)
    assert claim.objects[0]["spec"]["storageClassName"] == ""


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, "size: required (no size is authored and the environment policy sets no storage default)"),
        ({"size": "0"}, 'size: must be a positive quantity, got "0"'),
        ({"size": "1Gi", "accessModes": []}, "accessModes: at least one access mode is required"),
        (
            {"size": "1Gi", "selector": {}},
            "selector: an empty selector matches every volume; set matchLabels or matchExpressions",
        ),
        (
            {"size": "1Gi", "dataSource": {"kind": "PersistentVolumeClaim", "name": "x"}},
            "dataSource: not supported: use dataSourceRef, which the API server mirrors into it",
        ),
    ],
)
def test_claim_refusals(props: dict[str, Any], message: str) -> None:
    with pytest.raises(TransformError) as caught:
        persistentvolumeclaim.build(ComponentSpec("data", "persistentvolumeclaim", props), _ctx())
    assert caught.value.message == message


def test_configmap_component_carries_the_app_label_as_secret_does_and_checks_keys() -> None:
    built = configmap_component.build(ComponentSpec("cfg", "configmap", {"data": {"a": "1"}}), _ctx())
    assert built.objects[0]["metadata"]["labels"] == {"app": "cfg"}
    with pytest.raises(FieldError, match='binaryData.a: key "a" is also in data'):
        configmap_component.build(
            ComponentSpec("cfg", "configmap", {"data": {"a": "1"}, "binaryData": {"a": "eA=="}}), _ctx()
        )


def test_secret_component_encodes_everything_under_data() -> None:
    built = secret.build(ComponentSpec("tok", "secret", {"stringData": {"k": "v"}}), _ctx())
    [obj] = built.objects
    assert obj["data"] == {"k": "dg=="} and "stringData" not in obj
    assert obj["metadata"]["labels"] == {"app": "tok"}
    with pytest.raises(FieldError) as caught:
        secret.build(ComponentSpec("tok", "secret", {"stringData": {"k": 5}}), _ctx())
    assert caught.value.message == "stringData.k: must be a string, got int"


def test_secret_component_is_refused_when_the_policy_forbids_explicit_secrets() -> None:
    with pytest.raises(PolicyRefusal) as caught:
        secret.build(
            ComponentSpec("tok", "secret", {"stringData": {"k": "v"}}),
            _ctx(Policy(explicit_secrets_allowed=False)),
        )
    assert caught.value.refusal_class == REFUSAL_EXPLICIT_SECRET
    assert caught.value.message == (
        "secret: the environment policy forbids explicit secrets; reference a Secret created out of band instead"
    )


# --- through the transform -------------------------------------------------------------------------


APP = b"""apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: shop
spec:
  components:
    - name: web
      type: webservice
      properties:
        image: registry.example.com/web:1.0.0
      traits:
        - type: expose
          properties:
            hostnames: [shop.example.com]
"""


def test_expose_without_capability_names_the_trait_and_profile() -> None:
    profile = b"""apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: bare
spec: {}
"""
    with pytest.raises(CoreError) as caught:
        render(RenderRequest(APP, profile))
    assert caught.value.message == (
        'component "web" trait "expose": capability "expose" not found in ClusterProfile "bare": '
        "oam: capability key not found in ClusterProfile"
    )
