"""Field tables of storage.k8s.io/v1 (StorageClass, VolumeAttributesClass, CSIDriver) and of the
core/v1 PersistentVolumeSpec, at k8s.io/api v0.37.1."""

from __future__ import annotations

from farm.core.kinds.corev1_pod import STRUCTS as CORE
from farm.core.kinds.engine import BOOL, INT32, INT64, QUANTITY, STRING, F, Struct, list_of, map_of

TOPOLOGY_SELECTOR_LABEL_REQUIREMENT = Struct(
    "TopologySelectorLabelRequirement", [F("key", STRING), F("values", list_of(STRING))]
)

TOPOLOGY_SELECTOR_TERM = Struct(
    "TopologySelectorTerm",
    [F("matchLabelExpressions", list_of(TOPOLOGY_SELECTOR_LABEL_REQUIREMENT), "omit")],
)

STORAGE_CLASS = Struct(
    "StorageClass",
    [
        F("provisioner", STRING, "req!"),
        F("parameters", map_of(STRING), "omit"),
        F("reclaimPolicy", STRING, "omit ptr"),
        F("mountOptions", list_of(STRING), "omit"),
        F("allowVolumeExpansion", BOOL, "omit ptr"),
        F("volumeBindingMode", STRING, "omit ptr"),
        F("allowedTopologies", list_of(TOPOLOGY_SELECTOR_TERM), "omit"),
    ],
)

VOLUME_ATTRIBUTES_CLASS = Struct(
    "VolumeAttributesClass",
    [F("driverName", STRING, "req!"), F("parameters", map_of(STRING), "omit req!")],
)

TOKEN_REQUEST = Struct("TokenRequest", [F("audience", STRING), F("expirationSeconds", INT64, "omit ptr")])

CSI_DRIVER_SPEC = Struct(
    "CSIDriverSpec",
    [
        F("attachRequired", BOOL, "omit ptr"),
        F("podInfoOnMount", BOOL, "omit ptr"),
        F("volumeLifecycleModes", list_of(STRING), "omit"),
        F("storageCapacity", BOOL, "omit ptr"),
        F("fsGroupPolicy", STRING, "omit ptr"),
        F("tokenRequests", list_of(TOKEN_REQUEST), "omit"),
        F("requiresRepublish", BOOL, "omit ptr"),
        F("seLinuxMount", BOOL, "omit ptr"),
        F("nodeAllocatableUpdatePeriodSeconds", INT64, "omit ptr"),
        F("serviceAccountTokenInSecrets", BOOL, "omit ptr"),
        F("preventPodSchedulingIfMissing", BOOL, "omit ptr"),
    ],
)

# --- PersistentVolumeSpec ---------------------------------------------------------------------------

SECRET_REFERENCE = Struct("SecretReference", [F("name", STRING, "omit"), F("namespace", STRING, "omit")])

OBJECT_REFERENCE = Struct(
    "ObjectReference",
    [
        F(name, STRING, "omit")
        for name in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    ],
)

CSI_PERSISTENT_VOLUME_SOURCE = Struct(
    "CSIPersistentVolumeSource",
    [
        F("driver", STRING),
        F("volumeHandle", STRING),
        F("readOnly", BOOL, "omit"),
        F("fsType", STRING, "omit"),
        F("volumeAttributes", map_of(STRING), "omit"),
        F("controllerPublishSecretRef", SECRET_REFERENCE, "omit ptr"),
        F("nodeStageSecretRef", SECRET_REFERENCE, "omit ptr"),
        F("nodePublishSecretRef", SECRET_REFERENCE, "omit ptr"),
        F("controllerExpandSecretRef", SECRET_REFERENCE, "omit ptr"),
        F("nodeExpandSecretRef", SECRET_REFERENCE, "omit ptr"),
    ],
)

LOCAL_VOLUME_SOURCE = Struct("LocalVolumeSource", [F("path", STRING), F("fsType", STRING, "omit ptr")])

FC_VOLUME_SOURCE = Struct(
    "FCVolumeSource",
    [
        F("targetWWNs", list_of(STRING), "omit"),
        F("lun", INT32, "omit ptr"),
        F("fsType", STRING, "omit"),
        F("readOnly", BOOL, "omit"),
        F("wwids", list_of(STRING), "omit"),
    ],
)

ISCSI_PERSISTENT_VOLUME_SOURCE = Struct(
    "ISCSIPersistentVolumeSource",
    [
        F("targetPortal", STRING),
        F("iqn", STRING),
        F("lun", INT32),
        F("iscsiInterface", STRING, "omit", default='"default"'),
        F("fsType", STRING, "omit"),
        F("readOnly", BOOL, "omit"),
        F("portals", list_of(STRING), "omit"),
        F("chapAuthDiscovery", BOOL, "omit"),
        F("chapAuthSession", BOOL, "omit"),
        F("secretRef", SECRET_REFERENCE, "omit ptr"),
        F("initiatorName", STRING, "omit ptr"),
    ],
)

VOLUME_NODE_AFFINITY = Struct("VolumeNodeAffinity", [F("required", CORE["NodeSelector"], "omit ptr")])

PERSISTENT_VOLUME_SPEC = Struct(
    "PersistentVolumeSpec",
    [
        F("capacity", map_of(QUANTITY), "omit"),
        # PersistentVolumeSource, inlined: the sources this table holds
        F("hostPath", CORE["HostPathVolumeSource"], "omit ptr"),
        F("nfs", CORE["NFSVolumeSource"], "omit ptr"),
        F("iscsi", ISCSI_PERSISTENT_VOLUME_SOURCE, "omit ptr"),
        F("fc", FC_VOLUME_SOURCE, "omit ptr"),
        F("local", LOCAL_VOLUME_SOURCE, "omit ptr"),
        F("csi", CSI_PERSISTENT_VOLUME_SOURCE, "omit ptr"),
        F("accessModes", list_of(STRING), "omit"),
        F("claimRef", OBJECT_REFERENCE, "omit ptr"),
        F("persistentVolumeReclaimPolicy", STRING, "omit"),
        F("storageClassName", STRING, "omit"),
        F("mountOptions", list_of(STRING), "omit"),
        F("volumeMode", STRING, "omit ptr"),
        F("nodeAffinity", VOLUME_NODE_AFFINITY, "omit ptr"),
        F("volumeAttributesClassName", STRING, "omit ptr"),
    ],
)
