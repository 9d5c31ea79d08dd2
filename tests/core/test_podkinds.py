"""The pod family of kind components: pod, replicaset, replicationcontroller, podtemplate."""

from __future__ import annotations

from typing import Any

import pytest

from farm.core.components import podkinds
from farm.core.documents import load_cluster_profile
from farm.core.errors import FieldError, PolicyRefusal
from farm.core.model import COMPONENT_LABEL, BuildContext, ComponentSpec
from farm.core.policy import REFUSAL_REPLICA_MAXIMUM, Policy

PROFILE = load_cluster_profile(
    "apiVersion: launcher.gokure.dev/v1alpha1\nkind: ClusterProfile\nmetadata:\n  name: c\n"
    "spec:\n  capabilities: {}\n"
)
CONTAINERS = [{"name": "app", "image": "ghcr.io/example/app:v1.0.0"}]


def _ctx(policy: Policy | None = None) -> BuildContext:
    return BuildContext(app_name="a", namespace="ns", profile=PROFILE, policy=policy or Policy())


def _build(kind: str, props: dict[str, Any], name: str = "web", policy: Policy | None = None):
    handler = {
        "pod": podkinds.build_pod,
        "replicaset": podkinds.build_replicaset,
        "replicationcontroller": podkinds.build_replicationcontroller,
        "podtemplate": podkinds.build_podtemplate,
    }[kind]
    return handler(ComponentSpec(name=name, type=kind, properties=props), _ctx(policy))


def _replicaset(**spec: Any) -> dict[str, Any]:
    return {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"spec": {"containers": CONTAINERS}},
        **spec,
    }


def test_pod_gets_app_label_and_keeps_pointer_zero() -> None:
    generated = _build("pod", {"containers": CONTAINERS, "terminationGracePeriodSeconds": 0})
    pod = generated.objects[0]
    assert pod["metadata"]["labels"] == {"app": "web"}
    assert pod["spec"]["terminationGracePeriodSeconds"] == 0
    assert pod["spec"]["containers"][0]["resources"] == {}
    assert generated.workload is pod


def test_keys_match_case_insensitively_and_two_spellings_are_refused() -> None:
    pod = _build("pod", {"Containers": CONTAINERS}).objects[0]
    assert pod["spec"]["containers"][0]["name"] == "app"
    with pytest.raises(FieldError, match="sets the same field as"):
        _build("pod", {"containers": CONTAINERS, "Containers": CONTAINERS})


@pytest.mark.parametrize("field", ["priority", "overhead", "ephemeralContainers"])
def test_admission_owned_fields_are_refused(field: str) -> None:
    with pytest.raises(FieldError, match=f"^{field}: not authorable"):
        _build("pod", {"containers": CONTAINERS, field: 1})


def test_image_volume_reference_is_held_to_the_tag_rule() -> None:
    volume = {"name": "ext", "image": {"reference": "registry.example/team/ext"}}
    with pytest.raises(FieldError) as caught:
        _build("pod", {"containers": CONTAINERS, "volumes": [volume]})
    assert caught.value.message == (
        'volumes[0] "ext" image.reference: image "registry.example/team/ext" rejected: no tag or digest '
        "specified; use an explicit version tag or digest"
    )


def test_replicaset_adds_app_and_component_label_to_the_template_only() -> None:
    obj = _build("replicaset", _replicaset()).objects[0]
    assert "labels" not in obj["metadata"]
    assert obj["spec"]["template"]["metadata"]["labels"] == {"app": "web", COMPONENT_LABEL: "web"}


@pytest.mark.parametrize(
    "expression",
    [
        {"key": "app", "operator": "DoesNotExist"},
        {"key": "app", "operator": "NotIn", "values": ["web"]},
    ],
)
def test_replicaset_selector_ruling_out_the_app_label_is_refused(expression: dict[str, Any]) -> None:
    props = _replicaset(selector={"matchExpressions": [expression]})
    with pytest.raises(FieldError, match="^selector: rules out the label `app: web`"):
        _build("replicaset", props)


def test_replicaset_unreadable_selector_is_refused() -> None:
    props = _replicaset(
        selector={"matchExpressions": [{"key": "tier", "operator": "Exists", "values": ["x"]}]}
    )
    with pytest.raises(FieldError, match="^selector"):
        _build("replicaset", props)


def test_replica_maximum_counts_unset_as_one() -> None:
    policy = Policy(max_replicas=1)
    _build("replicaset", _replicaset(), policy=policy)
    with pytest.raises(PolicyRefusal) as caught:
        _build("replicaset", _replicaset(replicas=4), policy=Policy(max_replicas=3))
    assert caught.value.refusal_class == REFUSAL_REPLICA_MAXIMUM
    assert caught.value.message == "replicas 4 exceeds enforced maximum 3"


def test_replicationcontroller_unset_selector_stays_unset() -> None:
    obj = _build("replicationcontroller", {"template": {"spec": {"containers": CONTAINERS}}}).objects[0]
    assert "selector" not in obj["spec"]


def test_podtemplate_adds_no_app_label_allows_deadline_and_is_no_workload() -> None:
    props = {"template": {"spec": {"containers": CONTAINERS, "activeDeadlineSeconds": 30}}}
    generated = _build("podtemplate", props)
    template = generated.objects[0]["template"]
    assert template["metadata"]["labels"] == {COMPONENT_LABEL: "web"}
    assert template["spec"]["activeDeadlineSeconds"] == 30
    assert generated.workload is None


def test_podtemplate_refuses_its_own_metadata() -> None:
    with pytest.raises(
        FieldError, match='^properties do not decode into a v1 PodTemplate: unknown field "kind"'
    ):
        _build("podtemplate", {"kind": "PodTemplate", "template": {"spec": {"containers": CONTAINERS}}})


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"containers": 7}, "containers: must be a list, got int"),
        (
            {"containers": [{**CONTAINERS[0], "ports": 5.5}]},
            "containers[0].ports: must be a list, got float64",
        ),
        ({"initContainers": "app", "containers": CONTAINERS}, "initContainers: must be a list, got string"),
    ],
)
def test_a_host_network_pod_whose_containers_or_ports_are_no_list_is_refused_naming_the_field(
    spec: dict[str, Any], expected: str
) -> None:
    with pytest.raises(FieldError) as caught:
        _build("pod", {"hostNetwork": True, **spec})
    assert caught.value.message == expected
