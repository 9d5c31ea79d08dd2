"""Raw objects (passthrough, manifests) whose fields do not decode as their kind's Go types are
refused as unreadable, naming the field, never crash the render (seed 002, passthrough "What
cannot be read is refused, not passed")."""

from __future__ import annotations

from typing import Any

from farm.core.policy import REFUSAL_UNREADABLE_OBJECT, Policy
from farm.core.yamlio import dump_documents

from .kindbuild import build_all, refusal


def _deployment(pod_spec: Any, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec},
            **spec,
        },
    }


def _container(**fields: Any) -> dict[str, Any]:
    return {"name": "app", "image": "nginx:1.27.0", **fields}


def _unreadable(obj: dict[str, Any]) -> str:
    error = refusal("passthrough", {"object": obj}, name="web")
    assert getattr(error, "refusal_class", None) == REFUSAL_UNREADABLE_OBJECT
    return error.message


def test_a_passthrough_workload_whose_containers_is_no_list_is_refused_as_unreadable_naming_it() -> None:
    message = _unreadable(_deployment({"containers": 3.5}))
    assert message == (
        'component "web": passthrough: object Deployment "default/web": the object cannot be read, so the '
        "environment policy cannot be checked: spec.template.spec.containers: must be a list, got float64"
    )


def test_a_passthrough_workload_whose_pod_spec_is_a_string_is_refused_as_unreadable() -> None:
    assert _unreadable(_deployment("1e400")).endswith("spec.template.spec: must be an object, got string")


def test_a_passthrough_container_whose_security_context_is_no_object_is_refused_as_unreadable() -> None:
    message = _unreadable(_deployment({"containers": [_container(securityContext="-")]}))
    assert message.endswith("spec.template.spec.containers[0].securityContext: must be an object, got string")


def test_a_passthrough_container_entry_that_is_a_string_is_refused_as_unreadable() -> None:
    message = _unreadable(_deployment({"containers": ["app"]}))
    assert message.endswith("spec.template.spec.containers[0]: must be an object, got string")


def test_a_passthrough_workload_with_a_resource_that_is_no_quantity_is_refused_as_unreadable() -> None:
    container = _container(resources={"limits": {"memory": "128MI"}})
    message = _unreadable(_deployment({"containers": [container]}))
    assert "spec.template.spec.containers[0].resources.limits.memory: quantities must match" in message


def test_a_passthrough_workload_whose_host_network_is_no_boolean_is_refused_as_unreadable() -> None:
    message = _unreadable(_deployment({"hostNetwork": "yes", "containers": [_container()]}))
    assert message.endswith("spec.template.spec.hostNetwork: must be a boolean, got string")


def test_a_passthrough_cronjob_whose_job_template_is_no_object_is_refused_as_unreadable() -> None:
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"schedule": "@daily", "jobTemplate": []}}
    assert _unreadable(cronjob).endswith("spec.jobTemplate: must be an object, got []interface {}")


def test_a_passthrough_claim_whose_storage_request_is_no_quantity_is_refused_as_unreadable() -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "spec": {"resources": {"requests": {"storage": []}}},
    }
    message = _unreadable(claim)
    assert message.endswith("spec.resources.requests.storage: must be a quantity, got []interface {}")


def test_a_manifests_workload_whose_containers_is_no_list_is_refused_as_unreadable() -> None:
    inline = dump_documents(
        [{**_deployment({"containers": 7}), "metadata": {"name": "web", "namespace": "apps"}}]
    )
    error = refusal("manifests", {"inline": inline}, name="web")
    assert getattr(error, "refusal_class", None) == REFUSAL_UNREADABLE_OBJECT
    assert error.message.endswith("spec.template.spec.containers: must be a list, got int")


def test_a_passthrough_object_whose_labels_are_no_map_is_refused_naming_the_field() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"labels": "[]"}, "data": {"a": "b"}}
    message = refusal("passthrough", {"object": config_map}, name="web").message
    assert message == (
        'component "web": ConfigMap "default/web": metadata.labels: must be a map of strings, got string'
    )


def test_a_passthrough_quantity_past_the_farms_bounds_builds_without_a_maximum_and_is_refused_with_one() -> (
    None
):
    deployment = _deployment({"containers": [_container(resources={"limits": {"cpu": "1e200"}})]})
    (built,) = build_all([{"name": "web", "type": "passthrough", "properties": {"object": deployment}}])
    assert built["kind"] == "Deployment"
    error = refusal("passthrough", {"object": deployment}, name="web", policy=Policy(max_cpu="2"))
    assert getattr(error, "refusal_class", None) == REFUSAL_UNREADABLE_OBJECT
    assert "resources.limits.cpu: quantity exponents must be within" in error.message
