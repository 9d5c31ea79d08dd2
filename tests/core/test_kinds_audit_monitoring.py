"""Field-table audit of the Prometheus operator workload kinds against the published
monitoring.coreos.com/v1 CRD schemas: the fields the tables lacked decode and are written with
their Go types."""

from __future__ import annotations

from .kindbuild import build, message

PROXY_HEADER = {"X-Proxy-Auth": [{"name": "proxy", "key": "token"}]}


def test_prometheus_otlp_label_name_settings_keep_false() -> None:
    otlp = {"labelNameUnderscoreSanitization": False, "labelNamePreserveMultipleUnderscores": True}
    assert build("prometheus", {"otlp": otlp})["spec"]["otlp"] == otlp


def test_prometheus_tsdb_stale_series_threshold_is_a_quantity_and_chunk_encoding_decodes() -> None:
    tsdb = {"staleSeriesCompactionThreshold": "0.5", "chunkEncoding": {"floats": "Xor2"}}
    assert build("prometheus", {"tsdb": tsdb})["spec"]["tsdb"] == {
        "staleSeriesCompactionThreshold": "500m",
        "chunkEncoding": {"floats": "Xor2"},
    }
    assert message("prometheus", {"tsdb": {"staleSeriesCompactionThreshold": True}}) == (
        'component "c": tsdb.staleSeriesCompactionThreshold: must be a quantity, got bool'
    )
    assert message("prometheus", {"tsdb": {"chunkEncoding": {"float": "Xor"}}}) == (
        'component "c": unknown field "tsdb.chunkEncoding.float"'
    )


def test_prometheus_alertmanager_endpoint_proxy_settings() -> None:
    endpoint = {
        "name": "alertmanager",
        "port": "web",
        "proxyUrl": "http://proxy.example:3128",
        "noProxy": "localhost",
        "proxyFromEnvironment": False,
        "proxyConnectHeader": PROXY_HEADER,
    }
    spec = build("prometheus", {"alerting": {"alertmanagers": [endpoint]}})["spec"]
    assert spec["alerting"]["alertmanagers"] == [endpoint]
    wrong = {**endpoint, "proxyFromEnvironment": "yes"}
    assert message("prometheus", {"alerting": {"alertmanagers": [wrong]}}) == (
        'component "c": alerting.alertmanagers[0].proxyFromEnvironment: must be a boolean, got string'
    )


def test_prometheus_thanos_grpc_server_tls_takes_cipher_suites_and_curves() -> None:
    tls = {
        "certFile": "/etc/tls/tls.crt",
        "keyFile": "/etc/tls/tls.key",
        "cipherSuites": ["TLS_AES_128_GCM_SHA256"],
        "curves": ["X25519"],
    }
    written = build("prometheus", {"thanos": {"grpcServerTlsConfig": tls}})["spec"]["thanos"]
    # ca and cert are SecretOrConfigMap held by value: written {} where unauthored
    assert written["grpcServerTlsConfig"] == {"ca": {}, "cert": {}, **tls}
