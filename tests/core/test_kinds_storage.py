"""Storage kind components: required fields, kept and dropped zeros, cluster scope, PV policy."""

from __future__ import annotations

from farm.core.errors import PolicyRefusal
from farm.core.policy import REFUSAL_HOST_PATH, REFUSAL_STORAGE_MAXIMUM, Policy

from .kindbuild import build, message, refusal


def test_storageclass_requires_a_provisioner() -> None:
    assert message("storageclass", {"reclaimPolicy": "Delete"}) == (
        'component "c": provisioner: required (the Kubernetes API requires this field)'
    )
    assert message("storageclass", {"provisioner": ""}) == (
        'component "c": provisioner: required (the Kubernetes API requires this field)'
    )


def test_storageclass_default_annotation_and_object_name() -> None:
    obj = build(
        "storageclass",
        {
            "objectName": "standard",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
            "provisioner": "csi.example.com",
            "volumeBindingMode": "Immediate",
        },
        namespace="shop",
    )
    assert obj["metadata"] == {
        "name": "standard",
        "labels": {"launcher.gokure.dev/component": "c"},
        "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
    }
    assert obj["volumeBindingMode"] == "Immediate"


def test_volumeattributesclass_requires_driver_and_parameters() -> None:
    assert message("volumeattributesclass", {"parameters": {"iops": "1"}}) == (
        'component "c": driverName: required (the Kubernetes API requires this field)'
    )
    assert message("volumeattributesclass", {"driverName": "d", "parameters": {}}) == (
        'component "c": parameters: required (the Kubernetes API requires this field)'
    )


def test_csidriver_keeps_empty_lifecycle_modes_out_and_false_in() -> None:
    spec = build(
        "csidriver",
        {"volumeLifecycleModes": [], "storageCapacity": False, "nodeAllocatableUpdatePeriodSeconds": 0},
    )["spec"]
    assert spec == {"storageCapacity": False, "nodeAllocatableUpdatePeriodSeconds": 0}


def test_csidriver_unknown_token_request_key() -> None:
    assert message("csidriver", {"tokenRequests": [{"audience": "a", "ttl": 1}]}) == (
        'component "c": unknown field "tokenRequests[0].ttl"'
    )


def test_persistentvolume_is_cluster_scoped_and_canonicalises_capacity() -> None:
    obj = build(
        "persistentvolume",
        {
            "capacity": {"storage": 1073741824},
            "accessModes": ["ReadWriteOnce"],
            "nfs": {"server": "nfs", "path": "/x"},
        },
        namespace="shop",
    )
    assert "namespace" not in obj["metadata"]
    assert obj["spec"] == {
        "capacity": {"storage": "1073741824"},
        "accessModes": ["ReadWriteOnce"],
        "nfs": {"server": "nfs", "path": "/x"},
    }


def test_persistentvolume_host_path_and_local_are_refused_by_default() -> None:
    error = refusal("persistentvolume", {"hostPath": {"path": "/data"}})
    assert isinstance(error, PolicyRefusal) and error.refusal_class == REFUSAL_HOST_PATH
    assert error.message == (
        'component "c": hostPath: a hostPath volume names a path on the node, and hostPath volumes are not '
        "allowed by the environment policy"
    )
    assert "local volume" in message("persistentvolume", {"local": {"path": "/mnt/disk"}})
    allowed = build(
        "persistentvolume", {"local": {"path": "/mnt"}}, policy=Policy(allow_host_path_volumes=True)
    )
    assert allowed["spec"]["local"] == {"path": "/mnt"}
    # csi is not gated
    assert build("persistentvolume", {"csi": {"driver": "d", "volumeHandle": "h"}})["spec"]["csi"] == {
        "driver": "d",
        "volumeHandle": "h",
    }


def test_persistentvolume_capacity_is_held_to_the_storage_maximum() -> None:
    error = refusal("persistentvolume", {"capacity": {"storage": "20Gi"}}, policy=Policy(max_storage="10Gi"))
    assert isinstance(error, PolicyRefusal) and error.refusal_class == REFUSAL_STORAGE_MAXIMUM
    assert error.message == 'component "c": capacity.storage: storage 20Gi exceeds enforced maximum 10Gi'
