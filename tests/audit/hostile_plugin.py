"""A test-only component handler that renders a small ConfigMap until the test turns it hostile.

It is registered for a test only (``monkeypatch.setitem`` on the core's registry table); the
production registry never names it. ``MODE`` is read in the render child, which forks from the
auditing process on its first render: set after the run's renders and before the audit, it makes
the audit's re-render loop forever (``"loop"``) or allocate without end (``"grow"``).
"""

from __future__ import annotations

from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.registry import ComponentType

TYPE = "audit-hostile"
MODE = ""  # "", "loop" or "grow"
_GROW_CAP = 1 << 30  # stop at 1 GiB should the memory bound not hold, so the test fails, not the host


def build(component: ComponentSpec, ctx: BuildContext) -> Generated:
    if MODE == "loop":
        while True:
            pass
    if MODE == "grow":
        hoard = [bytearray(16 * 1024 * 1024)]
        while len(hoard) * 16 * 1024 * 1024 < _GROW_CAP:
            hoard.append(bytearray(16 * 1024 * 1024))
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": component.name, "namespace": ctx.namespace},
        "data": {"render": "same"},
    }
    return Generated(objects=[configmap])


HANDLER = ComponentType(name=TYPE, build=build, emits=("v1 ConfigMap",))
