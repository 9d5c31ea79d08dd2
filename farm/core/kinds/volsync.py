"""Field tables of VolSync's volsync.backube/v1alpha1 API (ReplicationSourceSpec and
ReplicationDestinationSpec, VolSync v0.16.0), written from the Go struct tags of its api package,
with the Kubernetes types they embed taken from ``corev1_pod``.

What differs from the plain Kubernetes tables (seed 002, replicationsource/replicationdestination):

- the required fields follow VolSync's CRDs: a mover volume's ``mountPath`` and ``volumeSource``, a
  Syncthing peer's ``address``, ``ID`` and ``introducer``, a required node affinity's
  ``nodeSelectorTerms`` (and a label-selector match expression's key and operator, as everywhere);
- a mounted Secret's ``defaultUser`` and ``items[].user`` are fields of the linked Kubernetes type
  that the CRDs do not have: they are refused when authored, 0 included.
"""

from __future__ import annotations

from typing import Any

from farm.core.errors import FieldError
from farm.core.kinds.corev1_pod import STRUCTS as CORE
from farm.core.kinds.engine import (
    BOOL,
    INT32,
    QUANTITY,
    STRING,
    Api,
    Custom,
    F,
    Struct,
    list_of,
    map_of,
)

VOLSYNC = Api("VolSync")
VOLSYNC_API = "volsync.backube/v1alpha1"


def _absent_from_crd(value: Any, path: str, api: Api) -> Any:
    raise FieldError(f"{path}: no field of the {VOLSYNC_API} API: its CRD has no such property")


ABSENT_FROM_CRD = Custom("absent from the CRD", _absent_from_crd)

# --- the Kubernetes types the movers embed ---------------------------------------------------

KEY_TO_PATH = Struct(
    "KeyToPath",
    [
        F("key", STRING),
        F("path", STRING),
        F("mode", INT32, "omit ptr"),
        F("user", ABSENT_FROM_CRD, "omit ptr"),
    ],
)

SECRET_VOLUME_SOURCE = Struct(
    "SecretVolumeSource",
    [
        F("secretName", STRING, "omit"),
        F("items", list_of(KEY_TO_PATH), "omit"),
        F("defaultMode", INT32, "omit ptr"),
        F("optional", BOOL, "omit ptr"),
        F("defaultUser", ABSENT_FROM_CRD, "omit ptr"),
    ],
)

MOVER_VOLUME_SOURCE = Struct(
    "MoverVolumeSource",
    [
        F("secret", SECRET_VOLUME_SOURCE, "omit ptr"),
        F("persistentVolumeClaim", CORE["PersistentVolumeClaimVolumeSource"], "omit ptr"),
        F("nfs", CORE["NFSVolumeSource"], "omit ptr"),
    ],
)

MOVER_VOLUME = Struct(
    "MoverVolume",
    [F("mountPath", STRING, "req"), F("volumeSource", MOVER_VOLUME_SOURCE, "req")],
)

# The CRDs require the terms of a required node affinity, which the Kubernetes type writes null.
NODE_AFFINITY = Struct(
    "NodeAffinity",
    [
        F(
            "requiredDuringSchedulingIgnoredDuringExecution",
            Struct("NodeSelector", [F("nodeSelectorTerms", list_of(CORE["NodeSelectorTerm"]), "req")]),
            "omit ptr",
        ),
        F(
            "preferredDuringSchedulingIgnoredDuringExecution",
            list_of(CORE["PreferredSchedulingTerm"]),
            "omit",
        ),
    ],
)

AFFINITY = Struct(
    "Affinity",
    [
        F("nodeAffinity", NODE_AFFINITY, "omit ptr"),
        F("podAffinity", CORE["PodAffinity"], "omit ptr"),
        F("podAntiAffinity", CORE["PodAffinity"], "omit ptr"),
    ],
)

# --- VolSync's own types -----------------------------------------------------------------------

MOVER_CONFIG = [
    F("moverSecurityContext", CORE["PodSecurityContext"], "omit ptr"),
    F("moverServiceAccount", STRING, "omit ptr"),
    F("moverPodLabels", map_of(STRING), "omit"),
    F("moverResources", CORE["ResourceRequirements"], "omit ptr"),
    F("moverAffinity", AFFINITY, "omit ptr"),
    F("moverVolumes", list_of(MOVER_VOLUME), "omit"),
]

# rsync over SSH has its own, shorter set: no security context, affinity or volumes.
RSYNC_MOVER_CONFIG = [
    F("moverServiceAccount", STRING, "omit ptr"),
    F("moverPodLabels", map_of(STRING), "omit"),
    F("moverResources", CORE["ResourceRequirements"], "omit ptr"),
]

SOURCE_VOLUME_OPTIONS = [
    F("copyMethod", STRING, "omit"),
    F("capacity", QUANTITY, "omit ptr"),
    F("storageClassName", STRING, "omit ptr"),
    F("accessModes", list_of(STRING), "omit"),
    F("volumeSnapshotClassName", STRING, "omit ptr"),
]

DESTINATION_VOLUME_OPTIONS = [
    *SOURCE_VOLUME_OPTIONS,
    F("destinationPVC", STRING, "omit ptr"),
    F("cleanupTempPVC", BOOL, "omit"),
]

CUSTOM_CA = Struct(
    "CustomCASpec",
    [F("secretName", STRING, "omit"), F("configMapName", STRING, "omit"), F("key", STRING, "omit")],
)

TRIGGER = Struct("TriggerSpec", [F("schedule", STRING, "omit ptr"), F("manual", STRING, "omit")])

EXTERNAL = Struct("ExternalSpec", [F("provider", STRING, "omit"), F("parameters", map_of(STRING), "omit")])

SYNCTHING_PEER = Struct(
    "SyncthingPeer",
    [F("address", STRING, "req"), F("ID", STRING, "req"), F("introducer", BOOL, "req")],
)

RETAIN = Struct(
    "ResticRetainPolicy",
    [
        F("hourly", INT32, "omit ptr"),
        F("daily", INT32, "omit ptr"),
        F("weekly", INT32, "omit ptr"),
        F("monthly", INT32, "omit ptr"),
        F("yearly", INT32, "omit ptr"),
        F("within", STRING, "omit ptr"),
    ],
)

_RSYNC_ENDPOINT = [
    F("sshKeys", STRING, "omit ptr"),
    F("serviceType", STRING, "omit ptr"),
    F("address", STRING, "omit ptr"),
    F("port", INT32, "omit ptr"),
    F("path", STRING, "omit ptr"),
    F("sshUser", STRING, "omit ptr"),
]

_RCLONE = [
    F("rcloneConfigSection", STRING, "omit ptr"),
    F("rcloneDestPath", STRING, "omit ptr"),
    F("rcloneConfig", STRING, "omit ptr"),
    F("customCA", CUSTOM_CA, "omit"),  # held by value: written {} where unauthored
]

_RESTIC_CACHE = [
    F("repository", STRING, "omit"),
    F("cacheCapacity", QUANTITY, "omit ptr"),
    F("cacheStorageClassName", STRING, "omit ptr"),
    F("cacheAccessModes", list_of(STRING), "omit"),
    F("customCA", CUSTOM_CA, "omit"),
]

# --- ReplicationSource ---------------------------------------------------------------------------

REPLICATION_SOURCE_SPEC = Struct(
    "ReplicationSourceSpec",
    [
        F("sourcePVC", STRING, "omit"),
        F("trigger", TRIGGER, "omit ptr"),
        F(
            "rsync",
            Struct(
                "ReplicationSourceRsyncSpec", [*SOURCE_VOLUME_OPTIONS, *_RSYNC_ENDPOINT, *RSYNC_MOVER_CONFIG]
            ),
            "omit ptr",
        ),
        F(
            "rsyncTLS",
            Struct(
                "ReplicationSourceRsyncTLSSpec",
                [
                    *SOURCE_VOLUME_OPTIONS,
                    F("keySecret", STRING, "omit ptr"),
                    F("address", STRING, "omit ptr"),
                    F("port", INT32, "omit ptr"),
                    *MOVER_CONFIG,
                ],
            ),
            "omit ptr",
        ),
        F(
            "rclone",
            Struct("ReplicationSourceRcloneSpec", [*SOURCE_VOLUME_OPTIONS, *_RCLONE, *MOVER_CONFIG]),
            "omit ptr",
        ),
        F(
            "restic",
            Struct(
                "ReplicationSourceResticSpec",
                [
                    *SOURCE_VOLUME_OPTIONS,
                    F("pruneIntervalDays", INT32, "omit ptr"),
                    F("retain", RETAIN, "omit ptr"),
                    *_RESTIC_CACHE,
                    *MOVER_CONFIG,
                    F("unlock", STRING, "omit"),
                ],
            ),
            "omit ptr",
        ),
        F(
            "syncthing",
            Struct(
                "ReplicationSourceSyncthingSpec",
                [
                    F("peers", list_of(SYNCTHING_PEER), "omit"),
                    F("serviceType", STRING, "omit ptr"),
                    F("configCapacity", QUANTITY, "omit ptr"),
                    F("configStorageClassName", STRING, "omit ptr"),
                    F("configAccessModes", list_of(STRING), "omit"),
                    *MOVER_CONFIG,
                ],
            ),
            "omit ptr",
        ),
        F("external", EXTERNAL, "omit ptr"),
        F("paused", BOOL, "omit"),
    ],
)

# --- ReplicationDestination ----------------------------------------------------------------------

REPLICATION_DESTINATION_SPEC = Struct(
    "ReplicationDestinationSpec",
    [
        F("trigger", TRIGGER, "omit ptr"),
        F(
            "rsync",
            Struct(
                "ReplicationDestinationRsyncSpec",
                [
                    *DESTINATION_VOLUME_OPTIONS,
                    *_RSYNC_ENDPOINT,
                    F("serviceAnnotations", map_of(STRING), "omit ptr"),
                    *RSYNC_MOVER_CONFIG,
                ],
            ),
            "omit ptr",
        ),
        F(
            "rsyncTLS",
            Struct(
                "ReplicationDestinationRsyncTLSSpec",
                [
                    *DESTINATION_VOLUME_OPTIONS,
                    F("keySecret", STRING, "omit ptr"),
                    F("serviceType", STRING, "omit ptr"),
                    F("serviceAnnotations", map_of(STRING), "omit ptr"),
                    *MOVER_CONFIG,
                ],
            ),
            "omit ptr",
        ),
        F(
            "rclone",
            Struct(
                "ReplicationDestinationRcloneSpec", [*DESTINATION_VOLUME_OPTIONS, *_RCLONE, *MOVER_CONFIG]
            ),
            "omit ptr",
        ),
        F(
            "restic",
            Struct(
                "ReplicationDestinationResticSpec",
                [
                    *DESTINATION_VOLUME_OPTIONS,
                    *_RESTIC_CACHE,
                    F("previous", INT32, "omit ptr"),
                    F("restoreAsOf", STRING, "omit ptr"),
                    F("enableFileDeletion", BOOL, "omit"),
                    F("cleanupCachePVC", BOOL, "omit"),
                    *MOVER_CONFIG,
                ],
            ),
            "omit ptr",
        ),
        F("external", EXTERNAL, "omit ptr"),
        F("paused", BOOL, "omit"),
    ],
)

# Movers whose capacity sizes a volume the operator provisions; and the extra capacities.
CAPACITY_MOVERS = ("rsync", "rsyncTLS", "rclone", "restic")
EXTRA_CAPACITIES = (("restic", "cacheCapacity"), ("syncthing", "configCapacity"))
MOVERS = ("rsync", "rsyncTLS", "rclone", "restic", "syncthing")
