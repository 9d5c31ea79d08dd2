"""Field-table audit of corev1.PersistentVolumeSpec against k8s.io/api v0.36/v0.37: every source of
the embedded PersistentVolumeSource decodes into its type (the table held six of them)."""

from __future__ import annotations

from typing import Any

from .kindbuild import build, message


def _pv(**source: Any) -> dict[str, Any]:
    return {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], **source}


def test_remote_sources_decode_and_write_as_the_go_types() -> None:
    cases = {
        "gcePersistentDisk": ({"pdName": "disk", "fsType": "ext4"}, {"pdName": "disk", "fsType": "ext4"}),
        "awsElasticBlockStore": ({"volumeID": "vol-1", "readOnly": False}, {"volumeID": "vol-1"}),
        "glusterfs": (
            {"endpoints": "gluster", "path": "vol", "endpointsNamespace": ""},
            {"endpoints": "gluster", "path": "vol", "endpointsNamespace": ""},
        ),
        "rbd": (
            {
                "monitors": ["10.0.0.1:6789"],
                "image": "img",
                "secretRef": {"name": "ceph", "namespace": "storage"},
            },
            {
                "monitors": ["10.0.0.1:6789"],
                "image": "img",
                "secretRef": {"name": "ceph", "namespace": "storage"},
            },
        ),
        "cinder": (
            {"volumeID": "v", "secretRef": {"name": "os"}},
            {"volumeID": "v", "secretRef": {"name": "os"}},
        ),
        "cephfs": ({"monitors": ["m"], "user": "admin"}, {"monitors": ["m"], "user": "admin"}),
        "flocker": ({"datasetName": "ds"}, {"datasetName": "ds"}),
        "flexVolume": (
            {"driver": "example/flex", "options": {"a": "b"}},
            {"driver": "example/flex", "options": {"a": "b"}},
        ),
        "vsphereVolume": ({"volumePath": "[ds] v.vmdk"}, {"volumePath": "[ds] v.vmdk"}),
        "quobyte": ({"registry": "r:7861", "volume": "v"}, {"registry": "r:7861", "volume": "v"}),
        "azureDisk": (
            {"diskName": "d", "diskURI": "u", "kind": "Managed"},
            {"diskName": "d", "diskURI": "u", "kind": "Managed"},
        ),
        "photonPersistentDisk": ({"pdID": "p"}, {"pdID": "p"}),
        "portworxVolume": ({"volumeID": "px"}, {"volumeID": "px"}),
        "storageos": (
            {"volumeName": "v", "secretRef": {"kind": "Secret", "name": "s"}},
            {"volumeName": "v", "secretRef": {"kind": "Secret", "name": "s"}},
        ),
    }
    for source, (authored, written) in cases.items():
        spec = build("persistentvolume", _pv(**{source: authored}))["spec"]
        assert spec[source] == written, source


def test_sources_whose_go_type_writes_unset_fields() -> None:
    azure = build("persistentvolume", _pv(azureFile={"secretName": "s", "shareName": "share"}))["spec"]
    assert azure["azureFile"] == {"secretName": "s", "shareName": "share", "secretNamespace": None}
    scale = build(
        "persistentvolume",
        _pv(scaleIO={"gateway": "https://gw", "system": "sys", "secretRef": {"name": "sio"}}),
    )["spec"]
    assert scale["scaleIO"] == {"gateway": "https://gw", "system": "sys", "secretRef": {"name": "sio"}}


def test_defaulted_zeros_of_the_new_sources_are_refused() -> None:
    rbd = {"monitors": ["m"], "image": "img", "pool": ""}
    assert message("persistentvolume", _pv(rbd=rbd)) == (
        'component "c": rbd.pool: "" cannot be carried by the Kubernetes API types (the field is omitted '
        'when zero, so the API server would apply its default "rbd")'
    )
    scale = {"gateway": "g", "system": "s", "secretRef": {"name": "x"}, "storageMode": ""}
    assert message("persistentvolume", _pv(scaleIO=scale)) == (
        'component "c": scaleIO.storageMode: "" cannot be carried by the Kubernetes API types (the field is '
        'omitted when zero, so the API server would apply its default "ThinProvisioned")'
    )


def test_new_sources_are_strict() -> None:
    assert message(
        "persistentvolume", _pv(cephfs={"monitors": ["m"], "secretRef": {"name": "s", "key": "k"}})
    ) == ('component "c": unknown field "cephfs.secretRef.key"')
    assert message("persistentvolume", _pv(portworxVolume={"volumeID": 7})) == (
        'component "c": portworxVolume.volumeID: must be a string, got int'
    )
