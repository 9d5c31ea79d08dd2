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
