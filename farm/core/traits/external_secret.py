"""The external-secret trait: an external-secrets ExternalSecret named after its ``secretName``,
reading from the store the trait names or the ClusterProfile's external-secret capability gives,
optionally injected into the main container (envFrom) or mounted (mountPath)."""

from __future__ import annotations

from typing import Any

from farm.core.durations import DurationError, normalize_duration
from farm.core.errors import FieldError
from farm.core.fields import go_type_name, parse_bool_field, parse_object_field, parse_object_list
from farm.core.registry import TraitApplication, TraitType
from farm.core.traits._common import (
    COMMON_KEYS,
    add_mount,
    add_volume,
    app_labels,
    check_known_keys,
    check_rendering_keys,
    main_container,
    metadata,
    required_string,
    string_prop,
)

DEFAULT_STORE_KIND = "ClusterSecretStore"
DEFAULT_REFRESH = "1h"
STORE_KINDS = ("SecretStore", "ClusterSecretStore")
KEYS = COMMON_KEYS | {"secretName", "data", "secretStoreRef", "refreshInterval", "envFrom", "mountPath"}


def _store_ref(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FieldError(f"{path}: must be an object, got {go_type_name(value)}")
    check_known_keys(value, ("name", "kind"), path)
    name = required_string(value, "name", f"{path}.name")
    kind = string_prop(value, "kind", f"{path}.kind") or DEFAULT_STORE_KIND
    if kind not in STORE_KINDS:
        raise FieldError(f'{path}.kind: must be one of {", ".join(STORE_KINDS)}, got "{kind}"')
    return {"name": name, "kind": kind}


def _refresh(props: dict[str, Any]) -> str:
    value = string_prop(props, "refreshInterval") or DEFAULT_REFRESH
    try:
        return normalize_duration(value)
    except DurationError as exc:
        raise FieldError(f"refreshInterval: {exc}") from None


def validate_rendering(rendering: dict[str, Any], key: str) -> dict[str, Any]:
    """``secretStoreRef.name`` is required, its kind defaults to ClusterSecretStore;
    ``refreshInterval`` may be given."""
    check_rendering_keys(rendering, ("secretStoreRef", "refreshInterval"), "external-secret")
    if rendering.get("secretStoreRef") is None:
        raise FieldError("secretStoreRef.name is required")
    rendering["secretStoreRef"] = _store_ref(rendering["secretStoreRef"], "secretStoreRef")
    if rendering.get("refreshInterval") is not None:
        _refresh(rendering)
    return rendering


def _data(props: dict[str, Any]) -> list[dict[str, Any]]:
    entries, _ = parse_object_list(props, "data")
    out = []
    for index, entry in enumerate(entries):
        where = f"data[{index}]"
        check_known_keys(entry, ("secretKey", "remoteRef"), where)
        secret_key = required_string(entry, "secretKey", f"{where}.secretKey")
        remote, present = parse_object_field(entry, "remoteRef", f"{where}.remoteRef")
        if not present:
            raise FieldError(f"{where}.remoteRef.key is required")
        check_known_keys(remote, ("key", "property", "version"), f"{where}.remoteRef")
        ref = {"key": required_string(remote, "key", f"{where}.remoteRef.key")}
        for optional in ("property", "version"):
            value = string_prop(remote, optional, f"{where}.remoteRef.{optional}")
            if value:
                ref[optional] = value
        out.append({"secretKey": secret_key, "remoteRef": ref})
    return out


def _attach(app: TraitApplication, secret_name: str) -> None:
    env_from, _ = parse_bool_field(app.properties, "envFrom")
    mount_path = string_prop(app.properties, "mountPath")
    if env_from:
        main_container(app).setdefault("envFrom", []).append({"secretRef": {"name": secret_name}})
    if mount_path:
        add_volume(app, {"name": secret_name, "secret": {"secretName": secret_name}})
        add_mount(app, secret_name, mount_path)


def apply(app: TraitApplication) -> list[dict[str, Any]]:
    props = app.properties
    check_known_keys(props, KEYS)
    secret_name = required_string(props, "secretName")
    store, present = parse_object_field(props, "secretStoreRef")
    if not present:
        raise FieldError("secretStoreRef.name is required (author it or set the external-secret capability)")
    spec: dict[str, Any] = {
        "refreshInterval": _refresh(props),
        "secretStoreRef": _store_ref(store, "secretStoreRef"),
        "target": {"name": secret_name},
    }
    data = _data(props)
    if data:
        spec["data"] = data
    _attach(app, secret_name)
    external_secret = {
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": metadata(secret_name, app.ctx.namespace, app_labels(app.component.name)),
        "spec": spec,
    }
    return [external_secret]


HANDLER = TraitType(
    name="external-secret",
    apply=apply,
    capability="optional",
    validate_rendering=validate_rendering,
    emits=("external-secrets.io/v1 ExternalSecret",),
)
