"""A test-only component handler that renders a counter: every render gives other bytes.

It is registered for a test only (``monkeypatch.setitem`` on the core's registry table); the
production registry never names it. The count lives in a file, so the worker's render child
(a forked process) and the auditing process share one sequence.
"""

from __future__ import annotations

from pathlib import Path

from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.registry import ComponentType

TYPE = "audit-counter"
COUNTER_FILE: Path | None = None  # set by the test before the first render


def _next_render() -> int:
    assert COUNTER_FILE is not None, "the test sets counter_plugin.COUNTER_FILE"
    count = int(COUNTER_FILE.read_text()) if COUNTER_FILE.exists() else 0
    COUNTER_FILE.write_text(str(count + 1))
    return count


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": component.name, "namespace": ctx.namespace},
        "data": {"render": str(_next_render())},
    }
    return Generated(objects=[configmap])


HANDLER = ComponentType(name=TYPE, build=build, emits=("v1 ConfigMap",))
