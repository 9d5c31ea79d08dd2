"""Storage kind components: storageclass, volumeattributesclass, csidriver (policy-free,
cluster-scoped) and persistentvolume, held to the environment policy's hostPath gate and storage
maximum (seed 002, their entries)."""

from __future__ import annotations

from farm.core.kinds import storage as types
from farm.core.kinds.engine import KindContext, kind_component
from farm.core.policy import REFUSAL_HOST_PATH, REFUSAL_STORAGE_MAXIMUM, refuse
from farm.core.quantity import parse_quantity

STORAGE_V1 = "storage.k8s.io/v1"
_NODE_PATH_SOURCES = ("hostPath", "local")


def _check_persistent_volume(kc: KindContext) -> None:
    """hostPath and local name a path on the node; capacity.storage is held to the maximum."""
    policy = kc.build.policy
    for source in _NODE_PATH_SOURCES:
        if source in kc.decoded and not policy.allow_host_path_volumes:
            raise refuse(
                f"{source}: a {source} volume names a path on the node, and {source} volumes are not "
                "allowed by the environment policy",
                REFUSAL_HOST_PATH,
            )
    storage = (kc.decoded.get("capacity") or {}).get("storage")
    if (
        storage is not None
        and policy.max_storage
        and parse_quantity(storage) > parse_quantity(policy.max_storage)
    ):
        raise refuse(
            f"capacity.storage: storage {storage} exceeds enforced maximum {policy.max_storage}",
            REFUSAL_STORAGE_MAXIMUM,
        )


STORAGE_CLASS = kind_component(
    "storageclass",
    STORAGE_V1,
    "StorageClass",
    "storagev1.StorageClass",
    body=types.STORAGE_CLASS,
    cluster_scoped=True,
)

VOLUME_ATTRIBUTES_CLASS = kind_component(
    "volumeattributesclass",
    STORAGE_V1,
    "VolumeAttributesClass",
    "storagev1.VolumeAttributesClass",
    body=types.VOLUME_ATTRIBUTES_CLASS,
    cluster_scoped=True,
)

CSI_DRIVER = kind_component(
    "csidriver",
    STORAGE_V1,
    "CSIDriver",
    "storagev1.CSIDriverSpec",
    spec=types.CSI_DRIVER_SPEC,
    cluster_scoped=True,
)

PERSISTENT_VOLUME = kind_component(
    "persistentvolume",
    "v1",
    "PersistentVolume",
    "corev1.PersistentVolumeSpec",
    spec=types.PERSISTENT_VOLUME_SPEC,
    cluster_scoped=True,
    check=_check_persistent_volume,
)
