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

# The PersistentVolume variants of in-tree sources: a secret reference that may name a namespace.
GLUSTERFS_PERSISTENT_VOLUME_SOURCE = Struct(
    "GlusterfsPersistentVolumeSource",
    [
        F("endpoints", STRING),
        F("path", STRING),
        F("readOnly", BOOL, "omit"),
        F("endpointsNamespace", STRING, "omit ptr"),
    ],
)

RBD_PERSISTENT_VOLUME_SOURCE = Struct(
    "RBDPersistentVolumeSource",
    [
        F("monitors", list_of(STRING)),
        F("image", STRING),
        F("fsType", STRING, "omit"),
        F("pool", STRING, "omit", default='"rbd"'),
        F("user", STRING, "omit", default='"admin"'),
        F("keyring", STRING, "omit", default='"/etc/ceph/keyring"'),
        F("secretRef", SECRET_REFERENCE, "omit ptr"),
        F("readOnly", BOOL, "omit"),
    ],
)

CINDER_PERSISTENT_VOLUME_SOURCE = Struct(
    "CinderPersistentVolumeSource",
    [
        F("volumeID", STRING),
        F("fsType", STRING, "omit"),
        F("readOnly", BOOL, "omit"),
        F("secretRef", SECRET_REFERENCE, "omit ptr"),
    ],
)

CEPHFS_PERSISTENT_VOLUME_SOURCE = Struct(
    "CephFSPersistentVolumeSource",
    [
        F("monitors", list_of(STRING)),
        F("path", STRING, "omit"),
        F("user", STRING, "omit"),
        F("secretFile", STRING, "omit"),
        F("secretRef", SECRET_REFERENCE, "omit ptr"),
        F("readOnly", BOOL, "omit"),
    ],
)

FLEX_PERSISTENT_VOLUME_SOURCE = Struct(
    "FlexPersistentVolumeSource",
    [
        F("driver", STRING),
        F("fsType", STRING, "omit"),
        F("secretRef", SECRET_REFERENCE, "omit ptr"),
        F("readOnly", BOOL, "omit"),
        F("options", map_of(STRING), "omit"),
    ],
)

AZURE_FILE_PERSISTENT_VOLUME_SOURCE = Struct(
    "AzureFilePersistentVolumeSource",
    [
        F("secretName", STRING),
        F("shareName", STRING),
        F("readOnly", BOOL, "omit"),
        F("secretNamespace", STRING, "ptr"),  # json:"secretNamespace", no omitempty: unset is null
    ],
)

SCALE_IO_PERSISTENT_VOLUME_SOURCE = Struct(
    "ScaleIOPersistentVolumeSource",
    [
        F("gateway", STRING),
        F("system", STRING),
        F("secretRef", SECRET_REFERENCE, "ptr"),  # json:"secretRef", no omitempty
        F("sslEnabled", BOOL, "omit"),
        F("protectionDomain", STRING, "omit"),
        F("storagePool", STRING, "omit"),
        F("storageMode", STRING, "omit", default='"ThinProvisioned"'),
        F("volumeName", STRING, "omit"),
        F("fsType", STRING, "omit", default='"xfs"'),
        F("readOnly", BOOL, "omit"),
    ],
)

STORAGE_OS_PERSISTENT_VOLUME_SOURCE = Struct(
    "StorageOSPersistentVolumeSource",
    [
        F("volumeName", STRING, "omit"),
        F("volumeNamespace", STRING, "omit"),
        F("fsType", STRING, "omit"),
        F("readOnly", BOOL, "omit"),
        F("secretRef", OBJECT_REFERENCE, "omit ptr"),
    ],
)

VOLUME_NODE_AFFINITY = Struct("VolumeNodeAffinity", [F("required", CORE["NodeSelector"], "omit ptr")])

PERSISTENT_VOLUME_SPEC = Struct(
    "PersistentVolumeSpec",
    [
        F("capacity", map_of(QUANTITY), "omit"),
        # PersistentVolumeSource, inlined: every source, in the Go type's order
        F("gcePersistentDisk", CORE["GCEPersistentDiskVolumeSource"], "omit ptr"),
        F("awsElasticBlockStore", CORE["AWSElasticBlockStoreVolumeSource"], "omit ptr"),
        F("hostPath", CORE["HostPathVolumeSource"], "omit ptr"),
        F("glusterfs", GLUSTERFS_PERSISTENT_VOLUME_SOURCE, "omit ptr"),
        F("nfs", CORE["NFSVolumeSource"], "omit ptr"),
        F("rbd", RBD_PERSISTENT_VOLUME_SOURCE, "omit ptr"),
        F("iscsi", ISCSI_PERSISTENT_VOLUME_SOURCE, "omit ptr"),
        F("cinder", CINDER_PERSISTENT_VOLUME_SOURCE, "omit ptr"),
        F("cephfs", CEPHFS_PERSISTENT_VOLUME_SOURCE, "omit ptr"),
        F("fc", CORE["FCVolumeSource"], "omit ptr"),
        F("flocker", CORE["FlockerVolumeSource"], "omit ptr"),
        F("flexVolume", FLEX_PERSISTENT_VOLUME_SOURCE, "omit ptr"),
        F("azureFile", AZURE_FILE_PERSISTENT_VOLUME_SOURCE, "omit ptr"),
        F("vsphereVolume", CORE["VsphereVirtualDiskVolumeSource"], "omit ptr"),
        F("quobyte", CORE["QuobyteVolumeSource"], "omit ptr"),
        F("azureDisk", CORE["AzureDiskVolumeSource"], "omit ptr"),
        F("photonPersistentDisk", CORE["PhotonPersistentDiskVolumeSource"], "omit ptr"),
        F("portworxVolume", CORE["PortworxVolumeSource"], "omit ptr"),
        F("scaleIO", SCALE_IO_PERSISTENT_VOLUME_SOURCE, "omit ptr"),
        F("local", LOCAL_VOLUME_SOURCE, "omit ptr"),
        F("storageos", STORAGE_OS_PERSISTENT_VOLUME_SOURCE, "omit ptr"),
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
