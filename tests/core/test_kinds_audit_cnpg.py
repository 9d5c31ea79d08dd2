"""Field-table audit of the CloudNativePG Cluster spec against the published postgresql.cnpg.io/v1
schema: the fields the table lacked decode and are written with their Go types."""

from __future__ import annotations

from typing import Any

from .kindbuild import build, message

STORAGE = {"storage": {"size": "1Gi"}}


def cluster(**props: Any) -> dict[str, Any]:
    return {**STORAGE, **props}


def test_cluster_service_account_name_pod_selector_refs_and_metrics_ttl_decode() -> None:
    refs = [{"name": "web", "selector": {"matchLabels": {"app": "web"}}}]
    spec = build(
        "cnpg-cluster",
        cluster(serviceAccountName="shared-db", podSelectorRefs=refs, monitoring={"metricsQueriesTTL": "1m"}),
        name="db",
    )["spec"]
    assert spec["serviceAccountName"] == "shared-db"
    assert spec["podSelectorRefs"] == refs
    # a metav1.Duration: written in Go's spelling
    assert spec["monitoring"]["metricsQueriesTTL"] == "1m0s"


def test_pod_selector_ref_requires_its_selector_and_is_strict() -> None:
    assert message("cnpg-cluster", cluster(podSelectorRefs=[{"name": "web"}]), name="db") == (
        'component "db": podSelectorRefs[0].selector: required (the CloudNativePG API requires this field)'
    )
    ref = {"name": "web", "selector": {"matchLabel": {"app": "web"}}}
    assert message("cnpg-cluster", cluster(podSelectorRefs=[ref]), name="db") == (
        'component "db": unknown field "podSelectorRefs[0].selector.matchLabel"'
    )


def test_metrics_queries_ttl_is_a_duration_string() -> None:
    assert message("cnpg-cluster", cluster(monitoring={"metricsQueriesTTL": 30}), name="db") == (
        'component "db": monitoring.metricsQueriesTTL: must be a duration string, got int'
    )
