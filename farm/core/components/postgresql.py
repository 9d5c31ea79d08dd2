"""postgresql: the role-named rule that lowers one component into CloudNativePG members (seed 002,
"postgresql"): a Cluster, an ObjectStore when objectStore is set, a Pooler when pooler.enabled,
and a Database per databases entry, in the order Cluster, ObjectStore, Pooler, the Database named
like the Pooler, the other Databases. Every member carries the postgresql component's label.

The Cluster goes through the cnpg-cluster kind's policy (instances, resources, storage, images)
and then the rule's post-policy step: enablePDB from the instance count and the 1Gi storage
fallback held to the policy maximum."""

from __future__ import annotations

from typing import Any

from farm.core.components import postgresql_members as members
from farm.core.components.cnpg_cluster import (
    apply_cluster_policy,
    check_cluster_images,
    check_generated_cluster,
    check_instances,
    with_written_defaults,
)
from farm.core.components.cnpg_common import (
    CLUSTER_NAME_MAX,
    check_image_tag,
    check_positive_storage,
    check_storage_maximum,
    cnpg_object,
    dns1035_rule,
    is_dns1035_label,
)
from farm.core.components.cnpg_database import CNPG
from farm.core.components.cnpg_kinds import CLUSTER_SPEC
from farm.core.components.postgresql_parse import PostgresqlConfig, parse_config
from farm.core.errors import FieldError
from farm.core.kinds.engine import decode_struct
from farm.core.model import BuildContext, ComponentSpec, Generated, NameClaim
from farm.core.registry import ComponentType

DEFAULT_IMAGE = "ghcr.io/cloudnative-pg/postgresql"
STORAGE_FALLBACK = "1Gi"


def _cluster_name(config: PostgresqlConfig, component: str) -> str:
    if config.cluster_object_name:
        name = config.cluster_object_name
        if not is_dns1035_label(name, CLUSTER_NAME_MAX):
            raise FieldError(
                'clusterObjectName (or the Naming hook\'s answer for role "postgresql-cluster"): '
                f'postgresql Cluster name "{name}": {dns1035_rule(CLUSTER_NAME_MAX)}'
            )
        return name
    if not is_dns1035_label(component, CLUSTER_NAME_MAX):
        raise FieldError(f'postgresql name "{component}": {dns1035_rule(CLUSTER_NAME_MAX)}')
    return component


def _image(config: PostgresqlConfig) -> str:
    if config.image_name:
        check_image_tag(config.image_name, "imageName")
        return config.image_name
    image = f"{DEFAULT_IMAGE}:{config.version}"
    try:
        check_image_tag(image, "image")
    except FieldError as exc:
        reason = exc.message.removeprefix("image: ")
        raise FieldError(
            f'version: "{config.version}" is refused as the tag of the default image: {reason}'
        ) from None
    return image


def _cluster(config: PostgresqlConfig, cluster_name: str, store_name: str | None, ctx: BuildContext) -> dict:
    # The member is a cnpg-cluster component: its properties go through that kind's decode, so
    # what Go's omitempty drops (a managed role's login: false) is dropped here too.
    spec = decode_struct(members.cluster_spec(config, _image(config), store_name), CLUSTER_SPEC, "", CNPG)
    check_cluster_images(spec)
    apply_cluster_policy(
        spec,
        ctx.policy,
        instances_authored=config.replicas is not None,
        storage_authored=config.storage_size is not None,
    )
    _after_policy(spec, ctx)
    with_written_defaults(spec)
    check_generated_cluster(cluster_name, spec, "postgresql Cluster name")
    return cnpg_object("Cluster", cluster_name, ctx.namespace, spec)


def _after_policy(spec: dict[str, Any], ctx: BuildContext) -> None:
    """ApplyPostgresqlDefaults: enablePDB from the instance count, then the 1Gi fallback."""
    instances = spec.get("instances", 1)
    check_instances(instances)
    spec["enablePDB"] = instances > 1
    storage = spec.setdefault("storage", {})
    if not storage.get("size"):
        check_storage_maximum(ctx.policy, STORAGE_FALLBACK, "storageSize")
        storage["size"] = STORAGE_FALLBACK


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    config = parse_config(component.properties)
    if config.storage_size is not None:
        check_positive_storage(config.storage_size, "storageSize")
    if config.replicas is not None and config.replicas < 1:
        raise FieldError(f"replicas: must be >= 1, got {config.replicas}")
    cluster_name = _cluster_name(config, component.name)
    names = members.member_names(config, component, cluster_name, ctx)
    cluster = _cluster(config, cluster_name, names.object_store, ctx)
    objects = [cluster]
    claims = [_claim(cluster, "postgresql-cluster", config.cluster_object_name, "clusterObjectName")]
    if names.object_store is not None:
        store = members.object_store(config, names.object_store, ctx)
        objects.append(store)
        claims.append(
            _claim(store, "postgresql-objectstore", config.object_store_object_name, "objectStoreObjectName")
        )
    if names.pooler is not None:
        pooler = members.pooler(config, names.pooler, cluster_name, ctx)
        objects.append(pooler)
        claims.append(_claim(pooler, "pooler", config.pooler_name, "poolerName"))
    for db_name, entry in members.ordered_databases(config, names):
        database = members.database(entry, db_name, cluster_name, ctx)
        objects.append(database)
        claims.append(_claim(database, "database", entry["objectName"], f"{entry['path']}.objectName"))
    return Generated(objects=objects, claims=claims)


def _claim(obj: dict[str, Any], role: str, authored: Any, key: str) -> NameClaim:
    """Each member's name is claimed under its role (seed 002, postgresql)."""
    return NameClaim(obj, role, f"properties.{key}" if authored else None)


HANDLER = ComponentType(
    name="postgresql",
    build=build,
    emits=(
        "postgresql.cnpg.io/v1 Cluster",
        "barmancloud.cnpg.io/v1 ObjectStore",
        "postgresql.cnpg.io/v1 Pooler",
        "postgresql.cnpg.io/v1 Database",
    ),
    decode="hand-written parser (lowering rule onto the cnpg kinds)",
    lowering_rule=True,
)
