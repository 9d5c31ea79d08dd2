"""Field-table audit of the core/v1 pod types against k8s.io/api v0.36/v0.37: the fields that were
missing (or carried loosely) decode strictly and are written as the Go types write them."""

from __future__ import annotations

from typing import Any

from .kindbuild import build, message


def _pod(**spec: Any) -> dict[str, Any]:
    return {"containers": [{"name": "app", "image": "registry.example/app:1.0"}], **spec}


def test_pod_spec_scheduling_group_and_eviction_responders() -> None:
    spec = build(
        "pod",
        _pod(
            schedulingGroup={"podGroupName": "training"},
            evictionResponders=[{"name": "acme.io/drainer", "priority": 0}],
        ),
    )["spec"]
    assert spec["schedulingGroup"] == {"podGroupName": "training"}
    assert spec["evictionResponders"] == [{"name": "acme.io/drainer", "priority": 0}]


def test_container_fields_of_the_newer_api() -> None:
    container = {
        "name": "app",
        "image": "registry.example/app:1.0",
        "volumeMounts": [{"name": "data", "mountPath": "/data", "bindMountOptions": ["noexec"]}],
        "livenessProbe": {"httpGet": {"port": 8080, "protocol": "HTTP/2"}},
        "readinessProbe": {"grpc": {"port": 9090, "mode": "TLS"}},
    }
    spec = build(
        "pod", {"containers": [container], "volumes": [{"name": "data", "emptyDir": {"mode": 0o750}}]}
    )["spec"]
    (written,) = spec["containers"]
    assert written["volumeMounts"][0]["bindMountOptions"] == ["noexec"]
    assert written["livenessProbe"]["httpGet"] == {"port": 8080, "protocol": "HTTP/2"}
    assert written["readinessProbe"]["grpc"] == {"port": 9090, "service": None, "mode": "TLS"}
    assert spec["volumes"][0]["emptyDir"] == {"mode": 0o750}


def test_volume_owner_fields() -> None:
    volumes = [
        {
            "name": "s",
            "secret": {
                "secretName": "s",
                "defaultUser": 1000,
                "items": [{"key": "k", "path": "p", "user": 0}],
            },
        },
        {
            "name": "d",
            "downwardAPI": {
                "defaultUser": 1000,
                "items": [{"path": "n", "user": 7, "fieldRef": {"fieldPath": "metadata.name"}}],
            },
        },
        {
            "name": "p",
            "projected": {"defaultUser": 5, "sources": [{"serviceAccountToken": {"path": "t", "user": 5}}]},
        },
    ]
    written = build("pod", _pod(volumes=volumes))["spec"]["volumes"]
    assert written[0]["secret"]["defaultUser"] == 1000
    assert written[0]["secret"]["items"] == [{"key": "k", "path": "p", "user": 0}]
    assert written[1]["downwardAPI"]["items"][0]["user"] == 7
    assert written[2]["projected"]["sources"][0]["serviceAccountToken"] == {"path": "t", "user": 5}


def test_in_tree_volume_sources_decode_into_their_types() -> None:
    volumes = [
        {"name": "gce", "gcePersistentDisk": {"pdName": "disk", "readOnly": False, "Partition": 1}},
        {"name": "ceph", "cephfs": {"monitors": ["10.0.0.1:6789"], "secretRef": {"name": "ceph"}}},
        {"name": "azure", "azureDisk": {"diskName": "d", "diskURI": "uri", "readOnly": False}},
        {"name": "nfs-like", "glusterfs": {"endpoints": "gluster", "path": "vol"}},
    ]
    written = build("pod", _pod(volumes=volumes))["spec"]["volumes"]
    # readOnly: false is omitempty on the value, kept on the pointer (azureDisk)
    assert written[0]["gcePersistentDisk"] == {"pdName": "disk", "partition": 1}
    assert written[1]["cephfs"] == {"monitors": ["10.0.0.1:6789"], "secretRef": {"name": "ceph"}}
    assert written[2]["azureDisk"] == {"diskName": "d", "diskURI": "uri", "readOnly": False}
    assert written[3]["glusterfs"] == {"endpoints": "gluster", "path": "vol"}


def test_in_tree_volume_source_refuses_an_unknown_field() -> None:
    volumes = [{"name": "gce", "gcePersistentDisk": {"pdName": "disk", "zone": "a"}}]
    assert message("pod", _pod(volumes=volumes)) == (
        'component "c": unknown field "volumes[0].gcePersistentDisk.zone"'
    )


def test_pod_certificate_projection() -> None:
    source = {
        "podCertificate": {
            "signerName": "example.com/signer",
            "keyType": "ED25519",
            "maxExpirationSeconds": 3600,
        }
    }
    written = build("pod", _pod(volumes=[{"name": "cert", "projected": {"sources": [source]}}]))["spec"]
    assert written["volumes"][0]["projected"]["sources"] == [source]
    bad = {"podCertificate": {"signerName": "example.com/signer", "keyPath": 1}}
    assert message("pod", _pod(volumes=[{"name": "cert", "projected": {"sources": [bad]}}])) == (
        'component "c": volumes[0].projected.sources[0].podCertificate.keyPath: must be a string, got int'
    )


def test_ephemeral_claim_data_source_writes_a_null_api_group() -> None:
    template = {
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "dataSource": {"kind": "PersistentVolumeClaim", "name": "source"},
            "dataSourceRef": {
                "apiGroup": "snapshot.storage.k8s.io",
                "kind": "VolumeSnapshot",
                "name": "snap",
            },
        }
    }
    volume = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": template}}
    claim = build("pod", _pod(volumes=[volume]))["spec"]["volumes"][0]["ephemeral"]["volumeClaimTemplate"][
        "spec"
    ]
    assert claim["dataSource"] == {"apiGroup": None, "kind": "PersistentVolumeClaim", "name": "source"}
    assert claim["dataSourceRef"] == {
        "apiGroup": "snapshot.storage.k8s.io",
        "kind": "VolumeSnapshot",
        "name": "snap",
    }


def test_template_metadata_takes_the_whole_object_meta() -> None:
    template = {
        "metadata": {"creationTimestamp": None, "labels": {"tier": "web"}},
        "spec": _pod(),
    }
    written = build("podtemplate", {"template": template})["template"]
    assert "creationTimestamp" not in written["metadata"]
    stamped = {
        "metadata": {
            "creationTimestamp": "2030-01-02T03:04:05.678+02:00",
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u-1"}],
        },
        "spec": _pod(),
    }
    metadata = build("podtemplate", {"template": stamped})["template"]["metadata"]
    assert metadata["creationTimestamp"] == "2030-01-02T01:04:05Z"
    assert metadata["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "u-1"}
    ]


def test_template_metadata_time_must_be_rfc3339() -> None:
    template = {"metadata": {"creationTimestamp": "2030-01-02"}, "spec": _pod()}
    assert message("podtemplate", {"template": template}) == (
        'component "c": template.metadata.creationTimestamp: "2030-01-02" is not an RFC 3339 time'
    )
