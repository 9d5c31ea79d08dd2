"""What the environment policy reads of a raw object (seed 002, passthrough and manifests
"Policy"): the workload kinds are checked, a custom resource is not, the pods its controller
creates included."""

from __future__ import annotations

from typing import Any

import pytest

from farm.core.errors import PolicyRefusal
from farm.core.yamlio import dump_documents

from .kindbuild import build, build_all

PRIVILEGED_POD = {
    "containers": [{"name": "app", "image": "nginx:1.27.0", "securityContext": {"privileged": True}}]
}


def _widget(pod_spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"template": {"spec": pod_spec}}}


@pytest.mark.parametrize("pod_spec", [PRIVILEGED_POD, {"hostNetwork": True}, "not a pod spec"])
def test_a_passthrough_custom_resource_with_a_pod_template_is_not_held_to_the_pod_gates(
    pod_spec: Any,
) -> None:
    widget = build("passthrough", {"object": _widget(pod_spec)}, name="w")
    assert widget["spec"]["template"]["spec"] == pod_spec


def test_a_manifests_custom_resource_with_a_privileged_pod_template_builds() -> None:
    inline = dump_documents([{**_widget(PRIVILEGED_POD), "metadata": {"name": "w", "namespace": "apps"}}])
    (widget,) = build_all([{"name": "w", "type": "manifests", "properties": {"inline": inline}}])
    assert widget["kind"] == "Widget"


def test_a_passthrough_deployment_with_a_privileged_container_is_still_refused() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": {"spec": PRIVILEGED_POD}},
    }
    with pytest.raises(PolicyRefusal, match="privileged containers are not allowed"):
        build("passthrough", {"object": deployment}, name="w")


def test_a_manifest_source_integer_an_int64_cannot_hold_is_written_as_a_float() -> None:
    inline = (
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: apps}\n"
        "spec: {a: 9223372036854775808, b: 18446744073709551615, c: 9007199254740993, d: -9223372036854775808}\n"
    )
    (widget,) = build_all([{"name": "w", "type": "manifests", "properties": {"inline": inline}}])
    assert dump_documents([widget["spec"]]) == (
        "a: 9223372036854776000\nb: 1.8446744073709552e+19\nc: 9007199254740993\nd: -9223372036854775808\n"
    )
