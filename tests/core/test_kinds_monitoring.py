"""Prometheus operator kind components: the seed's refusals with exact messages and inputs no shared
case shows (seed 002, servicemonitor/podmonitor/prometheus-probe/prometheusrule, alertmanager,
thanosruler, prometheus)."""

from __future__ import annotations

from farm.core.policy import Policy

from .kindbuild import build, message

SELECTOR = {"matchLabels": {"app": "web"}}
STRICT = Policy(
    max_replicas=0,
    max_cpu="1",
    max_memory="128Mi",
    max_storage="1Gi",
    allowed_registries=("registry.example.com",),
    explicit_secrets_allowed=False,
)

# --- servicemonitor, podmonitor, prometheus-probe, prometheusrule ----------------------------------------


def test_servicemonitor_requires_selector_and_endpoints() -> None:
    assert message("servicemonitor", {"endpoints": []}) == (
        'component "c": selector: required (the Prometheus operator API requires this field)'
    )
    assert message("servicemonitor", {"selector": {}}) == (
        'component "c": endpoints: required (the Prometheus operator API requires this field)'
    )


def test_podmonitor_requires_selector_and_writes_null_endpoints() -> None:
    assert message("podmonitor", {}) == (
        'component "c": selector: required (the Prometheus operator API requires this field)'
    )
    spec = build("podmonitor", {"selector": SELECTOR})["spec"]
    assert spec == {"selector": SELECTOR, "namespaceSelector": {}, "podMetricsEndpoints": None}


def test_oauth2_and_match_expression_required_paths() -> None:
    oauth = {"clientId": {"secret": {"name": "o", "key": "id"}}, "clientSecret": {"name": "o", "key": "s"}}
    props = {"selector": {}, "endpoints": [{"port": "web"}, {"oauth2": oauth}]}
    assert message("servicemonitor", props) == (
        'component "c": endpoints[1].oauth2.tokenUrl: required (the Prometheus operator API requires this field)'
    )
    props = {"selector": {"matchExpressions": [{"key": "tier"}]}, "endpoints": []}
    assert message("servicemonitor", props) == (
        'component "c": selector.matchExpressions[0].operator: required '
        "(the Prometheus operator API requires this field)"
    )


def test_relabeling_action_and_prober_path_cannot_be_empty() -> None:
    props = {"selector": {}, "podMetricsEndpoints": [{"relabelings": [{"action": ""}]}]}
    assert message("podmonitor", props) == (
        'component "c": podMetricsEndpoints[0].relabelings[0].action: "" cannot be carried by the '
        "Prometheus operator API types (the field is omitted when zero, so the API server would apply "
        'its default "replace")'
    )
    assert message("prometheus-probe", {"prober": {"url": "b:9115", "path": ""}}) == (
        'component "c": prober.path: "" cannot be carried by the Prometheus operator API types (the field '
        'is omitted when zero, so the API server would apply its default "/probe")'
    )


def test_probe_needs_prober_url_even_unauthored_or_empty() -> None:
    required = 'component "c": prober.url: required (the Prometheus operator API requires this field)'
    assert message("prometheus-probe", {"module": "http_2xx"}) == required
    assert message("prometheus-probe", {"prober": {"url": ""}}) == required
    assert message(
        "prometheus-probe", {"prober": {"url": "b:1"}, "params": [{"name": "a"}, {"name": ""}]}
    ) == ('component "c": params[1].name: required (the Prometheus operator API requires this field)')


def test_scrape_settings_keep_pointer_zeros_and_canonicalise_quantities() -> None:
    obj = build(
        "servicemonitor",
        {
            "objectName": "renamed",
            "labels": {"release": "kube-prometheus"},
            "selector": {},
            "endpoints": [{"port": "web", "honorLabels": False, "filterRunning": False, "tlsConfig": {}}],
            "sampleLimit": 0,
            "labelLimit": 0,
            "nativeHistogramMinBucketFactor": 1.1,
            "scrapeClassicHistograms": False,
            "attachMetadata": {"node": False},
        },
        name="web",
    )
    assert obj["metadata"] == {
        "name": "renamed",
        "namespace": "default",
        "labels": {"release": "kube-prometheus", "launcher.gokure.dev/component": "web"},
    }
    assert obj["spec"] == {
        "selector": {},
        "namespaceSelector": {},
        "endpoints": [{"port": "web", "filterRunning": False, "tlsConfig": {"ca": {}, "cert": {}}}],
        "sampleLimit": 0,
        "labelLimit": 0,
        "nativeHistogramMinBucketFactor": "1100m",
        "scrapeClassicHistograms": False,
        "attachMetadata": {"node": False},
    }


def test_negative_limit_and_unknown_nested_key_refused() -> None:
    assert message("podmonitor", {"selector": {}, "sampleLimit": -1}) == (
        'component "c": sampleLimit: must be an integer within uint64 range, got -1'
    )
    props = {"selector": {}, "endpoints": [{"relabelings": [{"acton": "keep"}]}]}
    assert (
        message("servicemonitor", props) == 'component "c": unknown field "endpoints[0].relabelings[0].acton"'
    )


def test_probe_ingress_target_writes_its_structs() -> None:
    spec = build(
        "prometheus-probe",
        {"prober": {"url": "b:9115"}, "targets": {"ingress": {"relabelingConfigs": [{"action": "keep"}]}}},
    )["spec"]
    assert spec["targets"] == {
        "ingress": {"selector": {}, "namespaceSelector": {}, "relabelingConfigs": [{"action": "keep"}]}
    }


def test_prometheusrule_groups_expr_and_limit() -> None:
    spec = build(
        "prometheusrule",
        {
            "groups": [
                {
                    "name": "",
                    "limit": 0,
                    "interval": "1m",
                    "rules": [
                        {"record": "job:up:sum", "expr": "sum(up) by (job)"},
                        {"alert": "Always", "expr": 1, "for": "5m", "labels": {"severity": "none"}},
                    ],
                }
            ]
        },
    )["spec"]
    assert spec == {
        "groups": [
            {
                "name": "",
                "limit": 0,
                "interval": "1m",
                "rules": [
                    {"record": "job:up:sum", "expr": "sum(up) by (job)"},
                    {"alert": "Always", "expr": 1, "for": "5m", "labels": {"severity": "none"}},
                ],
            }
        ]
    }
    assert build("prometheusrule", {})["spec"] == {}


def test_prometheusrule_requires_group_name_and_rule_expr() -> None:
    assert message("prometheusrule", {"groups": [{"rules": []}]}) == (
        'component "c": groups[0].name: required (the Prometheus operator API requires this field)'
    )
    assert message("prometheusrule", {"groups": [{"name": "g", "rules": [{"alert": "A"}]}]}) == (
        'component "c": groups[0].rules[0].expr: required (the Prometheus operator API requires this field)'
    )


def test_scrape_kinds_build_the_same_under_a_strict_policy() -> None:
    props = {
        "selector": {},
        "endpoints": [{"port": "web", "proxyUrl": "http://user:pw@proxy:3128", "params": {"t": ["x"]}}],
    }
    assert build("servicemonitor", props, policy=STRICT) == build("servicemonitor", props)


# --- thanosruler ------------------------------------------------------------------------------------------

PO_DEFAULT = (
    "cannot be carried by the Prometheus operator API types (the field is omitted when zero, so the API"
)


def test_thanosruler_external_labels_rename_and_other_spelling_refused() -> None:
    obj = build("thanosruler", {"labels": {"team": "a"}, "externalLabels": {"cluster": "eu"}})
    assert obj["metadata"]["labels"] == {"team": "a", "launcher.gokure.dev/component": "c"}
    assert obj["spec"] == {"labels": {"cluster": "eu"}, "resources": {}}
    assert message("thanosruler", {"Labels": {"cluster": "eu"}}) == (
        'component "c": Labels: not a thanosruler property: the ThanosRuler\'s external labels are the '
        "externalLabels property, and labels are the object's own labels"
    )


def test_thanosruler_defaulted_spec_strings_refused_but_pod_string_defaults_are_not() -> None:
    assert message("thanosruler", {"evaluationInterval": ""}) == (
        f'component "c": evaluationInterval: "" {PO_DEFAULT} server would apply its default "15s")'
    )
    assert message("thanosruler", {"portName": ""}).endswith('its default "web")')
    assert message("thanosruler", {"retention": ""}).endswith('its default "24h")')
    container = {"name": "x", "image": "a:1", "imagePullPolicy": "", "readinessProbe": {"periodSeconds": 0}}
    assert message("thanosruler", {"containers": [container]}) == (
        f'component "c": containers[0].readinessProbe.periodSeconds: 0 {PO_DEFAULT} server would apply its '
        "default 10)"
    )
    del container["readinessProbe"]
    assert build("thanosruler", {"containers": [container]})["spec"]["containers"] == [
        {"name": "x", "image": "a:1", "resources": {}}
    ]


def test_thanosruler_excluded_group_written_or_refused() -> None:
    entries = [
        {"namespace": "a", "resource": "prometheusrules"},
        {"namespace": "b", "resource": "x", "group": ""},
    ]
    assert message("thanosruler", {"excludedFromEnforcement": entries}) == (
        'component "c": excludedFromEnforcement[1].group: empty: the API admits only monitoring.coreos.com; '
        "leave group out, or write monitoring.coreos.com"
    )
    entries[1]["group"] = "example.com"
    spec = build("thanosruler", {"excludedFromEnforcement": entries})["spec"]
    assert [e["group"] for e in spec["excludedFromEnforcement"]] == ["monitoring.coreos.com", "example.com"]
    assert message("thanosruler", {"excludedFromEnforcement": [{"namespace": "a"}]}) == (
        'component "c": excludedFromEnforcement[0].resource: required (the Prometheus operator API requires '
        "this field)"
    )


def test_thanosruler_required_nested_fields() -> None:
    cases = {
        "hostAliases[1].hostnames": {
            "hostAliases": [{"ip": "1.1.1.1", "hostnames": ["a"]}, {"ip": "1.1.1.2"}]
        },
        "updateStrategy.type": {"updateStrategy": {}},
        "additionalArgs[0].name": {"additionalArgs": [{"value": "x"}]},
        "remoteWrite[0].url": {"remoteWrite": [{}]},
        "remoteWrite[0].azureAd.oauth.clientSecret": {
            "remoteWrite": [{"url": "u", "azureAd": {"oauth": {"clientId": "a", "tenantId": "t"}}}]
        },
        "prometheusRulesExcludedFromEnforce[0].ruleName": {
            "prometheusRulesExcludedFromEnforce": [{"ruleNamespace": "a"}]
        },
    }
    for path, props in cases.items():
        assert message("thanosruler", props) == (
            f'component "c": {path}: required (the Prometheus operator API requires this field)'
        )


def test_thanosruler_container_patches() -> None:
    assert message("thanosruler", {"containers": [{"name": "proxy"}]}) == (
        'component "c": containers[0] "proxy": names no image, and the Prometheus operator generates no '
        "container of that name to merge it into; name an image, or the container it patches (thanos-ruler, "
        "config-reloader)"
    )
    assert message("thanosruler", {"initContainers": [{"name": "prepare"}]}) == (
        'component "c": initContainers[0] "prepare": names no image, and the Prometheus operator merges no '
        "entry of initContainers into a container of its own; name an image"
    )
    twice = [{"name": "config-reloader"}, {"name": "config-reloader"}]
    assert message("thanosruler", {"containers": twice}).startswith(
        'component "c": containers[1] "config-reloader": the name is listed already at containers[0], '
    )
    assert message("thanosruler", {"initContainers": [{"name": "thanos-ruler", "image": "a:1"}]}).startswith(
        'component "c": initContainers[0] "thanos-ruler": the name is also that of the container the '
        "Prometheus operator generates, "
    )


def test_thanosruler_tag_rule_and_resources_without_policy() -> None:
    assert message("thanosruler", {"image": "quay.io/thanos/thanos:latest"}) == (
        'component "c": image: image "quay.io/thanos/thanos:latest" rejected: :latest tag not allowed; use an '
        "explicit version tag or digest"
    )
    # a patch that names the image replaces image, which is then not held
    patched = {"image": "thanos:latest", "containers": [{"name": "thanos-ruler", "image": "thanos:v1"}]}
    assert build("thanosruler", patched)["spec"]["image"] == "thanos:latest"
    assert message("thanosruler", {"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}) == (
        'component "c": resources: cpu: request 2 must not exceed limit 1'
    )
    proxy = {
        "name": "proxy",
        "image": "p:1",
        "resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}},
    }
    assert message("thanosruler", {"containers": [proxy]}) == (
        'component "c": containers[0] "proxy": resources: memory: request 2Gi must not exceed limit 1Gi'
    )


def test_thanosruler_operator_memory_request_against_the_limit() -> None:
    assert message("thanosruler", {"resources": {"limits": {"memory": "100Mi"}}}) == (
        'component "c": resources: memory: the unset request the Prometheus operator fills as 200Mi must not '
        "exceed limit 100Mi; name a memory request, or a limit of at least 200Mi"
    )
    patch = {"name": "thanos-ruler", "resources": {"limits": {"memory": "100Mi"}}}
    assert message("thanosruler", {"containers": [patch]}).startswith(
        'component "c": resources with containers[0] "thanos-ruler" merged over it: memory: the unset request '
    )
    patch["resources"]["requests"] = {"memory": "64Mi"}
    assert build("thanosruler", {"containers": [patch]})["spec"]["containers"] == [patch]


def test_thanosruler_operator_names() -> None:
    assert message("thanosruler", {"volumes": [{"name": "tls-assets", "emptyDir": {}}]}) == (
        'component "c": volumes[0] "tls-assets": the name is a volume the Prometheus operator adds to every '
        "ThanosRuler's pods; name the volume otherwise"
    )
    assert "thanos-ruler-c-rulefiles-2" in message(
        "thanosruler", {"volumes": [{"name": "thanos-ruler-c-rulefiles-2", "emptyDir": {}}]}
    )
    # the Secret-key volume only where its file field does not take precedence
    volume = {"name": "objstorage-config", "emptyDir": {}}
    store = {"name": "s", "key": "k"}
    assert "objstorage-config" in message("thanosruler", {"objectStorageConfig": store, "volumes": [volume]})
    build("thanosruler", {"objectStorageConfig": store, "objectStorageConfigFile": "/f", "volumes": [volume]})
    assert message("thanosruler", {"volumeMounts": [{"name": "v", "mountPath": "/etc/thanos/certs/"}]}) == (
        'component "c": volumeMounts[0] "/etc/thanos/certs/": the path is one the Prometheus operator mounts a '
        "volume at in the thanos-ruler container; mount the volume elsewhere"
    )
    assert message("thanosruler", {}, name="r" * 39).endswith(
        "which is not a DNS-1123 label (at most 63 characters, no dots); the component name may have at most "
        "38 characters and no dot"
    )
    assert build("thanosruler", {}, name="r" * 38)["metadata"]["name"] == "r" * 38
    assert 'ThanosRuler "a.b"' in message("thanosruler", {"objectName": "a.b"})


def test_thanosruler_port_and_service_names() -> None:
    assert message("thanosruler", {"portName": "grpc"}).startswith(
        'component "c": portName: "grpc" is the name of a port the Prometheus operator adds to the '
        "thanos-ruler container, "
    )
    assert "governing Service" in message("thanosruler", {"portName": "grpc", "listenLocal": True})
    build("thanosruler", {"portName": "grpc", "listenLocal": True, "serviceName": "mine"})
    assert message("thanosruler", {"serviceName": "1alerts"}).startswith(
        'component "c": serviceName: "1alerts" is not a valid Service name, which must be a DNS-1035 label: '
    )


def test_thanosruler_storage_arms() -> None:
    assert message("thanosruler", {"storage": {}}).startswith(
        'component "c": storage.volumeClaimTemplate.spec.resources.requests.storage: required'
    )
    beside = {"emptyDir": {}, "volumeClaimTemplate": {"metadata": {"name": "other"}}}
    assert 'creates the data volume as "thanos-ruler-c-data"' in message("thanosruler", {"storage": beside})
    beside["volumeClaimTemplate"]["metadata"]["name"] = "thanos-ruler-c-data"
    build("thanosruler", {"storage": beside})
    zero = {"volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "0"}}}}}
    assert "is not a positive storage request" in message("thanosruler", {"storage": zero})


def test_thanosruler_policy() -> None:
    assert (
        message("thanosruler", {}, policy=Policy(max_replicas=0))
        == 'component "c": replicas 1 exceeds enforced maximum 0'
    )
    registries = Policy(allowed_registries=("registry.example.com",))
    assert message("thanosruler", {}, policy=registries).startswith(
        'component "c": image: unset, so the Prometheus operator chooses the image the pods run, '
    )
    assert message("thanosruler", {"image": "registry.example.com/thanos:v1"}, policy=registries).startswith(
        'component "c": the image of the config-reloader container (containers): unset, '
    )
    reloader = {"name": "config-reloader", "image": "registry.example.com/reloader:v1"}
    build(
        "thanosruler",
        {"image": "registry.example.com/thanos:v1", "containers": [reloader]},
        policy=registries,
    )
    assert message("thanosruler", {}, policy=Policy(max_memory="128Mi")) == (
        'component "c": resources, whose unset memory request the Prometheus operator fills as 200Mi: memory '
        'request "200Mi" exceeds enforced maximum "128Mi"'
    )
    big = {"volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "5Gi"}}}}}
    assert message("thanosruler", {"storage": big}, policy=Policy(max_storage="1Gi")) == (
        'component "c": storage.volumeClaimTemplate: storage request "5Gi" exceeds enforced maximum "1Gi"'
    )
    assert "hostPath volumes are not allowed" in message(
        "thanosruler", {"volumes": [{"name": "h", "hostPath": {"path": "/"}}]}
    )
    privileged = {"name": "p", "image": "p:1", "securityContext": {"privileged": True}}
    assert "privileged containers are not allowed" in message("thanosruler", {"containers": [privileged]})
    writes = [{"url": "u"}, {"url": "u", "bearerToken": "t"}]
    assert message("thanosruler", {"remoteWrite": writes}, policy=Policy(explicit_secrets_allowed=False)) == (
        'component "c": remoteWrite[1].bearerToken: holds a credential in the object, and the environment '
        "policy forbids explicit secrets; name a Secret key in authorization.credentials instead"
    )
    assert build("thanosruler", {"remoteWrite": writes})["spec"]["remoteWrite"][1]["bearerToken"] == "t"


def test_thanosruler_pod_metadata_component_label() -> None:
    assert message("thanosruler", {"podMetadata": {"labels": {"launcher.gokure.dev/component": "x"}}}) == (
        'component "c": podMetadata.labels["launcher.gokure.dev/component"]: "x" is not the component label '
        'of component "c"'
    )
