"""cnpg-cluster, cnpg-pooler and cnpg-objectstore: the CloudNativePG operator-CR kinds the
postgresql rule lowers onto (seed 002, "cnpg-cluster" and "cnpg-pooler, cnpg-database,
cnpg-objectstore"). Each spec is decoded strictly; the Cluster kind's policy is the one
postgresql enforces (cnpg_cluster.py).

Deep corev1 structures (node affinity, tolerations, security contexts, volumes, the Pooler's pod
template) are carried as written (RAW) here: the strict decode reaches every CNPG-owned field."""

from __future__ import annotations

from typing import Any

from farm.core.components.cnpg_cluster import (
    apply_cluster_policy,
    check_cluster_images,
    check_generated_cluster,
    check_instances,
    with_written_defaults,
)
from farm.core.components.cnpg_common import (
    BARMAN_API,
    CNPG_API,
    check_cluster_name,
    check_image_registry,
    check_image_tag,
    check_resource_consistency,
    check_resource_maxima,
    dns1035_rule,
    is_dns1035_label,
    refuse_operator_chosen_image,
    rfc3339_time,
)
from farm.core.components.cnpg_database import CLUSTER_REFERENCE, CNPG
from farm.core.components.objectread import template_error
from farm.core.errors import FieldError
from farm.core.kinds.engine import (
    BOOL,
    DURATION,
    INT32,
    INT64,
    QUANTITY,
    RAW,
    STRING,
    Custom,
    F,
    KindContext,
    Struct,
    kind_component,
    list_of,
    map_of,
)
from farm.core.kinds.meta import LABEL_SELECTOR

RESOURCE_REQUIREMENTS = Struct(
    "ResourceRequirements",
    [
        F("limits", map_of(QUANTITY), "omit"),
        F("requests", map_of(QUANTITY), "omit"),
        F("claims", list_of(RAW), "omit"),
    ],
)
SECRET_KEY_SELECTOR = Struct("SecretKeySelector", [F("name", STRING), F("key", STRING)])
S3_CREDENTIALS = Struct(
    "S3Credentials",
    [
        F("accessKeyId", SECRET_KEY_SELECTOR, "omit ptr"),
        F("secretAccessKey", SECRET_KEY_SELECTOR, "omit ptr"),
        F("region", SECRET_KEY_SELECTOR, "omit ptr"),
        F("sessionToken", SECRET_KEY_SELECTOR, "omit ptr"),
        F("inheritFromIAMRole", BOOL, "omit"),
    ],
)
WAL_CONFIGURATION = Struct(
    "WalBackupConfiguration",
    [
        F("compression", STRING, "omit"),
        F("encryption", STRING, "omit"),
        F("maxParallel", INT64, "omit"),
        F("archiveAdditionalCommandArgs", list_of(STRING), "omit"),
        F("restoreAdditionalCommandArgs", list_of(STRING), "omit"),
    ],
)
DATA_CONFIGURATION = Struct(
    "DataBackupConfiguration",
    [
        F("compression", STRING, "omit"),
        F("encryption", STRING, "omit"),
        F("jobs", INT32, "omit ptr"),
        F("immediateCheckpoint", BOOL, "omit"),
        F("additionalCommandArgs", list_of(STRING), "omit"),
    ],
)
BARMAN_OBJECT_STORE = Struct(
    "BarmanObjectStoreConfiguration",
    [
        F("s3Credentials", S3_CREDENTIALS, "omit ptr"),
        F("azureCredentials", RAW, "omit ptr"),
        F("googleCredentials", RAW, "omit ptr"),
        F("endpointURL", STRING, "omit"),
        F("endpointCA", SECRET_KEY_SELECTOR, "omit ptr"),
        F("destinationPath", STRING, "req"),
        F("serverName", STRING, "omit"),
        F("wal", WAL_CONFIGURATION, "omit ptr"),
        F("data", DATA_CONFIGURATION, "omit ptr"),
        F("tags", map_of(STRING), "omit"),
        F("historyTags", map_of(STRING), "omit"),
    ],
)

# --- ObjectStore ------------------------------------------------------------------------------------

INSTANCE_SIDECAR = Struct(
    "InstanceSidecarConfiguration",
    [
        F("env", list_of(RAW), "omit"),
        F("retentionPolicyIntervalSeconds", INT64, "omit", default="1800"),
        F("resources", RESOURCE_REQUIREMENTS, "omit"),
        F("additionalContainerArgs", list_of(STRING), "omit"),
        F("logLevel", STRING, "omit"),
    ],
)
OBJECT_STORE_SPEC = Struct(
    "ObjectStoreSpec",
    [
        F("configuration", BARMAN_OBJECT_STORE, "req"),
        F("retentionPolicy", STRING, "omit"),
        F("instanceSidecarConfiguration", INSTANCE_SIDECAR, "omit"),
    ],
)


def _check_object_store(ctx: KindContext) -> None:
    if ctx.decoded["configuration"].get("serverName"):
        raise FieldError(
            "configuration.serverName: the ObjectStore CRD forbids it; the server name is a parameter "
            "(serverName) of the Cluster's barman-cloud plugin entry"
        )
    resources = ctx.decoded["instanceSidecarConfiguration"]["resources"]
    path = "instanceSidecarConfiguration.resources"
    check_resource_maxima(resources, ctx.build.policy, path)
    check_resource_consistency(resources, path)


OBJECT_STORE = kind_component(
    "cnpg-objectstore",
    BARMAN_API,
    "ObjectStore",
    "barmancloudv1.ObjectStoreSpec",
    spec=OBJECT_STORE_SPEC,
    api=CNPG,
    check=_check_object_store,
)

# --- Pooler -----------------------------------------------------------------------------------------

PGBOUNCER_SPEC = Struct(
    "PgBouncerSpec",
    [
        F("poolMode", STRING, "omit"),
        F("serverTLSSecret", RAW, "omit ptr"),
        F("serverCASecret", RAW, "omit ptr"),
        F("clientCASecret", RAW, "omit ptr"),
        F("clientTLSSecret", RAW, "omit ptr"),
        F("authQuerySecret", RAW, "omit ptr"),
        F("authQuery", STRING, "omit"),
        F("parameters", map_of(STRING), "omit"),
        F("pg_hba", list_of(STRING), "omit"),
        F("paused", BOOL, "omit ptr"),
        F("image", STRING, "omit"),
        F("imageCatalogRef", RAW, "omit ptr"),
    ],
)
POOLER_SPEC = Struct(
    "PoolerSpec",
    [
        F("cluster", CLUSTER_REFERENCE, "req"),
        F("type", STRING, "omit"),
        F("instances", INT32, "omit ptr"),
        F("template", RAW, "omit ptr"),
        F("pgbouncer", PGBOUNCER_SPEC, "ptr"),  # required: refused in the check, with its own words
        F("deploymentStrategy", RAW, "omit ptr"),
        F("monitoring", RAW, "omit ptr"),
        F("serviceTemplate", RAW, "omit ptr"),
        F("serviceAccountName", STRING, "omit"),
    ],
)
_TEMPLATE_REFUSED = ("ephemeralContainers", "activeDeadlineSeconds", "priority", "overhead")


def _template_spec(spec: dict[str, Any]) -> dict[str, Any] | None:
    template = spec.get("template")
    if template is None:
        return None
    if not isinstance(template, dict):
        raise FieldError("template: must be an object")
    pod = template.setdefault("spec", {})
    if not isinstance(pod, dict):
        raise FieldError("template.spec: must be an object")
    cause = template_error(template, "template")
    if cause is not None:
        raise FieldError(cause)
    for key in _TEMPLATE_REFUSED:
        if pod.get(key) is not None:
            raise FieldError(
                f"template.spec.{key}: not allowed: the operator copies the template into a Deployment"
            )
    if pod.get("containers") is None:
        pod["containers"] = []
    return pod


def _pooler_image_source(spec: dict[str, Any], pod: dict[str, Any] | None) -> bool:
    containers = (pod or {}).get("containers") or []
    if any(isinstance(c, dict) and c.get("name") == "pgbouncer" and c.get("image") for c in containers):
        return True
    pgbouncer = spec.get("pgbouncer") or {}
    return bool(pgbouncer.get("image") or pgbouncer.get("imageCatalogRef"))


def _check_pooler_containers(pod: dict[str, Any], ctx: KindContext) -> None:
    policy = ctx.build.policy
    for list_key in ("initContainers", "containers"):
        for index, container in enumerate(pod.get(list_key) or []):
            where = f'template.spec.{list_key}[{index}] "{container.get("name", "")}"'
            image = container.get("image")
            if image:
                check_image_tag(image, where)
                check_image_registry(policy, image, where)
            resources = container.get("resources") or {}
            check_resource_maxima(resources, policy, where)
            check_resource_consistency(resources, f"{where}: resources")


def _check_pooler(ctx: KindContext) -> None:
    name = ctx.obj["metadata"]["name"]
    if not is_dns1035_label(name, 63):
        raise FieldError(
            f'cnpg-pooler name "{name}": {dns1035_rule(63)} (CloudNativePG names the pooler\'s Service after it)'
        )
    spec = ctx.decoded
    cluster = spec["cluster"].get("name", "")
    check_cluster_name(cluster, "cluster.name")
    if cluster == name:
        raise FieldError(f'cluster.name "{cluster}": a pooler cannot have the same name as its cluster')
    pgbouncer = spec["pgbouncer"] or {}
    if pgbouncer.get("image"):
        check_image_tag(pgbouncer["image"], "pgbouncer.image")
        check_image_registry(ctx.build.policy, pgbouncer["image"], "pgbouncer.image")
    catalog = pgbouncer.get("imageCatalogRef")
    if isinstance(catalog, dict) and catalog.get("key") is None:
        raise FieldError(
            "pgbouncer.imageCatalogRef.key: required (the CloudNativePG API requires this field)"
        )
    pod = _template_spec(spec)
    if pod is not None:
        _check_pooler_containers(pod, ctx)
    if not _pooler_image_source(spec, pod):
        refuse_operator_chosen_image(
            ctx.build.policy, "pgbouncer.image (pooler.image on a postgresql component)"
        )


def _pgbouncer_present(ctx: KindContext) -> None:
    if ctx.authored.get("pgbouncer") is None:
        raise FieldError("pgbouncer: required (an empty object selects PgBouncer's defaults)")
    _check_pooler(ctx)


POOLER = kind_component(
    "cnpg-pooler",
    CNPG_API,
    "Pooler",
    "cnpgv1.PoolerSpec",
    spec=POOLER_SPEC,
    api=CNPG,
    check=_pgbouncer_present,
)

# --- Cluster ----------------------------------------------------------------------------------------

_O, _P = "omit", "omit ptr"
TIME = Custom("Time", lambda value, path, _api: rfc3339_time(value, path))
STORAGE_CONFIGURATION = Struct(
    "StorageConfiguration",
    [
        F("storageClass", STRING, _P),
        F("size", STRING, _O),
        F("resizeInUseVolumes", BOOL, _P),
        F("pvcTemplate", RAW, _P),
    ],
)
ROLE_CONFIGURATION = Struct(
    "RoleConfiguration",
    [
        F("name", STRING, "req"),
        F("comment", STRING, _O),
        F("ensure", STRING, _O),
        F("passwordSecret", RAW, _P),
        F("connectionLimit", INT64, _O, default="-1"),
        F("validUntil", TIME, _P),
        F("inRoles", list_of(STRING), _O),
        F("inherit", BOOL, _P),
        F("disablePassword", BOOL, _O),
        F("superuser", BOOL, _O),
        F("createdb", BOOL, _O),
        F("createrole", BOOL, _O),
        F("login", BOOL, _O),
        F("replication", BOOL, _O),
        F("bypassrls", BOOL, _O),
    ],
)
MANAGED_CONFIGURATION = Struct(
    "ManagedConfiguration", [F("roles", list_of(ROLE_CONFIGURATION), _O), F("services", RAW, _P)]
)
AFFINITY_CONFIGURATION = Struct(
    "AffinityConfiguration",
    [
        F("enablePodAntiAffinity", BOOL, _P),
        F("topologyKey", STRING, _O),
        F("nodeSelector", map_of(STRING), _O),
        F("nodeAffinity", RAW, _P),
        F("tolerations", list_of(RAW), _O),
        F("podAntiAffinityType", STRING, _O),
        F("additionalPodAntiAffinity", RAW, _P),
        F("additionalPodAffinity", RAW, _P),
    ],
)
SYNCHRONOUS = Struct(
    "SynchronousReplicaConfiguration",
    [
        F("method", STRING, "req"),
        F("number", INT64),
        F("maxStandbyNamesFromCluster", INT64, _P),
        F("standbyNamesPre", list_of(STRING), _O),
        F("standbyNamesPost", list_of(STRING), _O),
        F("dataDurability", STRING, _O),
        F("failoverQuorum", BOOL),
    ],
)
SYNC_ELECTION = Struct(
    "SyncReplicaElectionConstraints",
    [F("nodeLabelsAntiAffinity", list_of(STRING), _O), F("enabled", BOOL)],
)
POSTGRES_CONFIGURATION = Struct(
    "PostgresConfiguration",
    [
        F("parameters", map_of(STRING), _O),
        F("synchronous", SYNCHRONOUS, _P),
        F("pg_hba", list_of(STRING), _O),
        F("pg_ident", list_of(STRING), _O),
        F("syncReplicaElectionConstraint", SYNC_ELECTION, _O),
        F("shared_preload_libraries", list_of(STRING), _O),
        F("ldap", RAW, _P),
        F("promotionTimeout", INT32, _O),
        F("enableAlterSystem", BOOL, _O),
        F("extensions", list_of(RAW), _O),
    ],
)
MONITORING_CONFIGURATION = Struct(
    "MonitoringConfiguration",
    [
        F("disableDefaultQueries", BOOL, _P),
        F("customQueriesConfigMap", list_of(RAW), _O),
        F("customQueriesSecret", list_of(RAW), _O),
        F("enablePodMonitor", BOOL, _O),
        F("tls", RAW, _P),
        F("podMonitorMetricRelabelings", list_of(RAW), _O),
        F("podMonitorRelabelings", list_of(RAW), _O),
        F("metricsQueriesTTL", DURATION, _P),
    ],
)
BACKUP_CONFIGURATION = Struct(
    "BackupConfiguration",
    [
        F("volumeSnapshot", RAW, _P),
        F("barmanObjectStore", BARMAN_OBJECT_STORE, _P),
        F("retentionPolicy", STRING, _O),
        F("target", STRING, _O),
    ],
)
EXTERNAL_CLUSTER = Struct(
    "ExternalCluster",
    [
        F("name", STRING, "req"),
        F("connectionParameters", map_of(STRING), _O),
        F("sslCert", RAW, _P),
        F("sslKey", RAW, _P),
        F("sslRootCert", RAW, _P),
        F("password", RAW, _P),
        F("barmanObjectStore", BARMAN_OBJECT_STORE, _P),
        F("plugin", RAW, _P),
    ],
)
PLUGIN_CONFIGURATION = Struct(
    "PluginConfiguration",
    [
        F("name", STRING, "req"),
        F("enabled", BOOL, _P),
        F("isWALArchiver", BOOL, _P),
        F("parameters", map_of(STRING), _O),
    ],
)
POD_SELECTOR_REF = Struct("PodSelectorRef", [F("name", STRING, "req"), F("selector", LABEL_SELECTOR, "req")])
INHERITED_METADATA = Struct(
    "EmbeddedObjectMetadata", [F("labels", map_of(STRING), _O), F("annotations", map_of(STRING), _O)]
)
CLUSTER_SPEC = Struct(
    "ClusterSpec",
    [
        F("description", STRING, _O),
        F("inheritedMetadata", INHERITED_METADATA, _P),
        F("imageName", STRING, _O),
        F("imageCatalogRef", RAW, _P),
        F("imagePullPolicy", STRING, _O),
        F("schedulerName", STRING, _O),
        F("postgresUID", INT64, _O, default="26"),
        F("postgresGID", INT64, _O, default="26"),
        F("instances", INT64),
        F("minSyncReplicas", INT64, _O),
        F("maxSyncReplicas", INT64, _O),
        F("postgresql", POSTGRES_CONFIGURATION, _O),
        F("replicationSlots", RAW, _P),
        F("bootstrap", RAW, _P),
        F("replica", RAW, _P),
        F("superuserSecret", RAW, _P),
        F("enableSuperuserAccess", BOOL, _P),
        F("certificates", RAW, _P),
        F("imagePullSecrets", list_of(RAW), _O),
        F("storage", STORAGE_CONFIGURATION, _O),
        F("serviceAccountTemplate", RAW, _P),
        F("walStorage", STORAGE_CONFIGURATION, _P),
        F("ephemeralVolumeSource", RAW, _P),
        F("startDelay", INT32, _O, default="3600"),
        F("stopDelay", INT32, _O, default="1800"),
        F("smartShutdownTimeout", INT32, _P),
        F("switchoverDelay", INT32, _O, default="3600"),
        F("failoverDelay", INT32, _O),
        F("livenessProbeTimeout", INT32, _P),
        F("affinity", AFFINITY_CONFIGURATION, _O),
        F("topologySpreadConstraints", list_of(RAW), _O),
        F("resources", RESOURCE_REQUIREMENTS, _O),
        F("ephemeralVolumesSizeLimit", RAW, _P),
        F("priorityClassName", STRING, _O),
        F("primaryUpdateStrategy", STRING, _O, default='"unsupervised"'),
        F("primaryUpdateMethod", STRING, _O, default='"restart"'),
        F("backup", BACKUP_CONFIGURATION, _P),
        F("nodeMaintenanceWindow", RAW, _P),
        F("monitoring", MONITORING_CONFIGURATION, _P),
        F("externalClusters", list_of(EXTERNAL_CLUSTER), _O),
        F("logLevel", STRING, _O, default='"info"'),
        F("projectedVolumeTemplate", RAW, _P),
        F("env", list_of(RAW), _O),
        F("envFrom", list_of(RAW), _O),
        F("managed", MANAGED_CONFIGURATION, _P),
        F("seccompProfile", RAW, _P),
        F("podSecurityContext", RAW, _P),
        F("securityContext", RAW, _P),
        F("tablespaces", list_of(RAW), _O),
        F("enablePDB", BOOL, _P),
        F("plugins", list_of(PLUGIN_CONFIGURATION), _O),
        F("probes", RAW, _P),
        F("serviceAccountName", STRING, _O),
        F("podSelectorRefs", list_of(POD_SELECTOR_REF), _O),
    ],
)


def _authored_key(props: dict[str, Any], key: str) -> Any:
    for k, v in props.items():
        if str(k).lower() == key.lower() and v is not None:
            return v
    return None


def _storage_authored(props: dict[str, Any]) -> bool:
    storage = _authored_key(props, "storage")
    if not isinstance(storage, dict):
        return False
    if _authored_key(storage, "size") is not None:
        return True
    template = _authored_key(storage, "pvcTemplate") or {}
    requests = ((template.get("resources") or {}).get("requests") or {}) if isinstance(template, dict) else {}
    return requests.get("storage") is not None


def _check_cluster(ctx: KindContext) -> None:
    spec = ctx.decoded
    name = ctx.obj["metadata"]["name"]
    check_cluster_name(name, "cnpg-cluster name")
    instances_authored = _authored_key(ctx.authored, "instances") is not None
    if instances_authored:
        check_instances(spec["instances"])
    check_cluster_images(spec)
    apply_cluster_policy(
        spec,
        ctx.build.policy,
        instances_authored=instances_authored,
        storage_authored=_storage_authored(ctx.authored),
    )
    with_written_defaults(spec)
    check_generated_cluster(name, spec)


CLUSTER = kind_component(
    "cnpg-cluster",
    CNPG_API,
    "Cluster",
    "cnpgv1.ClusterSpec",
    spec=CLUSTER_SPEC,
    api=CNPG,
    check=_check_cluster,
)
