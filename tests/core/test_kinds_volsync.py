"""VolSync kind components (seed 002, replicationsource and replicationdestination): the seed's
refusals with exact messages, the policy that holds the movers, and inputs no shared case shows."""

from __future__ import annotations

import pytest

from farm.core.errors import CoreError, PolicyRefusal
from farm.core.policy import (
    REFUSAL_CONTAINER_CAPABILITY,
    REFUSAL_PRIVILEGED,
    REFUSAL_RESOURCE_MAXIMUM,
    REFUSAL_STORAGE_MAXIMUM,
    Policy,
)

from .kindbuild import build, build_all, message, refusal

RSYNC_SIX = ("AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID")
RSYNC_SEVEN = (*RSYNC_SIX, "SYS_CHROOT")


def _required(path: str) -> str:
    return f'component "c": {path}: required (the VolSync API requires this field)'


# --- decode ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["syncthing", "sourcePVC"])
def test_destination_has_no_syncthing_and_no_source_claim(key: str) -> None:
    assert message("replicationdestination", {key: {} if key == "syncthing" else "data"}) == (
        f'component "c": unknown field "{key}"'
    )


@pytest.mark.parametrize("key", ["moverSecurityContext", "moverAffinity", "moverVolumes"])
def test_rsync_mover_has_the_shorter_type(key: str) -> None:
    for type_ in ("replicationsource", "replicationdestination"):
        assert message(type_, {"rsync": {key: {}}}) == f'component "c": unknown field "rsync.{key}"'


def test_rsync_takes_resources_account_and_pod_labels() -> None:
    props = {
        "rsync": {
            "moverResources": {"requests": {"memory": "64Mi"}},
            "moverServiceAccount": "mover",
            "moverPodLabels": {"launcher.gokure.dev/component": "c", "tier": "backup"},
            "address": "backup.example",
            "port": 22,
        }
    }
    assert build("replicationsource", props)["spec"] == props


def test_secret_fields_absent_from_the_crd_are_refused_even_when_zero() -> None:
    volume = {"mountPath": "creds", "volumeSource": {"secret": {"secretName": "s", "defaultUser": 0}}}
    assert message("replicationsource", {"rclone": {"moverVolumes": [volume]}}) == (
        'component "c": rclone.moverVolumes[0].volumeSource.secret.defaultUser: no field of the '
        "volsync.backube/v1alpha1 API: its CRD has no such property"
    )
    items = [{"key": "k", "path": "p"}, {"key": "k2", "path": "p2", "user": 1000}]
    volume = {"mountPath": "creds", "volumeSource": {"secret": {"secretName": "s", "items": items}}}
    assert message("replicationdestination", {"restic": {"moverVolumes": [volume]}}) == (
        'component "c": restic.moverVolumes[0].volumeSource.secret.items[1].user: no field of the '
        "volsync.backube/v1alpha1 API: its CRD has no such property"
    )


def test_required_fields_follow_what_was_authored() -> None:
    assert build("replicationsource", {})["spec"] == {}
    assert message("replicationsource", {"restic": {"moverVolumes": [{"mountPath": "ca"}]}}) == _required(
        "restic.moverVolumes[0].volumeSource"
    )
    assert message("replicationdestination", {"rsyncTLS": {"moverVolumes": [{"volumeSource": {}}]}}) == (
        _required("rsyncTLS.moverVolumes[0].mountPath")
    )
    assert message(
        "replicationsource", {"syncthing": {"peers": [{"address": "tcp://p:22000", "ID": "X"}]}}
    ) == (_required("syncthing.peers[0].introducer"))
    assert message("replicationsource", {"syncthing": {"peers": [{"ID": "X", "introducer": True}]}}) == (
        _required("syncthing.peers[0].address")
    )
    node = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}
    assert message("replicationsource", {"rclone": {"moverAffinity": node}}) == _required(
        "rclone.moverAffinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    )
    term = {
        "topologyKey": "kubernetes.io/hostname",
        "labelSelector": {"matchExpressions": [{"operator": "Exists"}]},
    }
    pod = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    assert message("replicationdestination", {"rclone": {"moverAffinity": pod}}) == _required(
        "rclone.moverAffinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".labelSelector.matchExpressions[0].key"
    )


def test_a_node_selector_requirement_key_is_emitted_empty() -> None:
    terms = [{"matchExpressions": [{"operator": "Exists"}]}]
    node = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    spec = build("replicationsource", {"restic": {"moverAffinity": node}})["spec"]
    required = spec["restic"]["moverAffinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert required == {"nodeSelectorTerms": [{"matchExpressions": [{"key": "", "operator": "Exists"}]}]}


def test_empty_movers_and_distinguishable_zeros_are_kept() -> None:
    spec = build(
        "replicationsource",
        {
            "rclone": {},
            "rsyncTLS": {"moverSecurityContext": {"runAsUser": 0}},
            "restic": {"retain": {"monthly": 0}},
            "paused": False,
            "trigger": {"manual": "first"},
        },
    )["spec"]
    assert spec == {
        "rclone": {"customCA": {}},
        "rsyncTLS": {"moverSecurityContext": {"runAsUser": 0}},
        "restic": {"retain": {"monthly": 0}, "customCA": {}},
        "trigger": {"manual": "first"},
    }


def test_destination_objects_with_object_name_and_labels() -> None:
    obj = build(
        "replicationdestination",
        {
            "objectName": "data-restore",
            "labels": {"purpose": "restore"},
            "restic": {
                "repository": "restic-repo",
                "previous": 0,
                "copyMethod": "Snapshot",
                "capacity": "5Gi",
            },
            "rsync": {"serviceAnnotations": {}, "serviceType": "LoadBalancer"},
            "external": {"provider": "example.com/mover", "parameters": {"password": "not-checked"}},
            "paused": True,
        },
        name="data",
        namespace="apps",
        policy=Policy(explicit_secrets_allowed=False, max_storage="5Gi"),
    )
    assert obj["apiVersion"] == "volsync.backube/v1alpha1"
    assert obj["kind"] == "ReplicationDestination"
    assert obj["metadata"] == {
        "name": "data-restore",
        "namespace": "apps",
        "labels": {"purpose": "restore", "launcher.gokure.dev/component": "data"},
    }
    assert obj["spec"] == {
        "restic": {
            "repository": "restic-repo",
            "previous": 0,
            "copyMethod": "Snapshot",
            "capacity": "5Gi",
            "customCA": {},
        },
        "rsync": {"serviceAnnotations": {}, "serviceType": "LoadBalancer"},
        "external": {"provider": "example.com/mover", "parameters": {"password": "not-checked"}},
        "paused": True,
    }


# --- policy ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("props", "path", "value"),
    [
        ({"restic": {"capacity": "20Gi"}}, "restic.capacity", "20Gi"),
        ({"rsync": {"capacity": "11Gi"}}, "rsync.capacity", "11Gi"),
        ({"restic": {"cacheCapacity": "12Gi"}}, "restic.cacheCapacity", "12Gi"),
        ({"syncthing": {"configCapacity": "1Ti"}}, "syncthing.configCapacity", "1Ti"),
    ],
)
def test_authored_capacities_are_held_to_the_storage_maximum(props: dict, path: str, value: str) -> None:
    caught = refusal("replicationsource", props, name="web", policy=Policy(max_storage="10Gi"))
    assert isinstance(caught, PolicyRefusal)
    assert caught.refusal_class == REFUSAL_STORAGE_MAXIMUM
    assert caught.message == f'component "web": {path} "{value}" exceeds enforced maximum "10Gi"'


def test_an_unauthored_capacity_is_neither_held_nor_filled() -> None:
    policy = Policy(max_storage="10Gi", default_storage="1Gi")
    assert build("replicationsource", {"restic": {}}, policy=policy)["spec"] == {"restic": {"customCA": {}}}
    kept = build("replicationdestination", {"rclone": {"capacity": "10Gi"}}, policy=policy)
    assert kept["spec"]["rclone"]["capacity"] == "10Gi"


def test_mover_resources_are_held_to_the_maxima() -> None:
    caught = refusal(
        "replicationsource",
        {"rsync": {"moverResources": {"limits": {"cpu": "4"}}}},
        name="web",
        policy=Policy(max_cpu="2"),
    )
    assert caught.refusal_class == REFUSAL_RESOURCE_MAXIMUM
    assert (
        caught.message == 'component "web": rsync.moverResources: cpu limit "4" exceeds enforced maximum "2"'
    )
    props = {"syncthing": {"moverResources": {"requests": {"memory": "2Gi"}}}}
    assert message("replicationsource", props, policy=Policy(max_memory="1Gi")) == (
        'component "c": syncthing.moverResources: memory request "2Gi" exceeds enforced maximum "1Gi"'
    )
    # a request above its limit is not refused here; no default is filled
    props = {"restic": {"moverResources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}}
    spec = build("replicationdestination", props, policy=Policy(max_cpu="2", default_memory_limit="1Gi"))[
        "spec"
    ]
    assert spec["restic"]["moverResources"] == {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}


def test_host_process_needs_privileged_workloads() -> None:
    props = {"restic": {"moverSecurityContext": {"windowsOptions": {"hostProcess": True}}}}
    caught = refusal("replicationsource", props, name="web")
    assert caught.refusal_class == REFUSAL_PRIVILEGED
    assert caught.message == (
        'component "web": restic.moverSecurityContext.windowsOptions.hostProcess is not allowed by environment policy'
    )
    assert build("replicationsource", props, policy=Policy(allow_privileged=True))["spec"] == props | {
        "restic": {**props["restic"], "customCA": {}}
    }
    off = {"rclone": {"moverSecurityContext": {"windowsOptions": {"hostProcess": False}}}}
    assert build("replicationdestination", off)["spec"]["rclone"]["moverSecurityContext"] == {
        "windowsOptions": {"hostProcess": False}
    }


def test_an_rsync_mover_is_held_to_the_capability_list() -> None:
    policy = Policy(allowed_capabilities=RSYNC_SIX, allow_privileged=True)
    for type_ in ("replicationsource", "replicationdestination"):
        caught = refusal(type_, {"rsync": {}}, name="web", policy=policy)
        assert caught.refusal_class == REFUSAL_CONTAINER_CAPABILITY
        assert caught.message == (
            'component "web": rsync: the mover\'s container as VolSync v0.16.0 writes it: '
            'securityContext.capabilities.add: "SYS_CHROOT" is forbidden by environment policy'
        )
    assert build("replicationsource", {"rsync": {}}, policy=Policy(allowed_capabilities=RSYNC_SEVEN))[
        "spec"
    ] == {"rsync": {}}
    assert build("replicationsource", {"rsync": {}})["spec"] == {"rsync": {}}
    # the other movers add no capability
    assert build("replicationsource", {"rsyncTLS": {}}, policy=policy)["spec"] == {"rsyncTLS": {}}


def test_mover_pod_labels_hold_the_component_label() -> None:
    props = {"rclone": {"moverPodLabels": {"launcher.gokure.dev/component": "db"}}}
    assert message("replicationsource", {**props, "objectName": "web-offsite"}, name="web") == (
        'component "web": ReplicationSource "web-offsite": spec.rclone.moverPodLabels["launcher.gokure.dev/component"]: '
        '"db" is not the component label of component "web"'
    )


def test_collision_with_the_volsync_trait() -> None:
    with pytest.raises(CoreError) as caught:
        build_all(
            [
                {
                    "name": "web",
                    "type": "deployment",
                    "properties": {"image": "nginx:1.25"},
                    "traits": [{"type": "volsync", "properties": {"sourcePVC": "data"}}],
                },
                {"name": "data-backup", "type": "replicationsource", "properties": {"sourcePVC": "data"}},
            ]
        )
    assert caught.value.message.startswith(
        'generated-object collision: ReplicationSource.volsync.backube "default/data-backup" is generated by both '
    )
