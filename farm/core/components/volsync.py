"""VolSync kind components (seed 002, replicationsource and replicationdestination): the strict
decode of ReplicationSourceSpec / ReplicationDestinationSpec (tables in ``farm/core/kinds/volsync.py``)
and the policy that holds them (policyHeldKind):

- an authored capacity (a mover's ``capacity``, ``restic.cacheCapacity``, a source's
  ``syncthing.configCapacity``) is held to the storage maximum; an unauthored one is not filled;
- a mover's ``moverResources`` limits and requests are held to the cpu and memory maxima;
- ``moverSecurityContext.windowsOptions.hostProcess: true`` needs a policy that allows privileged
  workloads;
- an rsync mover, whatever it holds, adds the seven capabilities VolSync v0.16.0 writes on its
  container, so it is held to the policy's capability list;
- ``moverPodLabels`` are a pod's labels: the component label's key holds the component's name.

The operator's "exactly one replication method" rule is not repeated.
"""

from __future__ import annotations

from typing import Any

from farm.core.components.cnpg_common import check_storage_maximum
from farm.core.errors import FieldError
from farm.core.kinds import volsync as types
from farm.core.kinds.engine import KindContext, kind_component
from farm.core.model import COMPONENT_LABEL
from farm.core.policy import (
    REFUSAL_CONTAINER_CAPABILITY,
    REFUSAL_PRIVILEGED,
    REFUSAL_RESOURCE_MAXIMUM,
    Policy,
    refuse,
)
from farm.core.quantity import parse_quantity

# What VolSync v0.16.0 adds to the rsync mover's container (internal/controller/mover/rsync).
RSYNC_CAPABILITIES = ("AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID", "SYS_CHROOT")
RSYNC_OPERATOR_VERSION = "v0.16.0"


def _check_capacities(spec: dict[str, Any], policy: Policy) -> None:
    held = [(mover, "capacity") for mover in types.CAPACITY_MOVERS] + list(types.EXTRA_CAPACITIES)
    for mover, key in held:
        value = (spec.get(mover) or {}).get(key)
        if value is not None:
            check_storage_maximum(policy, value, f"{mover}.{key}")


def _check_resources(mover: str, config: dict[str, Any], policy: Policy) -> None:
    resources = config.get("moverResources") or {}
    for side, word in (("limits", "limit"), ("requests", "request")):
        for name, maximum in (("cpu", policy.max_cpu), ("memory", policy.max_memory)):
            value = (resources.get(side) or {}).get(name)
            if value is not None and maximum and parse_quantity(value) > parse_quantity(maximum):
                raise refuse(
                    f'{mover}.moverResources: {name} {word} "{value}" exceeds enforced maximum "{maximum}"',
                    REFUSAL_RESOURCE_MAXIMUM,
                )


def _check_host_process(mover: str, config: dict[str, Any], policy: Policy) -> None:
    windows = (config.get("moverSecurityContext") or {}).get("windowsOptions") or {}
    if windows.get("hostProcess") is True and not policy.allow_privileged:
        raise refuse(
            f"{mover}.moverSecurityContext.windowsOptions.hostProcess is not allowed by environment policy",
            REFUSAL_PRIVILEGED,
        )


def _check_rsync_capabilities(policy: Policy) -> None:
    """Authoring the rsync mover chooses its container; allowing privileged workloads does not lift
    a capability the policy's list leaves out. A policy with no list builds it."""
    if not policy.allowed_capabilities:
        return
    for capability in RSYNC_CAPABILITIES:
        if capability not in policy.allowed_capabilities:
            raise refuse(
                f"rsync: the mover's container as VolSync {RSYNC_OPERATOR_VERSION} writes it: "
                f'securityContext.capabilities.add: "{capability}" is forbidden by environment policy',
                REFUSAL_CONTAINER_CAPABILITY,
            )


def _check_pod_labels(mover: str, config: dict[str, Any], kc: KindContext) -> None:
    value = (config.get("moverPodLabels") or {}).get(COMPONENT_LABEL)
    if value is not None and value != kc.component.name:
        raise FieldError(
            f'{kc.obj["kind"]} "{kc.obj["metadata"]["name"]}": spec.{mover}.moverPodLabels["{COMPONENT_LABEL}"]: '
            f'"{value}" is not the component label of component "{kc.component.name}"'
        )


def _check(kc: KindContext) -> None:
    spec = kc.decoded
    policy = kc.build.policy
    _check_capacities(spec, policy)
    for mover in types.MOVERS:
        config = spec.get(mover)
        if config is None:
            continue
        _check_resources(mover, config, policy)
        _check_host_process(mover, config, policy)
        _check_pod_labels(mover, config, kc)
    if "rsync" in spec:
        _check_rsync_capabilities(policy)


REPLICATION_SOURCE = kind_component(
    "replicationsource",
    types.VOLSYNC_API,
    "ReplicationSource",
    "volsyncv1alpha1.ReplicationSourceSpec",
    spec=types.REPLICATION_SOURCE_SPEC,
    api=types.VOLSYNC,
    check=_check,
)

REPLICATION_DESTINATION = kind_component(
    "replicationdestination",
    types.VOLSYNC_API,
    "ReplicationDestination",
    "volsyncv1alpha1.ReplicationDestinationSpec",
    spec=types.REPLICATION_DESTINATION_SPEC,
    api=types.VOLSYNC,
    check=_check,
)
