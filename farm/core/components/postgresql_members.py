"""The members the postgresql rule writes: the Cluster spec, the ObjectStore, the Pooler and the
Databases, with the names each takes (author's property, else the default; never shortened)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from farm.core.components.cnpg_common import (
    BARMAN_API,
    BARMAN_PLUGIN,
    check_image_registry,
    check_image_tag,
    cnpg_object,
    dns1035_rule,
    is_dns1035_label,
    refuse_operator_chosen_image,
)
from farm.core.components.cnpg_database import check_database_name, database_spec
from farm.core.components.postgresql_parse import PostgresqlConfig
from farm.core.errors import FieldError
from farm.core.model import BuildContext, ComponentSpec
from farm.core.names import is_dns1123_label, is_dns1123_subdomain

POOLER_NAME_MAX = 63
DEFAULT_POOLER_INSTANCES = 3
S3_ACCESS_KEY = "ACCESS_KEY_ID"
S3_SECRET_KEY = "ACCESS_SECRET_KEY"


@dataclass
class MemberNames:
    object_store: str | None
    pooler: str | None
    databases: list[str]


def _barman_store(block: dict[str, str]) -> dict[str, Any]:
    """A BarmanObjectStoreConfiguration from destinationPath, endpointURL and secretName."""
    store: dict[str, Any] = {"destinationPath": block["destinationPath"]}
    if block.get("endpointURL"):
        store["endpointURL"] = block["endpointURL"]
    secret = block.get("secretName")
    if secret:
        store["s3Credentials"] = {
            "accessKeyId": {"name": secret, "key": S3_ACCESS_KEY},
            "secretAccessKey": {"name": secret, "key": S3_SECRET_KEY},
        }
    return store


def cluster_spec(config: PostgresqlConfig, image: str, store_name: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"imageName": image, "primaryUpdateStrategy": "unsupervised"}
    if config.replicas is not None:
        spec["instances"] = config.replicas
    if config.storage_size is not None:
        spec["storage"] = {"size": config.storage_size}
    spec["resources"] = config.resources
    if config.affinity is not None:
        spec["affinity"] = config.affinity
    if config.inherited_metadata:
        spec["inheritedMetadata"] = config.inherited_metadata
    postgresql: dict[str, Any] = {}
    if config.parameters:
        postgresql["parameters"] = config.parameters
    if config.synchronous is not None:
        postgresql["synchronous"] = {**config.synchronous, "failoverQuorum": False}
    spec["postgresql"] = postgresql
    if config.backup is not None:
        backup: dict[str, Any] = {"barmanObjectStore": _barman_store(config.backup)}
        if config.backup.get("retentionPolicy"):
            backup["retentionPolicy"] = config.backup["retentionPolicy"]
        spec["backup"] = backup
    if config.object_store is not None and store_name is not None:
        parameters = {"barmanObjectName": store_name}
        if config.object_store.get("serverName"):
            parameters["serverName"] = config.object_store["serverName"]
        spec["plugins"] = [{"name": BARMAN_PLUGIN, "isWALArchiver": True, "parameters": parameters}]
    if config.monitoring is not None and config.monitoring["enabled"]:
        monitoring: dict[str, Any] = {"enablePodMonitor": True}
        if config.monitoring["customQueries"]:
            monitoring["customQueriesConfigMap"] = config.monitoring["customQueries"]
        spec["monitoring"] = monitoring
    if config.managed_roles:
        spec["managed"] = {"roles": config.managed_roles}
    if config.external_clusters:
        spec["externalClusters"] = config.external_clusters
    if config.bootstrap:
        spec["bootstrap"] = config.bootstrap
    return spec


def object_store(config: PostgresqlConfig, name: str, ctx: BuildContext) -> dict[str, Any]:
    assert config.object_store is not None
    spec: dict[str, Any] = {"configuration": _barman_store(config.object_store)}
    if config.object_store.get("retentionPolicy"):
        spec["retentionPolicy"] = config.object_store["retentionPolicy"]
    spec["instanceSidecarConfiguration"] = {"resources": {}}
    return cnpg_object("ObjectStore", name, ctx.namespace, spec, api=BARMAN_API)


def pooler(config: PostgresqlConfig, name: str, cluster_name: str, ctx: BuildContext) -> dict[str, Any]:
    assert config.pooler is not None
    if name == cluster_name:
        raise FieldError(f'cluster.name "{cluster_name}": a pooler cannot have the same name as its cluster')
    settings = config.pooler
    pgbouncer: dict[str, Any] = {"poolMode": settings.get("poolMode") or "session"}
    if settings.get("parameters"):
        pgbouncer["parameters"] = settings["parameters"]
    image = settings.get("image")
    if image:
        check_image_tag(image, "pooler.image")
        check_image_registry(ctx.policy, image, "pgbouncer.image")
        pgbouncer["image"] = image
    else:
        refuse_operator_chosen_image(ctx.policy, "pgbouncer.image (pooler.image on a postgresql component)")
    spec = {
        "cluster": {"name": cluster_name},
        "instances": settings.get("instances", DEFAULT_POOLER_INSTANCES),
        "type": settings.get("type") or "rw",
        "pgbouncer": pgbouncer,
    }
    return cnpg_object("Pooler", name, ctx.namespace, spec)


def database(entry: dict[str, Any], name: str, cluster_name: str, ctx: BuildContext) -> dict[str, Any]:
    authored = {k: v for k, v in entry["entry"].items() if k != "objectName"}
    spec = database_spec({**authored, "cluster": {"name": cluster_name}}, entry["path"])
    return cnpg_object("Database", name, ctx.namespace, spec)


def _other_components(ctx: BuildContext, own: str) -> dict[str, str]:
    return {c.name: c.type for c in getattr(ctx, "components", ()) if c.name != own}


def _claim(name: str, role: str, component: ComponentSpec, ctx: BuildContext) -> None:
    """A member name may not be the name of a component of the document."""
    if name == component.name:
        raise FieldError(
            f'{role}: generates component "{name}", which is already the name of component "{name}" '
            f'(type "{component.type}") in the document; rename one of them'
        )
    others = _other_components(ctx, component.name)
    if name in others:
        raise FieldError(
            f'{role}: generates component "{name}", which is already the name of component "{name}" '
            f'(type "{others[name]}") in the document; rename one of them'
        )


def _pooler_name(config: PostgresqlConfig, component: ComponentSpec, ctx: BuildContext) -> str | None:
    if not (config.pooler and config.pooler["enabled"]):
        return None
    if config.pooler_name:
        name = config.pooler_name
        if not is_dns1035_label(name, POOLER_NAME_MAX):
            raise FieldError(f'poolerName: cnpg-pooler name "{name}": {dns1035_rule(POOLER_NAME_MAX)}')
    else:
        name = f"{component.name}-pooler"
        if not is_dns1035_label(name, POOLER_NAME_MAX):
            raise FieldError(
                f'pooler: cnpg-pooler name "{name}": must be a DNS-1035 label of at most 63 characters '
                "(CloudNativePG names the pooler's Service after it); the default derives from the component "
                "name: set poolerName to name the Pooler otherwise"
            )
    _claim(name, "pooler", component, ctx)
    return name


def _database_names(config: PostgresqlConfig, component: ComponentSpec, ctx: BuildContext) -> list[str]:
    names: list[str] = []
    seen_db: dict[str, str] = {}
    seen_object: dict[str, str] = {}
    for entry in config.databases:
        path, db_name = entry["path"], entry["name"]
        check_database_name(db_name, f"{path}.name")
        if db_name in seen_db:
            raise FieldError(
                f'{path}.name: database "{db_name}" is also created by {seen_db[db_name]}; each entry is one '
                "Database, so name each database once"
            )
        seen_db[db_name] = path
        name = entry["objectName"]
        if name:
            if not is_dns1123_subdomain(name):
                raise FieldError(f'{path}.objectName: Database name "{name}": must be a DNS-1123 subdomain')
        else:
            if not is_dns1123_label(db_name):
                raise FieldError(
                    f'{path}.objectName: required: database name "{db_name}" cannot be part of an object name, '
                    "so the Database has no default name; set objectName"
                )
            name = f"{component.name}-{db_name}"
            if not is_dns1123_subdomain(name):
                raise FieldError(f'{path}: Database name "{name}": must be a DNS-1123 subdomain')
        if name in seen_object:
            raise FieldError(
                f'{path}: generates Database "{name}", which {seen_object[name]} generates too; rename one of them'
            )
        seen_object[name] = path
        _claim(name, path, component, ctx)
        names.append(name)
    return names


def member_names(
    config: PostgresqlConfig, component: ComponentSpec, cluster_name: str, ctx: BuildContext
) -> MemberNames:
    store = None
    if config.object_store is not None:
        store = config.object_store_object_name or component.name
        if not is_dns1123_subdomain(store):
            raise FieldError(
                f'objectStoreObjectName: ObjectStore name "{store}": must be a DNS-1123 subdomain'
            )
    return MemberNames(store, _pooler_name(config, component, ctx), _database_names(config, component, ctx))


def ordered_databases(config: PostgresqlConfig, names: MemberNames) -> Iterator[tuple[str, dict[str, Any]]]:
    """The Database named like the Pooler first (it joins the Pooler's group), then the others."""
    pairs = list(zip(names.databases, config.databases, strict=True))
    yield from ((n, e) for n, e in pairs if n == names.pooler)
    yield from ((n, e) for n, e in pairs if n != names.pooler)
