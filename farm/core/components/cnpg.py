"""The further CloudNativePG kinds (seed 002, "cnpg-imagecatalog, …, cnpg-subscription"): Backup,
ScheduledBackup, ImageCatalog, ClusterImageCatalog, DatabaseRole, Publication and Subscription.
Each emits one object decoded strictly from its spec, named after the component unless objectName
names it. No defaults; a zero the API types cannot carry is refused; cluster.name must be a name
CloudNativePG admits for a Cluster. Only the catalogs are policed (their images)."""

from __future__ import annotations

from typing import Any

from farm.core.components.cnpg_common import (
    CNPG_API,
    check_cluster_name,
    check_image_registry,
    check_image_tag,
    rfc3339_time,
)
from farm.core.components.cnpg_database import CLUSTER_REFERENCE, CNPG
from farm.core.errors import FieldError
from farm.core.kinds.engine import (
    BOOL,
    INT32,
    INT64,
    STRING,
    F,
    KindContext,
    Struct,
    kind_component,
    list_of,
    map_of,
)

_RETAIN = '"retain"'
LOCAL_REFERENCE = Struct("LocalObjectReference", [F("name", STRING, "omit req")])

# --- Backup and ScheduledBackup ---------------------------------------------------------------------

BACKUP_PLUGIN_CONFIGURATION = Struct(
    "BackupPluginConfiguration", [F("name", STRING, "req"), F("parameters", map_of(STRING), "omit")]
)
ONLINE_CONFIGURATION = Struct(
    "OnlineConfiguration",
    [F("waitForArchive", BOOL, "omit ptr"), F("immediateCheckpoint", BOOL, "omit ptr")],
)
_BACKUP_FIELDS = [
    F("cluster", CLUSTER_REFERENCE, "req"),
    F("target", STRING, "omit"),
    F("method", STRING, "omit", default='"barmanObjectStore"'),
    F("pluginConfiguration", BACKUP_PLUGIN_CONFIGURATION, "omit ptr"),
    F("online", BOOL, "omit ptr"),
    F("onlineConfiguration", ONLINE_CONFIGURATION, "omit ptr"),
]
BACKUP_SPEC = Struct("BackupSpec", _BACKUP_FIELDS)
SCHEDULED_BACKUP_SPEC = Struct(
    "ScheduledBackupSpec",
    [
        F("suspend", BOOL, "omit ptr"),
        F("immediate", BOOL, "omit ptr"),
        F("schedule", STRING, "req"),
        F("backupOwnerReference", STRING, "omit", default='"none"'),
        *_BACKUP_FIELDS,
    ],
)

# --- image catalogs ---------------------------------------------------------------------------------

IMAGE_VOLUME_SOURCE = Struct(
    "ImageVolumeSource", [F("reference", STRING, "omit"), F("pullPolicy", STRING, "omit")]
)
EXTENSION_ENV_VAR = Struct("ExtensionEnvVar", [F("name", STRING, "req"), F("value", STRING, "req")])
EXTENSION_CONFIGURATION = Struct(
    "ExtensionConfiguration",
    [
        F("name", STRING, "req"),
        F("image", IMAGE_VOLUME_SOURCE, "omit"),
        F("extension_control_path", list_of(STRING), "omit"),
        F("dynamic_library_path", list_of(STRING), "omit"),
        F("ld_library_path", list_of(STRING), "omit"),
        F("bin_path", list_of(STRING), "omit"),
        F("env", list_of(EXTENSION_ENV_VAR), "omit"),
    ],
)
CATALOG_IMAGE = Struct(
    "CatalogImage",
    [
        F("image", STRING, "req"),
        F("major", INT32, "req"),
        F("extensions", list_of(EXTENSION_CONFIGURATION), "omit"),
    ],
)
COMPONENT_IMAGE = Struct("ComponentImage", [F("key", STRING, "req"), F("image", STRING, "req")])
IMAGE_CATALOG_SPEC = Struct(
    "ImageCatalogSpec",
    [F("images", list_of(CATALOG_IMAGE), "req"), F("componentImages", list_of(COMPONENT_IMAGE), "omit")],
)

# --- DatabaseRole, Publication, Subscription ---------------------------------------------------------

DATABASE_ROLE_SPEC = Struct(
    "DatabaseRoleSpec",
    [
        F("cluster", CLUSTER_REFERENCE, "req"),
        F("databaseRoleReclaimPolicy", STRING, "omit", default=_RETAIN),
        F("clientCertificate", BOOL, "omit ptr"),
        F("name", STRING, "req"),
        F("comment", STRING, "omit"),
        F("ensure", STRING, "omit", default='"present"'),
        F("passwordSecret", LOCAL_REFERENCE, "omit ptr"),
        F("connectionLimit", INT64, "omit", default="-1"),
        F("validUntil", STRING, "omit ptr"),
        F("inRoles", list_of(STRING), "omit"),
        F("inherit", BOOL, "omit ptr"),
        F("disablePassword", BOOL, "omit"),
        F("superuser", BOOL, "omit"),
        F("createdb", BOOL, "omit"),
        F("createrole", BOOL, "omit"),
        F("login", BOOL, "omit"),
        F("replication", BOOL, "omit"),
        F("bypassrls", BOOL, "omit"),
    ],
)
PUBLICATION_TABLE = Struct(
    "PublicationTargetTable",
    [
        F("only", BOOL, "omit"),
        F("name", STRING, "req"),
        F("schema", STRING, "omit"),
        F("columns", list_of(STRING), "omit"),
    ],
)
PUBLICATION_OBJECT = Struct(
    "PublicationTargetObject",
    [F("tablesInSchema", STRING, "omit"), F("table", PUBLICATION_TABLE, "omit ptr")],
)
PUBLICATION_TARGET = Struct(
    "PublicationTarget",
    [F("allTables", BOOL, "omit"), F("objects", list_of(PUBLICATION_OBJECT), "omit")],
)
PUBLICATION_SPEC = Struct(
    "PublicationSpec",
    [
        F("cluster", CLUSTER_REFERENCE, "req"),
        F("name", STRING, "req"),
        F("dbname", STRING, "req"),
        F("parameters", map_of(STRING), "omit"),
        F("target", PUBLICATION_TARGET, "req"),
        F("publicationReclaimPolicy", STRING, "omit", default=_RETAIN),
    ],
)
SUBSCRIPTION_SPEC = Struct(
    "SubscriptionSpec",
    [
        F("cluster", CLUSTER_REFERENCE, "req"),
        F("name", STRING, "req"),
        F("dbname", STRING, "req"),
        F("parameters", map_of(STRING), "omit"),
        F("publicationName", STRING, "req"),
        F("publicationDBName", STRING, "omit"),
        F("externalClusterName", STRING, "req"),
        F("subscriptionReclaimPolicy", STRING, "omit", default=_RETAIN),
    ],
)

# --- checks -----------------------------------------------------------------------------------------


def _check_cluster_reference(ctx: KindContext) -> None:
    check_cluster_name(ctx.decoded["cluster"].get("name", ""), "cluster.name")


def _check_role(ctx: KindContext) -> None:
    _check_cluster_reference(ctx)
    spec = ctx.obj["spec"]
    if spec.get("name") == "":
        raise FieldError("name: must not be empty (the DatabaseRole CRD refuses an empty role name)")
    if spec.get("validUntil") is not None:
        spec["validUntil"] = rfc3339_time(spec["validUntil"], "validUntil")


def _catalog_images(spec: dict[str, Any]) -> list[tuple[str, str]]:
    found = []
    for index, image in enumerate(spec.get("images") or []):
        found.append((f"images[{index}].image", image.get("image", "")))
        for e_index, extension in enumerate(image.get("extensions") or []):
            reference = (extension.get("image") or {}).get("reference")
            if reference:
                found.append((f"images[{index}].extensions[{e_index}].image.reference", reference))
    for index, component in enumerate(spec.get("componentImages") or []):
        found.append((f"componentImages[{index}].image", component.get("image", "")))
    return found


def _check_catalog(ctx: KindContext) -> None:
    spec = ctx.decoded
    majors: dict[int, int] = {}
    for index, image in enumerate(spec.get("images") or []):
        major = image.get("major")
        if major in majors:
            raise FieldError(
                f"images[{index}].major: {major} is also the major version of images[{majors[major]}]; "
                "the API takes each major version once"
            )
        majors[major] = index
    keys: dict[str, int] = {}
    for index, component in enumerate(spec.get("componentImages") or []):
        key = component.get("key")
        if key in keys:
            raise FieldError(
                f'componentImages[{index}].key: "{key}" is also the key of componentImages[{keys[key]}]; '
                "the API takes each key once"
            )
        keys[key] = index
    for path, image in _catalog_images(spec):
        check_image_tag(image, path)
    for path, image in _catalog_images(spec):
        check_image_registry(ctx.build.policy, image, path)


def _kind(name: str, kind: str, spec: Struct, check: Any = _check_cluster_reference, **options: Any) -> Any:
    return kind_component(
        name, CNPG_API, kind, f"cnpgv1.{spec.name}", spec=spec, api=CNPG, check=check, **options
    )


BACKUP = _kind("cnpg-backup", "Backup", BACKUP_SPEC)
SCHEDULED_BACKUP = _kind("cnpg-scheduledbackup", "ScheduledBackup", SCHEDULED_BACKUP_SPEC)
IMAGE_CATALOG = _kind("cnpg-imagecatalog", "ImageCatalog", IMAGE_CATALOG_SPEC, _check_catalog)
CLUSTER_IMAGE_CATALOG = _kind(
    "cnpg-clusterimagecatalog", "ClusterImageCatalog", IMAGE_CATALOG_SPEC, _check_catalog, cluster_scoped=True
)
DATABASE_ROLE = _kind("cnpg-databaserole", "DatabaseRole", DATABASE_ROLE_SPEC, _check_role)
PUBLICATION = _kind("cnpg-publication", "Publication", PUBLICATION_SPEC)
SUBSCRIPTION = _kind("cnpg-subscription", "Subscription", SUBSCRIPTION_SPEC)
