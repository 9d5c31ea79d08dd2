"""A test-only component handler that renders a counter: every render gives other bytes.

It is registered for a test only (``monkeypatch.setitem`` on the core's registry table); the
production registry never names it.
"""

from __future__ import annotations

import itertools

from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.registry import ComponentType

TYPE = "audit-counter"
_renders = itertools.count()


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": component.name, "namespace": ctx.namespace},
        "data": {"render": str(next(_renders))},
    }
    return Generated(objects=[configmap])


HANDLER = ComponentType(name=TYPE, build=build, emits=("v1 ConfigMap",))
