"""Helpers for the kind-component tests: build one component through the whole render path."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from farm.core.errors import CoreError
from farm.core.render import RenderRequest, render

PROFILE = b"""apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: test-cluster
spec:
  capabilities: {}
"""


def _app(type_: str, properties: dict[str, Any], name: str) -> bytes:
    document = {
        "apiVersion": "launcher.gokure.dev/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "my-app", "namespace": "shop"},
        "spec": {"components": [{"name": name, "type": type_, "properties": properties}]},
    }
    return yaml.safe_dump(document).encode()


def build(type_: str, properties: dict[str, Any], name: str = "c") -> dict[str, Any]:
    """The one object a kind component renders to."""
    [obj] = render(RenderRequest(_app(type_, properties, name), PROFILE)).objects
    return obj


def build_yaml(type_: str, properties: dict[str, Any], name: str = "c") -> str:
    return render(RenderRequest(_app(type_, properties, name), PROFILE)).manifests.decode()


def refusal(type_: str, properties: dict[str, Any], name: str = "c") -> str:
    """The message a kind component is refused with."""
    with pytest.raises(CoreError) as caught:
        render(RenderRequest(_app(type_, properties, name), PROFILE))
    return caught.value.message
