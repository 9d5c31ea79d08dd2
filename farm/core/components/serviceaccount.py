"""The ``serviceaccount`` component: one ServiceAccount named after the component (seed 002,
"serviceaccount, persistentvolumeclaim, configmap"). webservice and worker build their account with
:func:`build_service_account`, as their serviceaccount member."""

from __future__ import annotations

from typing import Any

from farm.core.components.containers import reject_unknown_keys
from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_bool_field, required_string_field
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.registry import ComponentType

PROPERTIES = ("automountServiceAccountToken", "imagePullSecrets")


def build_service_account(
    name: str, component: str, namespace: str, automount: bool | None, pull_secrets: list[dict[str, str]]
) -> dict[str, Any]:
    account: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"labels": {"app": component}, "name": name, "namespace": namespace},
    }
    if automount is not None:
        account["automountServiceAccountToken"] = automount
    if pull_secrets:
        account["imagePullSecrets"] = pull_secrets
    return account


def _pull_secrets(value: Any) -> list[dict[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(f"imagePullSecrets: must be a list, got {go_type_name(value)}")
    secrets = []
    for index, entry in enumerate(value):
        label = f"imagePullSecrets[{index}]"
        if not isinstance(entry, dict):
            raise FieldError(f"{label}: must be an object, got {go_type_name(entry)}")
        reject_unknown_keys(entry, ("name",), label)
        secrets.append({"name": required_string_field(entry, "name", label)})
    return secrets


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = component.properties
    for key in sorted(props):
        if key not in PROPERTIES:
            raise FieldError(f'unknown property "{key}"')
    automount, present = parse_bool_field(props, "automountServiceAccountToken")
    account = build_service_account(
        component.name,
        component.name,
        ctx.namespace,
        automount if present else None,
        _pull_secrets(props.get("imagePullSecrets")),
    )
    return Generated(objects=[account])


HANDLER = ComponentType(name="serviceaccount", build=build, emits=("v1 ServiceAccount",))
