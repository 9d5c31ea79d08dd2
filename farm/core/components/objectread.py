"""The fields of a foreign object the environment policy reads, held to their Go types.

Seed 002, passthrough "Policy": an object of a registered kind is decoded as that kind for the
check, and "what cannot be read is refused, not passed: an object of a registered kind that does
not decode as that kind". The check here reads a workload, a claim or a PersistentVolume through
the fields the policy looks at (metadata, the pod template, its containers and volumes, the claim
templates, the storage requests); a value of the wrong type in one of them is a decode failure of
the kind, which :func:`read_error` names by path (``spec.template.spec.containers: must be a list,
got float64``) so the caller refuses the object as unreadable instead of crashing on it.
"""

from __future__ import annotations

import math
from typing import Any

from farm.core.fields import go_type_name, go_value_repr
from farm.core.quantity import QUANTITY_SYNTAX_ERROR, QuantityError, is_quantity_syntax, parse_quantity

_HOST_NAMESPACES = ("hostNetwork", "hostPID", "hostIPC")
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


class Unreadable(Exception):
    """A field that does not decode as its Go type; ``str()`` is ``<path>: <cause>``."""


def _object(value: Any, path: str) -> dict[str, Any]:
    """The object at ``path`` ({} when absent or null); anything else is unreadable."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Unreadable(f"{path}: must be an object, got {go_type_name(value)}")
    return value


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Unreadable(f"{path}: must be a list, got {go_type_name(value)}")
    return value


def _typed(value: Any, kind: type, noun: str, path: str) -> None:
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool) != (kind is bool)):
        raise Unreadable(f"{path}: must be {noun}, got {go_type_name(value)}")


def _string_map(value: Any, path: str) -> None:
    for key, item in _object(value, path).items():
        _typed(item, str, "a string", f"{path}.{key}")


def _quantities(value: Any, path: str, bounded: bool = False) -> None:
    """A ResourceList: every value a quantity (a string or a number that parses as one). With
    ``bounded``, a value past this farm's quantity bounds (digits, exponent) is refused too, for a
    kind whose checks then do arithmetic on it."""
    for name, amount in _object(value, path).items():
        if amount is None:
            continue
        if isinstance(amount, bool) or not isinstance(amount, (str, int, float)):
            raise Unreadable(f"{path}.{name}: must be a quantity, got {go_type_name(amount)}")
        if isinstance(amount, float) and not math.isfinite(amount):
            raise Unreadable(f"{path}.{name}: must be a quantity, got {go_value_repr(amount)}")
        if isinstance(amount, str) and not is_quantity_syntax(amount):
            raise Unreadable(f"{path}.{name}: {QUANTITY_SYNTAX_ERROR}")
        if bounded:
            try:
                parse_quantity(amount)
            except QuantityError as exc:
                raise Unreadable(f"{path}.{name}: {exc}") from None


def _metadata(value: Any, path: str) -> None:
    metadata = _object(value, path)
    for key in ("name", "namespace"):
        _typed(metadata.get(key), str, "a string", f"{path}.{key}")
    for key in ("labels", "annotations"):
        _string_map(metadata.get(key), f"{path}.{key}")


def _resources(value: Any, path: str, bounded: bool = False) -> None:
    resources = _object(value, path)
    for side in ("limits", "requests"):
        _quantities(resources.get(side), f"{path}.{side}", bounded)


def _container(value: Any, path: str, bounded: bool) -> None:
    if value is None:
        raise Unreadable(f"{path}: null is not a valid array element")
    container = _object(value, path)
    for key in ("name", "image"):
        _typed(container.get(key), str, "a string", f"{path}.{key}")
    context = _object(container.get("securityContext"), f"{path}.securityContext")
    _typed(context.get("privileged"), bool, "a boolean", f"{path}.securityContext.privileged")
    capabilities = _object(context.get("capabilities"), f"{path}.securityContext.capabilities")
    for index, capability in enumerate(
        _list(capabilities.get("add"), f"{path}.securityContext.capabilities.add")
    ):
        _typed(capability, str, "a string", f"{path}.securityContext.capabilities.add[{index}]")
    windows = _object(context.get("windowsOptions"), f"{path}.securityContext.windowsOptions")
    _typed(
        windows.get("hostProcess"), bool, "a boolean", f"{path}.securityContext.windowsOptions.hostProcess"
    )
    _resources(container.get("resources"), f"{path}.resources", bounded)


def _pod_spec(value: Any, path: str, bounded: bool = False) -> None:
    pod = _object(value, path)
    for key in _HOST_NAMESPACES:
        _typed(pod.get(key), bool, "a boolean", f"{path}.{key}")
    for index, volume in enumerate(_list(pod.get("volumes"), f"{path}.volumes")):
        if volume is None:
            raise Unreadable(f"{path}.volumes[{index}]: null is not a valid array element")
        entry = _object(volume, f"{path}.volumes[{index}]")
        _typed(entry.get("name"), str, "a string", f"{path}.volumes[{index}].name")
    for list_key in _CONTAINER_LISTS:
        for index, container in enumerate(_list(pod.get(list_key), f"{path}.{list_key}")):
            _container(container, f"{path}.{list_key}[{index}]", bounded)
    _resources(pod.get("resources"), f"{path}.resources", bounded)


def _template(value: Any, path: str, bounded: bool = False) -> None:
    template = _object(value, path)
    _metadata(template.get("metadata"), f"{path}.metadata")
    _pod_spec(template.get("spec"), f"{path}.spec", bounded)


def _claim_spec(value: Any, path: str) -> None:
    spec = _object(value, path)
    _resources(spec.get("resources"), f"{path}.resources")


def _workload(obj: dict[str, Any], kind: str) -> None:
    if kind == "Pod":
        _pod_spec(obj.get("spec"), "spec")
        return
    if kind == "PodTemplate":
        _template(obj.get("template"), "template")
        return
    spec = _object(obj.get("spec"), "spec")
    if kind == "CronJob":
        job = _object(spec.get("jobTemplate"), "spec.jobTemplate")
        _metadata(job.get("metadata"), "spec.jobTemplate.metadata")
        job_spec = _object(job.get("spec"), "spec.jobTemplate.spec")
        _template(job_spec.get("template"), "spec.jobTemplate.spec.template")
        return
    _template(spec.get("template"), "spec.template")
    if kind == "StatefulSet":
        claims = _list(spec.get("volumeClaimTemplates"), "spec.volumeClaimTemplates")
        for index, claim in enumerate(claims):
            where = f"spec.volumeClaimTemplates[{index}]"
            if claim is None:
                raise Unreadable(f"{where}: null is not a valid array element")
            entry = _object(claim, where)
            _metadata(entry.get("metadata"), f"{where}.metadata")
            _claim_spec(entry.get("spec"), f"{where}.spec")


def template_error(template: Any, path: str) -> str | None:
    """Why a pod template a kind carries open (a CloudNativePG Pooler's ``template``) cannot be
    read as a PodTemplateSpec where the policy check reads it (``<path>...: <cause>``), or None."""
    try:
        _template(template, path, bounded=True)
    except Unreadable as exc:
        return str(exc)
    return None


def read_error(obj: dict[str, Any], kind: str) -> str | None:
    """Why a workload, claim or PersistentVolume cannot be read as its kind (``<path>: <cause>``),
    or None when every field the policy check reads has its Go type."""
    try:
        _metadata(obj.get("metadata"), "metadata")
        if kind == "PersistentVolumeClaim":
            _claim_spec(obj.get("spec"), "spec")
        elif kind == "PersistentVolume":
            _quantities(_object(obj.get("spec"), "spec").get("capacity"), "spec.capacity")
        else:
            _workload(obj, kind)
    except Unreadable as exc:
        return str(exc)
    return None
