"""Prometheus operator workload kinds prometheus and alertmanager (seed 002): the seed's refusals with
exact messages, the operator's counts held by the policy, and inputs no shared case shows."""

from __future__ import annotations

from farm.core.gourl import GoURLError, parse
from farm.core.policy import Policy

from .kindbuild import build, message, refusal

RELOADER = "registry.example.com/prometheus-operator/prometheus-config-reloader:v0.94.1"
ALLOWLIST = Policy(allowed_registries=("registry.example.com",))
NO_SECRETS = Policy(explicit_secrets_allowed=False)


def _prometheus_images(**extra: object) -> dict[str, object]:
    return {
        "image": "registry.example.com/prometheus/prometheus:v3.5.0",
        "containers": [{"name": "config-reloader", "image": RELOADER}],
        "initContainers": [{"name": "init-config-reloader", "image": RELOADER}],
        **extra,
    }


# --- go url ------------------------------------------------------------------------------------------


def test_go_url_parse_refusals_and_acceptances() -> None:
    for bad in ("http://a b/", ":foo", "1a:b", "http://host:port/", "http://[::1/", "http://h/%zz", "a\x7fb"):
        try:
            parse(bad)
        except GoURLError:
            continue
        raise AssertionError(f"{bad!r} parsed")
    assert parse("https://prometheus.example.com:9090/x?y#z").host == "prometheus.example.com:9090"
    assert parse("mailto:sre@example.com").scheme == "mailto"
    assert parse("/relative/path").scheme == ""


# --- prometheus: what the type writes ----------------------------------------------------------------


def test_prometheus_writes_its_unauthored_structs() -> None:
    spec = build("prometheus", {})["spec"]
    assert spec == {"resources": {}, "arbitraryFSAccessThroughSMs": {}, "rules": {"alert": {}}}
    spec = build("prometheus", {"thanos": {}, "storage": {"emptyDir": {}}})["spec"]
    assert spec["thanos"] == {"resources": {}}
    assert spec["storage"] == {
        "emptyDir": {},
        "volumeClaimTemplate": {"metadata": {}, "spec": {"resources": {}}, "status": {}},
    }


def test_prometheus_keeps_pointer_zeros_and_external_labels() -> None:
    props = {"sampleLimit": 0, "walCompression": False, "enableAdminAPI": False, "externalLabels": {"a": "b"}}
    spec = build("prometheus", props)["spec"]
    assert spec["sampleLimit"] == 0 and spec["walCompression"] is False
    assert "enableAdminAPI" not in spec
    assert spec["externalLabels"] == {"a": "b"}
    obj = build("prometheus", {"labels": {"team": "x"}, "objectName": "k8s"})
    assert obj["metadata"]["name"] == "k8s" and obj["metadata"]["labels"]["team"] == "x"


def test_prometheus_excluded_group_is_written() -> None:
    spec = build(
        "prometheus", {"excludedFromEnforcement": [{"namespace": "a", "resource": "servicemonitors"}]}
    )
    assert spec["spec"]["excludedFromEnforcement"][0]["group"] == "monitoring.coreos.com"


# --- prometheus: decode refusals ---------------------------------------------------------------------


def test_prometheus_defaulted_strings_refused() -> None:
    assert message("prometheus", {"scrapeInterval": ""}) == (
        'component "c": scrapeInterval: "" cannot be carried by the Prometheus operator API types (the field is '
        'omitted when zero, so the API server would apply its default "30s")'
    )
    assert message("prometheus", {"evaluationInterval": ""}).endswith('its default "30s")')
    assert message("prometheus", {"portName": ""}).endswith('its default "web")')
    assert message("prometheus", {"thanos": {"blockSize": ""}}).startswith(
        'component "c": thanos.blockSize: ""'
    )
    assert message("prometheus", {"schedulerName": ""}).endswith('its default "default-scheduler")')
    assert message("prometheus", {"imagePullPolicy": ""}).startswith('component "c": imagePullPolicy: ""')
    relabel = {"url": "https://m", "writeRelabelConfigs": [{"action": ""}]}
    assert message("prometheus", {"remoteWrite": [relabel]}).endswith('its default "replace")')
    assert message("prometheus", {"containers": [{"name": "prometheus", "imagePullPolicy": ""}]}).startswith(
        'component "c": containers[0].imagePullPolicy: ""'
    )
    # retention's 24h is the operator's code, not a CRD default
    assert "retention" not in build("prometheus", {"retention": ""})["spec"]


def test_prometheus_required_nested_fields() -> None:
    cases = {
        "alerting.alertmanagers": {"alerting": {}},
        "alerting.alertmanagers[0].port": {"alerting": {"alertmanagers": [{"name": "am"}]}},
        "apiserverConfig.host": {"apiserverConfig": {}},
        "scrapeClasses[0].name": {"scrapeClasses": [{"default": True}]},
        "shardRetentionPolicy.retain.retentionPeriod": {"shardRetentionPolicy": {"retain": {}}},
        "tracingConfig.endpoint": {"tracingConfig": {}},
        "remoteRead[0].url": {"remoteRead": [{"name": "r"}]},
        "thanos.additionalArgs[0].name": {"thanos": {"additionalArgs": [{"value": "x"}]}},
        "serviceMonitorSelector.matchExpressions[0].key": {
            "serviceMonitorSelector": {"matchExpressions": [{"operator": "Exists"}]}
        },
    }
    for path, props in cases.items():
        assert message("prometheus", props) == (
            f'component "c": {path}: required (the Prometheus operator API requires this field)'
        )


def test_prometheus_unknown_keys_refused_at_depth() -> None:
    assert (
        message("prometheus", {"thanos": {"imagee": "x"}}) == 'component "c": unknown field "thanos.imagee"'
    )
    assert "sets the same field" in message("prometheus", {"retentionsize": "1GB", "retentionSize": "2GB"})


def test_prometheus_not_authorable_image_parts() -> None:
    assert message("prometheus", {"tag": "v3.5.0", "image": "prom:v3"}) == (
        'component "c": tag: not authorable: the Prometheus operator deprecates the field, and composes the '
        "image it yields outside what the object states; use image"
    )
    assert "baseImage" not in build("prometheus", {"baseImage": ""})["spec"]
    assert message("prometheus", {"thanos": {"sha": ""}}) == (
        'component "c": thanos.sha: not authorable: the Prometheus operator deprecates the field, and composes '
        "the image it yields outside what the object states; use thanos.image"
    )
    build("prometheus", {"thanos": {"sha": None}})


# --- prometheus: what the operator builds ------------------------------------------------------------


def test_prometheus_counts() -> None:
    assert message("prometheus", {"shards": 0}) == (
        'component "c": shards: 0 is below 1, for which the Prometheus operator runs 1 shard; write 1 or more, '
        "or leave shards unset"
    )
    assert message("prometheus", {"replicas": -1}) == (
        'component "c": replicas: -1 is negative; the Prometheus operator runs it as 1'
    )


def test_prometheus_container_patches() -> None:
    spec = build("prometheus", {"containers": [{"name": "prometheus"}, {"name": "config-reloader"}]})["spec"]
    assert [c["name"] for c in spec["containers"]] == ["prometheus", "config-reloader"]
    build("prometheus", {"initContainers": [{"name": "init-config-reloader"}]})
    assert message("prometheus", {"containers": [{"name": "thanos-sidecar"}]}) == (
        'component "c": containers[0] "thanos-sidecar": names no image, and the Prometheus operator generates no '
        "container of that name to merge it into; name an image, or the container it patches (prometheus, "
        "config-reloader)"
    )
    build("prometheus", {"thanos": {}, "containers": [{"name": "thanos-sidecar"}]})
    assert message("prometheus", {"containers": [{"name": "init-config-reloader", "image": "a:1"}]}) == (
        'component "c": containers[0] "init-config-reloader": the name is also that of the init container the '
        "Prometheus operator generates, and the API requires the names of containers and init containers to be "
        "unique together; name the container otherwise"
    )


def test_prometheus_port_name_grpc_with_thanos() -> None:
    assert message("prometheus", {"portName": "grpc", "thanos": {}}) == (
        'component "c": portName: "grpc" is the name of the port the Prometheus operator adds for the Thanos '
        "sidecar to the governing Service it creates (prometheus-operated), so the web port would share its "
        "name; name the port otherwise, or name a Service of your own in serviceName"
    )
    build("prometheus", {"portName": "grpc"})
    build("prometheus", {"portName": "grpc", "thanos": {}, "serviceName": "mine"})
    assert message("prometheus", {"serviceName": "1prom"}).startswith(
        'component "c": serviceName: "1prom" is not a valid Service name'
    )


def test_prometheus_external_url() -> None:
    assert message("prometheus", {"externalUrl": '"https://p.example.com"'}) == (
        'component "c": externalUrl: begins or ends with a quote: Prometheus exits on it at startup, though the '
        "Prometheus operator and the API accept it; write the URL without quotes"
    )
    assert message("prometheus", {"externalUrl": "https://p.example.com:web/"}) == (
        'component "c": externalUrl: not a URL Go\'s net/url can parse: Prometheus exits on it at startup, '
        "though the Prometheus operator and the API accept it; write a valid URL"
    )
    build("prometheus", {"externalUrl": "ftp://any.scheme/"})


def test_prometheus_operator_volumes_and_mounts() -> None:
    assert message("prometheus", {"volumes": [{"name": "config-out", "emptyDir": {}}]}) == (
        'component "c": volumes[0] "config-out": the name is a volume the Prometheus operator adds to every '
        "Prometheus's pods; name the volume otherwise"
    )
    volume = {"name": "thanos-prometheus-http-client-file", "emptyDir": {}}
    build("prometheus", {"volumes": [volume]})
    assert "adds to this Prometheus's pods" in message("prometheus", {"thanos": {}, "volumes": [volume]})
    assert "prometheus-c-rulefiles-0" in message(
        "prometheus", {"volumes": [{"name": "prometheus-c-rulefiles-0", "emptyDir": {}}]}
    )
    build("prometheus", {"volumes": [{"name": "prometheus-c-rulefiles-01", "emptyDir": {}}]})
    assert message("prometheus", {"volumes": [{"name": "prometheus-c-db", "emptyDir": {}}]}) == (
        'component "c": volumes[0] "prometheus-c-db": the name is that of the data volume the Prometheus operator '
        "adds to this Prometheus's pods; name the volume otherwise"
    )
    assert message(
        "prometheus",
        {"volumeMounts": [{"name": "v", "mountPath": "/etc/prometheus/secrets/tls/"}], "secrets": ["tls"]},
    ) == (
        'component "c": volumeMounts[0] "/etc/prometheus/secrets/tls/": the path is one the Prometheus operator '
        "mounts a volume at in the prometheus container; mount the volume elsewhere"
    )
    assert "in the prometheus container" in message(
        "prometheus",
        {"volumeMounts": [{"name": "v", "mountPath": "/etc/prometheus/rules/prometheus-c-rulefiles-4"}]},
    )
    log = {"queryLogFile": "query.log", "volumes": [{"name": "log-file", "emptyDir": {}}]}
    assert "log-file" in message("prometheus", log)


def test_prometheus_mounted_object_volume_names() -> None:
    assert message("prometheus", {"secrets": ["alerts.config", "alerts-config"]}) == (
        'component "c": secrets[1] "alerts-config": the Prometheus operator names its volume '
        '"secret-alerts-config", as it names that of secrets[0] "alerts.config", and adds a volume for each, '
        "which the API refuses; list the object once"
    )
    long_name = "a" * 52 + ".b"
    assert message("prometheus", {"configMaps": [long_name]}) == (
        f'component "c": configMaps[0] "{long_name}": the Prometheus operator names its volume '
        f'"configmap-{"a" * 52}-", which is not a DNS-1123 label (cut to 63 characters), and then fails to build '
        "the pods; name the object otherwise"
    )
    build("prometheus", {"configMaps": ["a" * 53 + ".b"]})
    assert message(
        "prometheus", {"volumes": [{"name": "configmap-ca", "emptyDir": {}}], "configMaps": ["CA"]}
    ) == (
        'component "c": volumes[0] "configmap-ca": the name is a volume the Prometheus operator adds to this '
        "Prometheus's pods; name the volume otherwise"
    )


def test_prometheus_thanos_block() -> None:
    assert message("prometheus", {"thanos": {"image": "quay.io/thanos/thanos:latest"}}) == (
        'component "c": thanos.image: image "quay.io/thanos/thanos:latest" rejected: :latest tag not allowed; '
        "use an explicit version tag or digest"
    )
    patched = {
        "thanos": {"image": "thanos:latest"},
        "containers": [{"name": "thanos-sidecar", "image": "t:v1"}],
    }
    build("prometheus", patched)
    assert message(
        "prometheus", {"thanos": {"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}}
    ) == ('component "c": thanos.resources: cpu: request 2 must not exceed limit 1')
    mount = {"name": "ca", "mountPath": "/etc/ca", "readOnly": True}
    assert message("prometheus", {"thanos": {"volumeMounts": [mount]}}) == (
        'component "c": thanos.volumeMounts[0].readOnly: the Prometheus operator copies only name and mountPath '
        "into the thanos-sidecar container's mount, so the field would be dropped; leave it out"
    )
    assert message(
        "prometheus", {"thanos": {"volumeMounts": [{"name": "x", "mountPath": "/etc/thanos/config"}]}}
    ) == (
        'component "c": thanos.volumeMounts[0] "/etc/thanos/config": the path is one the Prometheus operator '
        "mounts a volume at in the thanos-sidecar container; mount the volume elsewhere"
    )
    data = {"name": "x", "mountPath": "/prometheus"}
    build("prometheus", {"thanos": {"volumeMounts": [data]}})
    store = {"objectStorageConfigFile": "/etc/objstore.yml", "volumeMounts": [data]}
    assert "thanos-sidecar container" in message("prometheus", {"thanos": store})


def test_prometheus_query_log_without_directory() -> None:
    props = {"queryLogFile": "query.log", "scrapeFailureLogFile": "/var/log/scrape/failures.log"}
    assert message("prometheus", props) == (
        'component "c": queryLogFile: "query.log" names no directory, so the Prometheus operator writes the query '
        "log under /var/log/prometheus, where it adds the log-file volume only for a scrapeFailureLogFile "
        "without a directory, and the container's root filesystem is read-only; name the file with a "
        "directory, or mount a writable volume at /var/log/prometheus"
    )
    mounted = {**props, "volumes": [{"name": "logs", "emptyDir": {}}]}
    build("prometheus", {**mounted, "volumeMounts": [{"name": "logs", "mountPath": "/var/log/prometheus/"}]})
    read_only = {"name": "logs", "mountPath": "/var/log/prometheus", "readOnly": True}
    assert "queryLogFile" in message("prometheus", {**mounted, "volumeMounts": [read_only]})
    build("prometheus", {"queryLogFile": "query.log"})


def test_prometheus_host_process_needs_host_network() -> None:
    context = {"securityContext": {"windowsOptions": {"hostProcess": True}}}
    assert message("prometheus", context) == (
        'component "c": securityContext.windowsOptions.hostProcess: true needs hostNetwork: true: the API refuses '
        "the pods the Prometheus operator copies them into"
    )


def test_prometheus_name_limits() -> None:
    assert build("prometheus", {}, name="p" * 40)["metadata"]["name"] == "p" * 40
    assert message("prometheus", {}, name="p" * 41).endswith(
        f'Prometheus "{"p" * 41}": the Prometheus operator names the volume "prometheus-{"p" * 41}-rulefiles-2" '
        "after the component name, which is not a DNS-1123 label (at most 63 characters, no dots); the "
        "component name may have at most 40 characters and no dot"
    )
    build("prometheus", {"shards": 2}, name="p" * 33)
    assert message("prometheus", {"shards": 2}, name="p" * 34).endswith(
        f'the Prometheus operator names the StatefulSet "prometheus-{"p" * 34}-shard-1" after the component name, '
        "and the StatefulSet controller labels its pods controller-revision-hash with that name, a '-' and a hash "
        "of up to 10 characters, which the API refuses beyond 63 characters; the component name may have at most "
        "33 characters"
    )
    build("prometheus", {"shards": 2, "replicas": 0}, name="p" * 34)
    assert 'Prometheus "a.b"' in message("prometheus", {"objectName": "a.b"})
    assert "after the objectName" in message("prometheus", {"objectName": "a.b"})


# --- prometheus: policy ------------------------------------------------------------------------------


def test_prometheus_replicas_times_shards() -> None:
    assert message("prometheus", {"shards": 4}, policy=Policy(max_replicas=3)) == (
        'component "c": replicas times shards 4 exceeds enforced maximum 3'
    )
    assert refusal(
        "prometheus", {"replicas": 2, "shards": 2}, policy=Policy(max_replicas=3)
    ).refusal_class == ("replica-maximum")
    assert message("prometheus", {}, policy=Policy(max_replicas=0)) == (
        'component "c": replicas times shards 1 exceeds enforced maximum 0'
    )
    spec = build("prometheus", {"replicas": 3}, policy=Policy(max_replicas=3))["spec"]
    assert "shards" not in spec


def test_prometheus_images_left_to_the_operator() -> None:
    build("prometheus", _prometheus_images(), policy=ALLOWLIST)
    props = _prometheus_images(thanos={})
    failure = refusal("prometheus", props, policy=ALLOWLIST)
    assert failure.message == (
        'component "c": thanos.image: unset, so the Prometheus operator chooses the image the pods run, which '
        "the environment policy's allowed registries ['registry.example.com'] cannot hold; name an image from "
        "an allowed registry in thanos.image or in an entry of containers named thanos-sidecar"
    )
    assert failure.refusal_class == "registry"
    assert "thanos.image" in message(
        "prometheus", _prometheus_images(thanos={"image": "quay.io/thanos/thanos:v0.39.2"}), policy=ALLOWLIST
    )
    build(
        "prometheus",
        _prometheus_images(thanos={"image": "registry.example.com/thanos:v0.39.2"}),
        policy=ALLOWLIST,
    )
    no_init = _prometheus_images(initContainers=[])
    assert message("prometheus", no_init, policy=ALLOWLIST).startswith(
        'component "c": the image of the init-config-reloader container (initContainers): unset'
    )


def test_prometheus_resource_and_secret_policy() -> None:
    limits = Policy(max_cpu="1")
    assert message("prometheus", {"thanos": {"resources": {"limits": {"cpu": "2"}}}}, policy=limits) == (
        'component "c": thanos.resources: cpu limit "2" exceeds enforced maximum "1"'
    )
    assert message(
        "prometheus", {"remoteRead": [{"url": "https://r", "bearerToken": "t"}]}, policy=NO_SECRETS
    ) == (
        'component "c": remoteRead[0].bearerToken: holds a credential in the object, and the environment policy '
        "forbids explicit secrets; name a Secret key in authorization.credentials instead"
    )
    held = {"apiserverConfig": {"host": "https://k", "bearerToken": "t"}}
    assert refusal("prometheus", held, policy=NO_SECRETS).refusal_class == "explicit-secret"
    assert build("prometheus", held)["spec"]["apiserverConfig"]["bearerToken"] == "t"
    assert message("prometheus", {"hostNetwork": True}, policy=Policy(allow_host_network=False)) == (
        'component "c": hostNetwork: the host namespace is not allowed by the environment policy'
    )
    claim = {"volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "10Gi"}}}}}
    assert message("prometheus", {"storage": claim}, policy=Policy(max_storage="1Gi")) == (
        'component "c": storage.volumeClaimTemplate: storage request "10Gi" exceeds enforced maximum "1Gi"'
    )


# --- alertmanager ------------------------------------------------------------------------------------

AM_IMAGE = "registry.example.com/prometheus/alertmanager:v0.28.1"


def _am(**props: object) -> dict[str, object]:
    return {"image": AM_IMAGE, "version": "v0.28.1", **props}


def test_alertmanager_writes_its_unauthored_structs() -> None:
    assert build("alertmanager", {})["spec"] == {"resources": {}, "alertmanagerConfigMatcherStrategy": {}}
    assert "hostNetwork" not in build("alertmanager", {"hostNetwork": False})["spec"]


def test_alertmanager_defaulted_strings_refused() -> None:
    assert message("alertmanager", {"retention": ""}) == (
        'component "c": retention: "" cannot be carried by the Prometheus operator API types (the field is '
        'omitted when zero, so the API server would apply its default "120h")'
    )
    assert message("alertmanager", {"alertmanagerConfigMatcherStrategy": {"type": ""}}).endswith(
        'its default "OnNamespace")'
    )
    assert message("alertmanager", {"portName": ""}).endswith('its default "web")')
    assert message("alertmanager", {"schedulerName": ""}).startswith('component "c": schedulerName: ""')
    probe = {"name": "proxy", "image": "p:1", "readinessProbe": {"periodSeconds": 0}}
    assert message("alertmanager", {"containers": [probe]}).startswith(
        'component "c": containers[0].readinessProbe.periodSeconds: 0 cannot be carried by the Prometheus operator'
    )
    port = {"name": "proxy", "image": "p:1", "ports": [{"containerPort": 80, "hostPort": 0}]}
    assert message("alertmanager", {"hostNetwork": True, "containers": [port]}).startswith(
        'component "c": containers[0].ports[0].hostPort: 0 cannot be carried'
    )


def test_alertmanager_required_nested_fields() -> None:
    cases = {
        "clusterTLS.server": {"clusterTLS": {"client": {}}},
        "hostAliases[1].hostnames": {
            "hostAliases": [{"ip": "1.1.1.1", "hostnames": ["a"]}, {"ip": "1.1.1.2"}]
        },
        "alertmanagerConfiguration.global.smtp.smartHost.port": {
            "alertmanagerConfiguration": {"global": {"smtp": {"smartHost": {"host": "smtp"}}}}
        },
        "alertmanagerConfiguration.global.httpConfig.oauth2.tokenUrl": {
            "alertmanagerConfiguration": {
                "global": {
                    "httpConfig": {
                        "oauth2": {
                            "clientId": {"secret": {"name": "o", "key": "i"}},
                            "clientSecret": {"name": "o", "key": "s"},
                        }
                    }
                }
            }
        },
        "updateStrategy.type": {"updateStrategy": {}},
    }
    for path, props in cases.items():
        assert message("alertmanager", props) == (
            f'component "c": {path}: required (the Prometheus operator API requires this field)'
        )
    assert message(
        "alertmanager", {"alertmanagerConfiguration": {"global": {"smtp": {"smarthost2": 1}}}}
    ) == ('component "c": unknown field "alertmanagerConfiguration.global.smtp.smarthost2"')


def test_alertmanager_version() -> None:
    assert message("alertmanager", {"image": AM_IMAGE}) == (
        'component "c": version: required where image, or an entry of containers named alertmanager, names the '
        "image: the Prometheus operator chooses the container's flags by version, and by its own default where "
        "none is, which need not be the version the image runs"
    )
    patch = {"containers": [{"name": "alertmanager", "image": AM_IMAGE}]}
    assert message("alertmanager", patch).startswith('component "c": version: required where image')
    assert message("alertmanager", {"version": "v0.14.9"}) == (
        'component "c": version: "v0.14.9" is below 0.15.0, the oldest Alertmanager the Prometheus operator '
        "runs, and it fails the reconcile"
    )
    assert "major version above 0" in message("alertmanager", {"version": "1.0.0"})
    assert "can parse" in message("alertmanager", {"version": "0.28.1.1"})
    for tolerated in ("v0.28", " 0.28.1 ", "0.028.01"):
        build("alertmanager", {"version": tolerated})


def test_alertmanager_version_gates() -> None:
    assert message("alertmanager", _am(clusterPeerName="peer")) == (
        'component "c": clusterPeerName: read by the Prometheus operator only for Alertmanager 0.30.0 and later; '
        "at version v0.28.1 it does not pass it to Alertmanager, and the pods run without it; raise version to "
        "0.30.0 or later, or leave clusterPeerName unset"
    )
    build("alertmanager", _am(clusterPeerName="peer", version="v0.30.0"))
    build("alertmanager", {"clusterPeerName": "peer"})  # unset: the operator's default v0.34.0
    assert "0.30.0" in message("alertmanager", _am(clusterPeerName="peer", version="v0.30.0-rc.0"))
    smtp = {"global": {"smtp": {"forceImplicitTLS": True}}}
    assert message("alertmanager", _am(alertmanagerConfiguration=smtp)) == (
        'component "c": alertmanagerConfiguration.global.smtp.forceImplicitTLS: read by the Prometheus operator '
        "only for Alertmanager 0.31.0 and later; at version v0.28.1 it leaves it out of the global configuration "
        "Alertmanager runs with; raise version to 0.31.0 or later, or leave "
        "alertmanagerConfiguration.global.smtp.forceImplicitTLS unset"
    )
    build("alertmanager", _am(logFormat="logfmt", version="v0.15.0"))
    assert "logFormat" in message("alertmanager", _am(logFormat="json", version="v0.15.0"))
    proxy = {"global": {"httpConfig": {"proxyFromEnvironment": False}}}
    build("alertmanager", _am(alertmanagerConfiguration=proxy, version="v0.25.0"))
    proxy = {"global": {"httpConfig": {"proxyFromEnvironment": True}}}
    assert "0.26.0" in message("alertmanager", _am(alertmanagerConfiguration=proxy, version="v0.25.0"))


def test_alertmanager_feature_flags() -> None:
    assert message("alertmanager", {"enableFeatures": [""]}) == (
        'component "c": enableFeatures: a list of one empty element: the Prometheus operator writes it as '
        "--enable-feature alone, which Alertmanager's flag parser refuses; leave enableFeatures unset for no "
        "feature"
    )
    assert message("alertmanager", _am(version="v0.33.0", enableFeatures=["auto-gomaxprocs"])) == (
        'component "c": enableFeatures: not a feature flag of Alertmanager 0.33, at version v0.33.0: '
        '"auto-gomaxprocs", on which Alertmanager exits at startup; it takes alert-names-in-metrics, '
        "auto-gomemlimit, classic-mode, event-recorder, group-key-in-metrics, receiver-name-in-metrics, "
        "utf8-strict-mode"
    )
    build("alertmanager", _am(enableFeatures=["auto-gomaxprocs"]))
    assert '""' in message("alertmanager", {"enableFeatures": ["classic-mode", ""]})
    assert '"receiver-name-in-metrics,x"' not in message(
        "alertmanager", {"enableFeatures": ["classic-mode,x"]}
    )
    assert "classic-mode with utf8-strict-mode" in message(
        "alertmanager", {"enableFeatures": ["classic-mode", "utf8-strict-mode"]}
    )
    build("alertmanager", {"enableFeatures": ["$(AM_FEATURE)"]})
    assert '"$(AM"' in message("alertmanager", {"enableFeatures": ["$(AM"]})
    build("alertmanager", {"version": "v0.35.0", "enableFeatures": ["anything-new"]})


def test_alertmanager_port_names() -> None:
    assert message("alertmanager", {"portName": "mesh-udp"}) == (
        'component "c": portName: "mesh-udp" is the name of a port the Prometheus operator adds to the '
        "alertmanager container, so the web port would share its name; name the port otherwise"
    )
    build("alertmanager", {"portName": "mesh-udp", "listenLocal": True})
    assert "alertmanager-operated" in message("alertmanager", {"portName": "tcp-mesh"})
    build("alertmanager", {"portName": "tcp-mesh", "serviceName": "alerts"})
    assert message("alertmanager", {"serviceName": "1alerts"}).startswith(
        'component "c": serviceName: "1alerts" is not a valid Service name, which must be a DNS-1035 label: '
    )


def test_alertmanager_durations_and_replicas() -> None:
    assert message("alertmanager", {"retention": "0s"}) == (
        'component "c": retention: "0s" is not a positive duration: the Prometheus operator empties it and runs '
        "the pods as if retention were unset; write a positive duration, or leave retention unset"
    )
    assert "clusterPeerTimeout" in message("alertmanager", {"clusterPeerTimeout": "0h0m"})
    build("alertmanager", {"clusterGossipInterval": "200ms", "retention": "1.5h"})
    assert message("alertmanager", {"replicas": -2}) == (
        'component "c": replicas: -2 is negative; the Prometheus operator runs it as 0'
    )


def test_alertmanager_external_url() -> None:
    assert message("alertmanager", {"externalUrl": "alerts.example.com"}) == (
        'component "c": externalUrl: not a URL of scheme http or https: Alertmanager exits on it at startup, '
        "though the Prometheus operator and the API accept it; write an http or https URL"
    )
    build("alertmanager", {"externalUrl": "alerts.example.com", "version": "v0.18.0"})
    assert "http or https" in message("alertmanager", {"externalUrl": "ftp://a/", "version": "v0.19.0-rc.0"})
    assert "net/url" in message("alertmanager", {"externalUrl": "http://a b/", "version": "v0.18.0"})
    build("alertmanager", {"externalUrl": "HTTPS://alerts.example.com/am"})


def test_alertmanager_cluster_advertise_address() -> None:
    bad = {"replicas": 3, "clusterAdvertiseAddress": "alerts.example.com:9094"}
    assert message("alertmanager", bad) == (
        'component "c": clusterAdvertiseAddress: not an IP address and a numeric port written as host:port: the '
        "Prometheus operator passes it to Alertmanager as --cluster.advertise-address, and Alertmanager exits "
        "where it cannot read it; write an IP address and a port, as 10.0.0.1:9094"
    )
    build("alertmanager", {"replicas": 1, "clusterAdvertiseAddress": "alerts.example.com:9094"})
    assert "clusterAdvertiseAddress" in message(
        "alertmanager", {"replicas": 0, "clusterAdvertiseAddress": "10.0.0.1"}
    )
    assert "clusterAdvertiseAddress" in message(
        "alertmanager", {"forceEnableClusterMode": True, "clusterAdvertiseAddress": "10.0.0.1:99999999999"}
    )
    for good in ("10.0.0.1:9094", "[fd00::1]:9094", ":9094", "[$(POD_IP)]:9094", "$(POD_IP):9094"):
        build("alertmanager", {"replicas": 3, "clusterAdvertiseAddress": good})
    assert "clusterAdvertiseAddress" in message(
        "alertmanager", {"replicas": 3, "clusterAdvertiseAddress": "cafe.dead:1"}
    )
    build("alertmanager", {"replicas": 3, "version": "v0.27.0", "clusterAdvertiseAddress": "cafe.dead:1"})
    assert "clusterAdvertiseAddress" in message(
        "alertmanager", {"replicas": 3, "version": "v0.27.0", "clusterAdvertiseAddress": "alerts.example:1"}
    )


def test_alertmanager_additional_args() -> None:
    assert message("alertmanager", {"additionalArgs": [{"name": "cluster.listen-address", "value": ""}]}) == (
        'component "c": additionalArgs[0] "cluster.listen-address": names the flag --cluster.listen-address, which '
        "the Prometheus operator generates for this spec, and the operator then fails to build the pods; set the "
        "field that configures it instead, or leave the argument out"
    )
    assert "--web.external-url" in message(
        "alertmanager", {"externalUrl": "https://a/", "additionalArgs": [{"name": "no-web.external-url"}]}
    )
    build("alertmanager", {"additionalArgs": [{"name": "web.external-url", "value": "https://a/"}]})
    build("alertmanager", {"additionalArgs": [{"name": "dispatch.start-delay", "value": "1m"}]})
    build("alertmanager", {"replicas": 0, "additionalArgs": [{"name": "cluster.peer", "value": "a:9094"}]})
    assert "--cluster.peer" in message("alertmanager", {"additionalArgs": [{"name": "cluster.peer"}]})
    assert "--log.level" in message(
        "alertmanager", {"logLevel": "warn", "additionalArgs": [{"name": "log.level"}]}
    )
    build("alertmanager", {"logLevel": "info", "additionalArgs": [{"name": "log.level", "value": "warn"}]})
    build("alertmanager", _am(version="v0.25.0", additionalArgs=[{"name": "cluster.label", "value": "x"}]))
    assert "--cluster.label" in message("alertmanager", {"additionalArgs": [{"name": "cluster.label"}]})


def test_alertmanager_templates_and_tls() -> None:
    templates = [{"configMap": {"name": "a", "key": "t.tmpl"}}, {"secret": {"name": "b", "key": "t.tmpl"}}]
    assert message("alertmanager", {"alertmanagerConfiguration": {"templates": templates}}) == (
        'component "c": alertmanagerConfiguration.templates[1].secret.key: "t.tmpl" is named already by '
        "templates[0], and the Prometheus operator skips a later template of a key it has projected, so the "
        "template would not be loaded; name each key once"
    )
    assert message("alertmanager", {"web": {"tlsConfig": {"keyFile": "/k"}}}) == (
        'component "c": web.tlsConfig: names the certificate nowhere (cert or certFile): the Prometheus '
        "operator's validation requires a certificate and a key, each named once, and without them it builds "
        "no pods"
    )
    twice = {"certFile": "/c", "keyFile": "/k", "keySecret": {"name": "s", "key": "k"}}
    assert "names the key twice (web.tlsConfig.keySecret and web.tlsConfig.keyFile)" in message(
        "alertmanager", {"web": {"tlsConfig": twice}}
    )
    build("alertmanager", {"web": {"tlsConfig": {"certFile": "/c", "keyFile": "/k"}}})
    server = {"certFile": "/c", "keyFile": "/k"}
    assert message("alertmanager", {"clusterTLS": {"server": server, "client": {}}}) == (
        'component "c": clusterTLS.client: names no certificate and key: the Prometheus operator\'s validation '
        "requires a certificate and a key for the client, and it then builds no pods"
    )
    client = {"cert": {"secret": {"name": "c", "key": "crt"}}, "keySecret": {"name": "c", "key": "key"}}
    build("alertmanager", {"clusterTLS": {"server": server, "client": client}})


def test_alertmanager_operator_volumes_and_names() -> None:
    assert message("alertmanager", {"volumes": [{"name": "config-volume", "emptyDir": {}}]}) == (
        'component "c": volumes[0] "config-volume": the name is a volume the Prometheus operator adds to every '
        "Alertmanager's pods; name the volume otherwise"
    )
    templates = {"templates": [{"configMap": {"name": "a", "key": "t"}}]}
    volume = {"name": "notification-templates", "emptyDir": {}}
    build("alertmanager", {"volumes": [volume]})
    assert "this Alertmanager's pods" in message(
        "alertmanager", {"alertmanagerConfiguration": templates, "volumes": [volume]}
    )
    assert "secret-alerts-config" in message("alertmanager", {"secrets": ["alerts.config", "alerts-config"]})
    mount = {"name": "v", "mountPath": "/etc/alertmanager/configmaps/ca"}
    assert message("alertmanager", {"configMaps": ["ca"], "volumeMounts": [mount]}) == (
        'component "c": volumeMounts[0] "/etc/alertmanager/configmaps/ca": the path is one the Prometheus operator '
        "mounts a volume at in the alertmanager container; mount the volume elsewhere"
    )
    build("alertmanager", {}, name="a" * 39)
    assert message("alertmanager", {}, name="a" * 40).endswith(
        "the component name may have at most 39 characters"
    )
    build("alertmanager", {"replicas": 0}, name="a" * 45)
    assert message("alertmanager", {"replicas": 0}, name="a" * 48).endswith(
        "the component name may have at most 47 characters and no dot"
    )
    assert 'Alertmanager "a.b"' in message("alertmanager", {"objectName": "a.b"})


def test_alertmanager_host_process_and_memory() -> None:
    context = {"securityContext": {"windowsOptions": {"hostProcess": True}}}
    assert message("alertmanager", context).startswith(
        'component "c": securityContext.windowsOptions.hostProcess: true needs hostNetwork: true'
    )
    build(
        "alertmanager",
        {**context, "hostNetwork": True},
        policy=Policy(allow_host_network=True, allow_privileged=True),
    )
    assert message("alertmanager", {"resources": {"limits": {"memory": "100Mi"}}}) == (
        'component "c": resources: memory: the unset request the Prometheus operator fills as 200Mi must not '
        "exceed limit 100Mi; name a memory request, or a limit of at least 200Mi"
    )


def test_alertmanager_policy() -> None:
    reloaders = {
        "containers": [{"name": "config-reloader", "image": RELOADER}],
        "initContainers": [{"name": "init-config-reloader", "image": RELOADER}],
    }
    build("alertmanager", _am(**reloaders), policy=ALLOWLIST)
    failure = refusal("alertmanager", {"version": "v0.28.1", **reloaders}, policy=ALLOWLIST)
    assert failure.message.startswith(
        'component "c": image: unset, so the Prometheus operator chooses the image the pods run'
    )
    assert failure.refusal_class == "registry"
    assert message("alertmanager", _am(containers=reloaders["containers"]), policy=ALLOWLIST).startswith(
        'component "c": the image of the init-config-reloader container (initContainers): unset'
    )
    assert message("alertmanager", {}, policy=Policy(max_replicas=0)) == (
        'component "c": replicas 1 exceeds enforced maximum 0'
    )
    assert message("alertmanager", {}, policy=Policy(max_memory="128Mi")) == (
        'component "c": resources, whose unset memory request the Prometheus operator fills as 200Mi: memory '
        'request "200Mi" exceeds enforced maximum "128Mi"'
    )
    host_path = {"name": "h", "hostPath": {"path": "/var/log"}}
    assert refusal(
        "alertmanager", {"volumes": [host_path]}, policy=Policy(allow_host_path_volumes=False)
    ).refusal_class == ("host-path")
    assert refusal(
        "alertmanager", {"hostNetwork": True}, policy=Policy(allow_host_network=False)
    ).refusal_class == ("host-namespace")
