"""Field tables of scheduling.k8s.io/v1 PriorityClass, node.k8s.io/v1 RuntimeClass, policy/v1
PodDisruptionBudgetSpec and autoscaling/v2 HorizontalPodAutoscalerSpec (k8s.io/api v0.37.1)."""

from __future__ import annotations

from farm.core.kinds.corev1_pod import STRUCTS as CORE
from farm.core.kinds.engine import BOOL, INT32, INT_OR_STRING, QUANTITY, STRING, F, Struct, list_of, map_of
from farm.core.kinds.meta import LABEL_SELECTOR

PRIORITY_CLASS = Struct(
    "PriorityClass",
    [
        F("value", INT32),
        F("globalDefault", BOOL, "omit"),
        F("description", STRING, "omit"),
        F("preemptionPolicy", STRING, "omit ptr"),
    ],
)

RUNTIME_CLASS = Struct(
    "RuntimeClass",
    [
        F("handler", STRING, "req!"),
        F("overhead", Struct("Overhead", [F("podFixed", map_of(QUANTITY), "omit")]), "omit ptr"),
        F(
            "scheduling",
            Struct(
                "Scheduling",
                [
                    F("nodeSelector", map_of(STRING), "omit"),
                    F("tolerations", list_of(CORE["Toleration"]), "omit"),
                ],
            ),
            "omit ptr",
        ),
    ],
)

POD_DISRUPTION_BUDGET_SPEC = Struct(
    "PodDisruptionBudgetSpec",
    [
        F("minAvailable", INT_OR_STRING, "omit ptr"),
        F("selector", LABEL_SELECTOR, "omit ptr"),
        F("maxUnavailable", INT_OR_STRING, "omit ptr"),
        F("unhealthyPodEvictionPolicy", STRING, "omit ptr"),
    ],
)

CROSS_VERSION_OBJECT_REFERENCE = Struct(
    "CrossVersionObjectReference",
    [F("kind", STRING), F("name", STRING), F("apiVersion", STRING, "omit")],
)

METRIC_IDENTIFIER = Struct("MetricIdentifier", [F("name", STRING), F("selector", LABEL_SELECTOR, "omit ptr")])

METRIC_TARGET = Struct(
    "MetricTarget",
    [
        F("type", STRING),
        F("value", QUANTITY, "omit ptr"),
        F("averageValue", QUANTITY, "omit ptr"),
        F("averageUtilization", INT32, "omit ptr"),
    ],
)

_METRIC = F("metric", METRIC_IDENTIFIER)
_TARGET = F("target", METRIC_TARGET)

METRIC_SPEC = Struct(
    "MetricSpec",
    [
        F("type", STRING),
        F(
            "object",
            Struct(
                "ObjectMetricSource", [F("describedObject", CROSS_VERSION_OBJECT_REFERENCE), _TARGET, _METRIC]
            ),
            "omit ptr",
        ),
        F("pods", Struct("PodsMetricSource", [_METRIC, _TARGET]), "omit ptr"),
        F("resource", Struct("ResourceMetricSource", [F("name", STRING), _TARGET]), "omit ptr"),
        F(
            "containerResource",
            Struct("ContainerResourceMetricSource", [F("name", STRING), _TARGET, F("container", STRING)]),
            "omit ptr",
        ),
        F("external", Struct("ExternalMetricSource", [_METRIC, _TARGET]), "omit ptr"),
    ],
)

HPA_SCALING_POLICY = Struct(
    "HPAScalingPolicy", [F("type", STRING), F("value", INT32), F("periodSeconds", INT32)]
)

HPA_SCALING_RULES = Struct(
    "HPAScalingRules",
    [
        F("stabilizationWindowSeconds", INT32, "omit ptr"),
        F("selectPolicy", STRING, "omit ptr"),
        F("policies", list_of(HPA_SCALING_POLICY), "omit", default="policies"),
        F("tolerance", QUANTITY, "omit ptr"),
    ],
)

HPA_BEHAVIOR = Struct(
    "HorizontalPodAutoscalerBehavior",
    [F("scaleUp", HPA_SCALING_RULES, "omit ptr"), F("scaleDown", HPA_SCALING_RULES, "omit ptr")],
)

HPA_SPEC = Struct(
    "HorizontalPodAutoscalerSpec",
    [
        F("scaleTargetRef", CROSS_VERSION_OBJECT_REFERENCE, "req"),
        F("minReplicas", INT32, "omit ptr"),
        F("maxReplicas", INT32, "req!"),
        F("metrics", list_of(METRIC_SPEC), "omit", default="(80% average CPU utilization)"),
        F("behavior", HPA_BEHAVIOR, "omit ptr"),
    ],
)
