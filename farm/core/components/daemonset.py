"""The ``daemonset`` component: an apps/v1 DaemonSet from the shared container and pod surface,
plus the DaemonSetSpec-level updateStrategy, minReadySeconds and revisionHistoryLimit (seed 002,
daemonset entry). It emits no Service: a ``service`` component selecting ``app: <component>``
exposes the pods, and routing traits go on that."""

from __future__ import annotations

import re
from typing import Any

from farm.core.components import podspec as p
from farm.core.components import podworkload as w
from farm.core.components.containers import reject_unknown_keys
from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_object_field
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.registry import ComponentType

DAEMONSET_SPEC_KEYS = ("updateStrategy", "minReadySeconds", "revisionHistoryLimit")
DAEMONSET_KEYS = w.POD_TEMPLATE_KEYS + DAEMONSET_SPEC_KEYS
REFUSED = {
    "selector": (
        "the selector is builder-managed (app: <component>), must equal the generated template labels, "
        "and is immutable once created"
    ),
    "template": "the pod template is projected from the component's own container and pod-level properties",
}
_PERCENT = re.compile(r"^[0-9]+%\Z")
# The API defaults of RollingUpdateDaemonSet: maxUnavailable 1, maxSurge 0.
_API_DEFAULTS = {"maxUnavailable": 1, "maxSurge": 0}


def _int_or_percent(value: Any, path: str) -> int | str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FieldError(f"{path}: must be an integer or a percentage, got {go_type_name(value)}")
    if isinstance(value, int):
        if value < 0:
            raise FieldError(f"{path}: must be >= 0, got {value}")
        return value
    if not _PERCENT.match(value):
        raise FieldError(f'{path}: "{value}" must be a non-negative integer or a percentage such as "25%"')
    if int(value[:-1]) > 100:
        raise FieldError(f'{path}: "{value}" must not be more than 100%')
    return value


def _is_zero(value: int | str) -> bool:
    return value == 0 or (isinstance(value, str) and int(value[:-1]) == 0)


def parse_update_strategy(props: dict[str, Any]) -> dict[str, Any] | None:
    strategy, present = parse_object_field(props, "updateStrategy", "updateStrategy")
    if not present:
        return None
    reject_unknown_keys(strategy, ("type", "rollingUpdate"), "updateStrategy")
    kind = strategy.get("type")
    if kind is None or kind == "":
        raise FieldError("updateStrategy.type: required (RollingUpdate or OnDelete)")
    if kind not in ("RollingUpdate", "OnDelete"):
        raise FieldError(
            f'updateStrategy.type: invalid value "{kind}", must be one of RollingUpdate, OnDelete'
        )
    out: dict[str, Any] = {"type": kind}
    rolling = strategy.get("rollingUpdate")
    if rolling is None:
        return out
    if kind == "OnDelete":
        raise FieldError(
            "updateStrategy.rollingUpdate: only accepted under type RollingUpdate (OnDelete never reads it)"
        )
    if not isinstance(rolling, dict):
        raise FieldError(f"updateStrategy.rollingUpdate: must be an object, got {go_type_name(rolling)}")
    reject_unknown_keys(rolling, ("maxUnavailable", "maxSurge"), "updateStrategy.rollingUpdate")
    authored = {
        key: _int_or_percent(rolling[key], f"updateStrategy.rollingUpdate.{key}")
        for key in ("maxUnavailable", "maxSurge")
        if rolling.get(key) is not None
    }
    _check_pair(authored)
    out["rollingUpdate"] = authored
    return out


def _check_pair(authored: dict[str, int | str]) -> None:
    """Exactly one of the effective pair is non-zero, counting the API default for an unset half."""
    effective = {key: authored.get(key, default) for key, default in _API_DEFAULTS.items()}
    non_zero = [key for key, value in effective.items() if not _is_zero(value)]
    if len(non_zero) == 1:
        return
    defaulted = [key for key in _API_DEFAULTS if key not in authored]
    note = ""
    if defaulted:
        note = f" (the unset {defaulted[0]} defaults to {_API_DEFAULTS[defaulted[0]]})"
    if non_zero:
        raise FieldError(
            "updateStrategy.rollingUpdate: maxUnavailable and maxSurge may not both be non-zero" + note
        )
    raise FieldError("updateStrategy.rollingUpdate: maxUnavailable and maxSurge may not both be zero" + note)


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = p.drop_nulls(component.properties)
    w.refuse(props, REFUSED)
    w.check_known(props, DAEMONSET_KEYS)
    pod = w.build_pod_template(component, props, ctx)
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": component.name}},
        "template": pod.template,
        "updateStrategy": parse_update_strategy(props) or {},
    }
    w.non_negative_int32(props, "minReadySeconds", spec)
    w.non_negative_int32(props, "revisionHistoryLimit", spec)
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": w.workload_metadata(component.name, component.name, ctx, props),
        "spec": spec,
    }
    return Generated(objects=[daemonset], workload=daemonset)


HANDLER = ComponentType(name="daemonset", build=build, emits=("apps/v1 DaemonSet",))
