"""Reading a postgresql component's properties with the presence helpers (seed 002, "postgresql"):
wrong types refused by path, null is absence, string maps take strings only, and a block that
would not be built is refused by the name of the field it is built from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from farm.core.components.cnpg_common import REQUIRED_BY_CNPG, parse_resources
from farm.core.errors import FieldError
from farm.core.fields import (
    go_type_name,
    parse_bool_field,
    parse_int32_field,
    parse_int64_field,
    parse_object_field,
    parse_object_list,
    parse_string_field,
    parse_string_list,
)

DEFAULT_VERSION = "16"
DEFAULT_TOPOLOGY_KEY = "kubernetes.io/hostname"
AFFINITY_KEYS = ("enablePodAntiAffinity", "topologyKey", "podAntiAffinityType", "nodeSelector")
POOLER_SETTINGS = ("instances", "type", "poolMode", "parameters", "image")
BACKUP_KEYS = ("destinationPath", "endpointURL", "secretName", "retentionPolicy")
# The published property schema (kurel build validates the authored keys before the rule runs).
PROPERTIES = (
    "provider",
    "version",
    "imageName",
    "storageSize",
    "replicas",
    "resources",
    "affinity",
    "inheritedMetadata",
    "postgresql",
    "backup",
    "objectStore",
    "monitoring",
    "pooler",
    "poolerName",
    "managedRoles",
    "databases",
    "externalClusters",
    "bootstrap",
    "replication",
    "clusterObjectName",
    "objectStoreObjectName",
)
# Blocks whose fields the schema enumerates: a key outside them is refused by the block's path.
CLOSED_BLOCKS = {
    "backup": BACKUP_KEYS,
    "objectStore": (*BACKUP_KEYS, "serverName"),
    "monitoring": ("enabled", "customQueries"),
    "pooler": ("enabled", *POOLER_SETTINGS),
    "bootstrap": ("recovery", "pg_basebackup"),
    "replication": ("synchronous",),
}


@dataclass
class PostgresqlConfig:
    version: str = DEFAULT_VERSION
    image_name: str = ""
    storage_size: str | None = None
    replicas: int | None = None
    resources: dict[str, Any] = field(default_factory=dict)
    affinity: dict[str, Any] | None = None
    inherited_metadata: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, str] = field(default_factory=dict)
    backup: dict[str, str] | None = None
    object_store: dict[str, str] | None = None
    monitoring: dict[str, Any] | None = None
    pooler: dict[str, Any] | None = None
    pooler_name: str = ""
    managed_roles: list[dict[str, Any]] = field(default_factory=list)
    databases: list[dict[str, Any]] = field(default_factory=list)
    external_clusters: list[dict[str, Any]] = field(default_factory=list)
    bootstrap: dict[str, Any] | None = None
    synchronous: dict[str, Any] | None = None
    cluster_object_name: str = ""
    object_store_object_name: str = ""


def string_map(value: Any, path: str) -> dict[str, str]:
    """A string->string map: the alphabetically first non-string value is refused by key."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FieldError(f"{path}: must be an object, got {go_type_name(value)}")
    out = {}
    for key in sorted(value, key=str):
        entry = value[key]
        if entry is None:
            continue
        if not isinstance(entry, str):
            raise FieldError(f'{path}["{key}"]: must be a string, got {go_type_name(entry)}')
        out[str(key)] = entry
    return out


def _raw_string(props: dict[str, Any], key: str, path: str) -> str | None:
    """A string where an authored "" is a value (None when absent or null)."""
    value = props.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise FieldError(f"{path}: must be a string, got {go_type_name(value)}")
    return value


def _authored(block: dict[str, Any], key: str) -> bool:
    value = block.get(key)
    return value is not None and value != [] and value != {}


def _version(props: dict[str, Any]) -> str:
    version = _raw_string(props, "version", "version")
    if version == "":
        raise FieldError(f'version: must not be empty; omit it to default to "{DEFAULT_VERSION}"')
    return version or DEFAULT_VERSION


def _storage_size(props: dict[str, Any]) -> str | None:
    value = props.get("storageSize")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise FieldError(f"storageSize: must be a string, got {go_type_name(value)}")
    if value == "":
        raise FieldError("storageSize: must not be empty; omit it to take the policy default or 1Gi")
    return str(value)


def _replicas(props: dict[str, Any]) -> int | None:
    value, present = parse_int32_field(props, "replicas")
    if not present:
        return None
    if value < 0:
        raise FieldError(f"replicas: must be >= 0, got {value}")
    return value


def _affinity(props: dict[str, Any]) -> dict[str, Any] | None:
    block, present = parse_object_field(props, "affinity")
    if not present:
        return None
    for key in sorted(block, key=str):
        if key not in AFFINITY_KEYS:
            raise FieldError(f'affinity: unrecognized key "{key}"')
    out: dict[str, Any] = {}
    enabled, enabled_present = parse_bool_field(
        block, "enablePodAntiAffinity", "affinity.enablePodAntiAffinity"
    )
    if enabled_present:
        out["enablePodAntiAffinity"] = enabled
    topology, _ = parse_string_field(block, "topologyKey", "affinity.topologyKey")
    out["topologyKey"] = topology or DEFAULT_TOPOLOGY_KEY
    kind = _raw_string(block, "podAntiAffinityType", "affinity.podAntiAffinityType")
    if kind is not None and kind not in ("preferred", "required"):
        raise FieldError(
            f'affinity.podAntiAffinityType: invalid value "{kind}" (must be preferred or required)'
        )
    out["podAntiAffinityType"] = kind or "preferred"
    selector = string_map(block.get("nodeSelector"), "affinity.nodeSelector")
    if selector:
        out["nodeSelector"] = selector
    return out


def _inherited_metadata(props: dict[str, Any]) -> dict[str, Any]:
    block, _ = parse_object_field(props, "inheritedMetadata")
    out = {}
    for key in ("labels", "annotations"):
        values = string_map(block.get(key), f"inheritedMetadata.{key}")
        if values:
            out[key] = values
    return out


def _backup(props: dict[str, Any], key: str, extra: tuple[str, ...] = ()) -> dict[str, str] | None:
    block, present = parse_object_field(props, key)
    if not present:
        return None
    out = {}
    for name in BACKUP_KEYS + extra:
        value = _raw_string(block, name, f"{key}.{name}")
        if value is not None:
            out[name] = value
    if not out:
        return None
    if "destinationPath" not in out:
        raise FieldError(f"{key}.destinationPath: {REQUIRED_BY_CNPG}")
    return out


def _monitoring(props: dict[str, Any]) -> dict[str, Any] | None:
    block, present = parse_object_field(props, "monitoring")
    if not present:
        return None
    enabled, enabled_present = parse_bool_field(block, "enabled", "monitoring.enabled")
    queries, _ = parse_object_list(block, "customQueries", "monitoring.customQueries")
    parsed = []
    for index, query in enumerate(queries):
        entry = {}
        for name in ("name", "key"):
            value, _ = parse_string_field(query, name, f"monitoring.customQueries[{index}].{name}")
            entry[name] = value
        parsed.append(entry)
    if parsed and not enabled_present:
        raise FieldError(
            "monitoring.enabled: required where monitoring.customQueries is set "
            "(monitoring is built only when enabled is true)"
        )
    return {"enabled": enabled, "customQueries": parsed} if enabled_present else None


def _pooler(props: dict[str, Any]) -> dict[str, Any] | None:
    block, present = parse_object_field(props, "pooler")
    if not present:
        return None
    enabled, enabled_present = parse_bool_field(block, "enabled", "pooler.enabled")
    out: dict[str, Any] = {"enabled": enabled}
    instances, instances_present = parse_int32_field(block, "instances", "pooler.instances")
    if instances_present:
        out["instances"] = instances
    for name in ("type", "poolMode", "image"):
        value = _raw_string(block, name, f"pooler.{name}")
        if value is not None:
            out[name] = value
    parameters = string_map(block.get("parameters"), "pooler.parameters")
    if parameters:
        out["parameters"] = parameters
    if not enabled_present:
        for name in POOLER_SETTINGS:
            if name in out:
                raise FieldError(
                    f"pooler.enabled: required where pooler.{name} is set (the Pooler is emitted only when "
                    "enabled is true)"
                )
        return None
    return out


def _managed_roles(props: dict[str, Any]) -> list[dict[str, Any]]:
    roles, _ = parse_object_list(props, "managedRoles")
    parsed = []
    for index, role in enumerate(roles):
        parsed.append(_managed_role(role, f"managedRoles[{index}]"))
    return parsed


_ROLE_BOOLS = (
    "login",
    "superuser",
    "createdb",
    "createrole",
    "inherit",
    "replication",
    "bypassrls",
    "disablePassword",
)
_ROLE_STRINGS = ("name", "comment", "ensure", "validUntil")


def _managed_role(role: dict[str, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in _ROLE_STRINGS:
        value, present = parse_string_field(role, name, f"{path}.{name}")
        if present:
            out[name] = value
    if "name" not in out:
        raise FieldError(f"{path}.name: {REQUIRED_BY_CNPG}")
    for name in _ROLE_BOOLS:
        value, present = parse_bool_field(role, name, f"{path}.{name}")
        if present:
            out[name] = value
    limit, present = parse_int64_field(role, "connectionLimit", f"{path}.connectionLimit")
    if present:
        if limit == 0:
            raise FieldError(
                f"{path}.connectionLimit: 0 cannot be carried by the CloudNativePG API types (the field is "
                "omitted when zero, so the operator would apply its default -1)"
            )
        out["connectionLimit"] = limit
    in_roles, present = parse_string_list(role, "inRoles", f"{path}.inRoles")
    if in_roles:
        out["inRoles"] = in_roles
    secret, present = parse_string_field(role, "passwordSecret", f"{path}.passwordSecret")
    if present:
        out["passwordSecret"] = {"name": secret}
    return out


def _databases(props: dict[str, Any]) -> list[dict[str, Any]]:
    entries, _ = parse_object_list(props, "databases")
    parsed = []
    for index, entry in enumerate(entries):
        path = f"databases[{index}]"
        name, present = parse_string_field(entry, "name", f"{path}.name")
        if not present:
            raise FieldError(f"{path}.name: {REQUIRED_BY_CNPG}")
        object_name, _ = parse_string_field(entry, "objectName", f"{path}.objectName")
        extensions, _ = parse_object_list(entry, "extensions", f"{path}.extensions")
        parsed.append({"index": index, "path": path, "name": name, "objectName": object_name, "entry": entry})
        del extensions
    return parsed


def _external_clusters(props: dict[str, Any]) -> list[dict[str, Any]]:
    entries, _ = parse_object_list(props, "externalClusters")
    parsed = []
    for index, entry in enumerate(entries):
        path = f"externalClusters[{index}]"
        name, present = parse_string_field(entry, "name", f"{path}.name")
        if not present:
            raise FieldError(f"{path}.name: {REQUIRED_BY_CNPG}")
        out: dict[str, Any] = {"name": name}
        parameters = string_map(entry.get("connectionParameters"), f"{path}.connectionParameters")
        if parameters:
            out["connectionParameters"] = parameters
        store, store_present = parse_object_field(entry, "barmanObjectStore", f"{path}.barmanObjectStore")
        if store_present:
            if not any(str(k).lower() == "destinationpath" and v is not None for k, v in store.items()):
                raise FieldError(f"{path}.barmanObjectStore.destinationPath: {REQUIRED_BY_CNPG}")
            out["barmanObjectStore"] = {k: v for k, v in store.items() if v is not None}
        parsed.append(out)
    return parsed


def _bootstrap(props: dict[str, Any]) -> dict[str, Any] | None:
    block, present = parse_object_field(props, "bootstrap")
    if not present:
        return None
    out = {}
    for method in ("recovery", "pg_basebackup"):
        sub, sub_present = parse_object_field(block, method, f"bootstrap.{method}")
        if not sub_present:
            continue
        source = _raw_string(sub, "source", f"bootstrap.{method}.source")
        if source is None:
            raise FieldError(f"bootstrap.{method}.source: {REQUIRED_BY_CNPG}")
        if source == "":
            raise FieldError(
                f"bootstrap.{method}.source: must not be empty (the bootstrap is built from its source)"
            )
        out[method] = {"source": source}
    return out or None


def _synchronous(props: dict[str, Any]) -> dict[str, Any] | None:
    replication, _ = parse_object_field(props, "replication")
    block, present = parse_object_field(replication, "synchronous", "replication.synchronous")
    if not present:
        return None
    number, number_present = parse_int32_field(block, "number", "replication.synchronous.number")
    durability, durability_present = parse_string_field(
        block, "dataDurability", "replication.synchronous.dataDurability"
    )
    method = _raw_string(block, "method", "replication.synchronous.method")
    if method is None:
        if not number_present and not durability_present:
            return None
        raise FieldError("replication.synchronous.method: required (any or first)")
    out: dict[str, Any] = {"method": method, "number": number if number_present else 1}
    if durability_present:
        out["dataDurability"] = durability
    return out


def _check_keys(props: dict[str, Any]) -> None:
    for key in sorted(props, key=str):
        if key not in PROPERTIES:
            raise FieldError(f'unknown property "{key}"')
    for block, allowed in CLOSED_BLOCKS.items():
        value = props.get(block)
        if isinstance(value, dict):
            for key in sorted(value, key=str):
                if key not in allowed:
                    raise FieldError(f'{block}: unrecognized key "{key}"')


def parse_config(props: dict[str, Any]) -> PostgresqlConfig:
    _check_keys(props)
    provider = _raw_string(props, "provider", "provider")
    if provider not in (None, "cnpg"):
        raise FieldError(f'provider: unsupported value "{provider}" (must be "cnpg")')
    config = PostgresqlConfig(version=_version(props))
    config.image_name, _ = parse_string_field(props, "imageName")
    config.storage_size = _storage_size(props)
    config.replicas = _replicas(props)
    config.resources = parse_resources(props.get("resources"), "resources")
    config.affinity = _affinity(props)
    config.inherited_metadata = _inherited_metadata(props)
    postgresql, _ = parse_object_field(props, "postgresql")
    config.parameters = string_map(postgresql.get("parameters"), "postgresql.parameters")
    config.backup = _backup(props, "backup")
    config.object_store = _backup(props, "objectStore", ("serverName",))
    config.monitoring = _monitoring(props)
    config.pooler = _pooler(props)
    config.pooler_name, _ = parse_string_field(props, "poolerName")
    config.managed_roles = _managed_roles(props)
    config.databases = _databases(props)
    config.external_clusters = _external_clusters(props)
    config.bootstrap = _bootstrap(props)
    config.synchronous = _synchronous(props)
    config.cluster_object_name, _ = parse_string_field(props, "clusterObjectName")
    config.object_store_object_name, _ = parse_string_field(props, "objectStoreObjectName")
    if config.object_store_object_name and config.object_store is None:
        raise FieldError(
            "objectStoreObjectName: names the ObjectStore, and objectStore is not set; remove it, or set objectStore"
        )
    if config.pooler_name and not (config.pooler and config.pooler["enabled"]):
        raise FieldError(
            "poolerName: names the Pooler, and pooler.enabled is not true; remove it, or enable the pooler"
        )
    return config
