"""Prometheus operator scrape and rule kinds (seed 002, "servicemonitor, podmonitor, prometheus-probe,
prometheusrule"): each is the strict decode of its monitoring.coreos.com/v1 spec type, emitted in the
build namespace. They are policy-free: no field of these specs is one the environment policy speaks
to, so each builds the same under every policy."""

from __future__ import annotations

from farm.core.kinds import monitoring as types
from farm.core.kinds.engine import KindContext, kind_component, required_error

MONITORING_V1 = "monitoring.coreos.com/v1"


def _check_probe(kc: KindContext) -> None:
    """The type always writes a prober, and the API server refuses one without a url, so a Probe
    needs prober.url even where no prober was authored."""
    if not kc.decoded["prober"].get("url"):
        raise required_error("prober.url", types.PROMETHEUS_OPERATOR)


SERVICE_MONITOR = kind_component(
    "servicemonitor",
    MONITORING_V1,
    "ServiceMonitor",
    "monitoringv1.ServiceMonitorSpec",
    spec=types.SERVICE_MONITOR_SPEC,
    api=types.PROMETHEUS_OPERATOR,
)

POD_MONITOR = kind_component(
    "podmonitor",
    MONITORING_V1,
    "PodMonitor",
    "monitoringv1.PodMonitorSpec",
    spec=types.POD_MONITOR_SPEC,
    api=types.PROMETHEUS_OPERATOR,
)

PROBE = kind_component(
    "prometheus-probe",
    MONITORING_V1,
    "Probe",
    "monitoringv1.ProbeSpec",
    spec=types.PROBE_SPEC,
    api=types.PROMETHEUS_OPERATOR,
    check=_check_probe,
)

PROMETHEUS_RULE = kind_component(
    "prometheusrule",
    MONITORING_V1,
    "PrometheusRule",
    "monitoringv1.PrometheusRuleSpec",
    spec=types.PROMETHEUS_RULE_SPEC,
    api=types.PROMETHEUS_OPERATOR,
)
