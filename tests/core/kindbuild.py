"""Build one kind component through the whole transform, for the kind family tests."""

from __future__ import annotations

from typing import Any

import pytest

from farm.core.errors import CoreError
from farm.core.policy import DEFAULT_POLICY, Policy
from farm.core.render import RenderRequest, render
from farm.core.yamlio import dump_documents

CLUSTER = b"""apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: test-cluster
spec:
  capabilities: {}
"""


def _app(components: list[dict[str, Any]], namespace: str) -> bytes:
    document = {
        "apiVersion": "launcher.gokure.dev/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "app", "namespace": namespace},
        "spec": {"components": components},
    }
    return dump_documents([document]).encode()


def build_all(
    components: list[dict[str, Any]], *, policy: Policy = DEFAULT_POLICY, namespace: str = "default"
) -> list[dict[str, Any]]:
    return list(render(RenderRequest(_app(components, namespace), CLUSTER), policy=policy).objects)


def build(
    type_: str, properties: dict[str, Any] | None = None, *, name: str = "c", **options: Any
) -> dict[str, Any]:
    """The one object a kind component emits."""
    component: dict[str, Any] = {"name": name, "type": type_}
    if properties is not None:
        component["properties"] = properties
    (obj,) = build_all([component], **options)
    return obj


def refusal(type_: str, properties: dict[str, Any], *, name: str = "c", **options: Any) -> CoreError:
    with pytest.raises(CoreError) as caught:
        build(type_, properties, name=name, **options)
    return caught.value


def message(type_: str, properties: dict[str, Any], *, name: str = "c", **options: Any) -> str:
    return refusal(type_, properties, name=name, **options).message
