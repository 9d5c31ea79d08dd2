"""The Flux HelmRelease (helm.toolkit.fluxcd.io/v2): the object the helm rule lowers to under
``delivery: flux`` and the one the helmrelease kind component emits.

Seed 002, helmrelease: ``interval`` defaults to 60m (a zero duration counts as unset); every
duration field is held to the Flux duration check and written as Go's ``Duration.String()``;
``values`` must be a JSON object; each ``valuesFrom`` entry is held to the ValuesReference CRD's
constraints. The object carries a post-renderer that sets the component label on every pod
template the chart renders (go-kure/launcher#788).
"""

from __future__ import annotations

import math
import re
from typing import Any

from farm.core import yamlio
from farm.core.components.fluxsources import flux_duration, interval_or_default
from farm.core.errors import FieldError
from farm.core.fields import go_type_name
from farm.core.model import COMPONENT_LABEL

HELMRELEASE_API = "helm.toolkit.fluxcd.io/v2"

# (group, kind, path to the pod template's metadata inside the object); core kinds use group "".
_POD_TEMPLATE_KINDS = (
    ("apps", "Deployment", ("spec", "template")),
    ("apps", "StatefulSet", ("spec", "template")),
    ("apps", "DaemonSet", ("spec", "template")),
    ("batch", "Job", ("spec", "template")),
    ("batch", "CronJob", ("spec", "jobTemplate", "spec", "template")),
    ("apps", "ReplicaSet", ("spec", "template")),
    ("", "ReplicationController", ("spec", "template")),
    ("", "PodTemplate", ("template",)),
    ("", "Pod", ()),
)
_LEGACY_KIND_COUNT = 7

_DURATION_PATHS = (
    ("timeout",),
    ("chart", "spec", "interval"),
    ("install", "timeout"),
    ("upgrade", "timeout"),
    ("test", "timeout"),
    ("rollback", "timeout"),
    ("uninstall", "timeout"),
    ("install", "strategy", "retryInterval"),
    ("upgrade", "strategy", "retryInterval"),
)
_VALUES_KEY = re.compile(r"^[\-._a-zA-Z0-9]+\Z")
_TARGET_PATH = re.compile(r"^([a-zA-Z0-9_\-.\\\/]|\[[0-9]{1,5}\])+\Z")


def _patch(group: str, kind: str, path: tuple[str, ...], component: str) -> dict[str, Any]:
    labels = {"labels": {COMPONENT_LABEL: component}}
    document: dict[str, Any] = {
        "apiVersion": f"{group}/v1" if group else "v1",
        "kind": kind,
        "metadata": {"name": "component-label"},
    }
    if path:
        node = document
        for key in path:
            node = node.setdefault(key, {})
        node["metadata"] = labels
    else:
        document["metadata"].update(labels)
    return {
        "patch": yamlio.dump_document(document),
        "target": {"group": group, "kind": kind, "version": "v1"},
    }


def component_label_post_renderers(component: str, spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The kustomize post-renderer that sets the component label on every pod template a chart
    renders (seed 002 l.1765: "as every component's output does").

    One patch for each kind whose pods a component's output labels, the nine the seed lists for a
    rendered chart (l.1866, l.1872): Deployment, StatefulSet, DaemonSet, Job, CronJob, ReplicaSet,
    ReplicationController, PodTemplate and Pod. A kustomize target selects its group as a regular
    expression and an empty or absent group selects every group, so the three core-group kinds are
    targeted with ``group: ^$``, the core group alone (the reference's form, shared case helm-oci).

    One shared case (helm-repository: a chart.spec release from a HelmRepository) shows an older
    revision of the reference: seven targets, the ReplicationController's naming no group. That
    shape alone keeps the older list (:func:`older_label_patches`), so the shared cases still pass."""
    patches = []
    older = older_label_patches(spec)
    kinds = _POD_TEMPLATE_KINDS[:_LEGACY_KIND_COUNT] if older else _POD_TEMPLATE_KINDS
    for group, kind, path in kinds:
        patch = _patch(group, kind, path, component)
        if not group:
            if older:
                del patch["target"]["group"]
            else:
                patch["target"]["group"] = "^$"
        patches.append(patch)
    return [{"kustomize": {"patches": patches}}]


def older_label_patches(spec: dict[str, Any]) -> bool:
    """Whether a release takes the older seven-target list: a chart.spec release whose source is a
    HelmRepository, the one shape a shared case pins to it."""
    chart = spec.get("chart")
    chart_spec = chart.get("spec") if isinstance(chart, dict) else None
    source = chart_spec.get("sourceRef") if isinstance(chart_spec, dict) else None
    return isinstance(source, dict) and source.get("kind") == "HelmRepository"


def _check_finite(value: Any, path: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise FieldError(f"{path}: a non-finite number cannot be written as JSON")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_finite(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_finite(item, f"{path}[{index}]")


def check_values(values: Any, field: str = "values") -> dict[str, Any]:
    if not isinstance(values, dict):
        raise FieldError(f"{field}: must be a JSON object, got {go_type_name(values)}")
    _check_finite(values, field)
    return values


def _check_values_reference(entry: Any, index: int) -> None:
    where = f"valuesFrom[{index}]"
    if not isinstance(entry, dict):
        raise FieldError(f"{where}: must be an object, got {go_type_name(entry)}")
    kind = entry.get("kind")
    if kind not in ("Secret", "ConfigMap"):
        raise FieldError(f'{where}.kind: must be "Secret" or "ConfigMap", got {kind!r}')
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise FieldError(f"{where}.name: required (the name of the {kind})")
    if len(name) > 253:
        raise FieldError(f"{where}.name: must be at most 253 characters, got {len(name)}")
    values_key = entry.get("valuesKey")
    if values_key and (
        not isinstance(values_key, str) or len(values_key) > 253 or not _VALUES_KEY.match(values_key)
    ):
        raise FieldError(f"{where}.valuesKey: must be at most 253 characters matching ^[\\-._a-zA-Z0-9]+$")
    target_path = entry.get("targetPath")
    if target_path and (
        not isinstance(target_path, str) or len(target_path) > 250 or not _TARGET_PATH.match(target_path)
    ):
        raise FieldError(f"{where}.targetPath: must be at most 250 characters of a dot path with [n] indexes")


def check_values_from(values_from: Any) -> list[dict[str, Any]]:
    if not isinstance(values_from, list):
        raise FieldError(f"valuesFrom: must be a list, got {go_type_name(values_from)}")
    for index, entry in enumerate(values_from):
        _check_values_reference(entry, index)
    return values_from


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _normalize_durations(spec: dict[str, Any]) -> None:
    for path in _DURATION_PATHS:
        node: Any = spec
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and node.get(path[-1]) is not None:
            node[path[-1]] = flux_duration(node[path[-1]], ".".join(path))


def finish_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The HelmReleaseSpec as written: nulls dropped, omitempty strings dropped, interval
    defaulted, durations checked and written in Go's form, values and valuesFrom checked."""
    spec = _drop_nulls(spec)
    for key in ("releaseName", "targetNamespace", "storageNamespace", "serviceAccountName"):
        if spec.get(key) == "":
            del spec[key]
    spec["interval"] = interval_or_default(spec.get("interval"))
    _normalize_durations(spec)
    check_spec(spec)
    return spec


def check_spec(spec: dict[str, Any]) -> None:
    """The checks every HelmReleaseSpec is held to, from the helm rule or the helmrelease kind:
    values a JSON object, each valuesFrom entry within the CRD's constraints (an empty list is
    dropped), and exactly one of chart and chartRef."""
    if "values" in spec:
        check_values(spec["values"])
    if "valuesFrom" in spec and not check_values_from(spec["valuesFrom"]):
        del spec["valuesFrom"]
    if "chart" in spec and "chartRef" in spec:
        raise FieldError("chart and chartRef: exactly one of them is required, both are set")
    if "chart" not in spec and "chartRef" not in spec:
        raise FieldError("chart and chartRef: exactly one of them is required, neither is set")


def helmrelease_object(name: str, namespace: str, spec: dict[str, Any], component: str) -> dict[str, Any]:
    """A HelmRelease carrying the component-label post-renderer."""
    spec = dict(spec)
    spec["postRenderers"] = component_label_post_renderers(component, spec) + list(
        spec.get("postRenderers") or []
    )
    return {
        "apiVersion": HELMRELEASE_API,
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
