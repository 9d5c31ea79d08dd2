"""What flows through the transform: component and trait specs, the build context, and what a
component handler generates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from farm.core.charts import ChartRender
from farm.core.documents import ClusterProfile
from farm.core.policy import DEFAULT_POLICY, Policy

COMPONENT_LABEL = "launcher.gokure.dev/component"
TIER_ANNOTATION = "launcher.gokure.dev/tier"
DELIVERY_ANNOTATIONS = "delivery_annotations"  # Generated.facts key, see Generated
DOMAIN = "launcher.gokure.dev"


@dataclass
class TraitSpec:
    type: str
    properties: dict[str, Any]
    sealed: bool = False


@dataclass
class ComponentSpec:
    name: str
    type: str
    properties: dict[str, Any]
    traits: list[TraitSpec] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BuildContext:
    """Everything a handler may read besides its own properties."""

    app_name: str
    namespace: str
    profile: ClusterProfile
    policy: Policy = DEFAULT_POLICY
    capabilities: dict[str, dict[str, Any]] = field(default_factory=dict)  # evaluated renderings
    # every component of the document, as authored (a rule that shares a document-owned source
    # among components, or must not name one like a component, reads the others here)
    components: tuple[ComponentSpec, ...] = ()
    # chart renders the caller fulfilled, by ChartRequest.key (see farm.core.charts)
    charts: Mapping[str, ChartRender] = field(default_factory=dict)


@dataclass(frozen=True)
class NameClaim:
    """A name a component resolves for one object it generates, under a name role (seed 002,
    "Name roles"): ``set_by`` is the property that gave the name, None for the role's default.
    Two claims of one kind, namespace and name are a name collision. ``context`` opens the
    refusal when this claim is the one refused (the rule that was naming it, e.g. ``helm: naming the
    values ConfigMap: ``)."""

    obj: dict[str, Any] = field(hash=False, compare=False)
    role: str = "object"
    set_by: str | None = None
    context: str = ""


@dataclass
class Generated:
    """The objects a component produced, plus the facts traits need about them.

    ``objects`` carry the component label (the transform adds it). ``document_objects`` belong to
    the document rather than the component (a source several components could share): they get no
    component label, carry no trait, and are written before the component's objects.

    ``facts`` keys the traits read (all optional):
    - ``service_ports``: the component Service's ports as ``[{name, port, targetPort, protocol}]``;
      the inbound NetworkPolicy synthesis opens the targetPort of each routed TCP port.
    - ``service_selector``: the selector of the component's Service when it selects pods other than
      the component's own (a service component); absent means the component label's pods.
    - ``non_rwx_claim``: the volume name of the first claim a Deployment-backed component mounts
      that is not ReadWriteMany-shareable; the scaler trait then refuses maxReplicas above 1.
    - ``service_account_name``: the ServiceAccount the component's pods run as, when the workload
      has no pod spec holding it; the rbac trait binds it.
    - ``delivery_annotations``: set by prune-protection / force-replace; the transform writes them on
      every object the component and its traits generate, after all traits ran.
    """

    objects: list[dict[str, Any]] = field(default_factory=list)
    document_objects: list[dict[str, Any]] = field(default_factory=list)
    workload: dict[str, Any] | None = None
    service_name: str | None = None
    service_port: int | None = None
    service_port_name: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    # The names the component claims. None: a component that generates one object claims it under
    # role "object" (set by properties.objectName when that names it); several objects, none.
    claims: list[NameClaim] | None = None

    def pod_spec(self) -> dict[str, Any] | None:
        """The pod spec of the main workload (Deployment, StatefulSet, Job, CronJob, …)."""
        return pod_spec_of(self.workload) if self.workload else None


def pod_template_of(obj: dict[str, Any]) -> dict[str, Any] | None:
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind == "CronJob":
        return ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template")
    if kind == "PodTemplate":
        return obj.get("template")
    if kind == "Pod":
        return obj
    return spec.get("template")


def pod_spec_of(obj: dict[str, Any]) -> dict[str, Any] | None:
    template = pod_template_of(obj)
    if not isinstance(template, dict):  # a spec field named template that is no pod template
        return None
    return template.get("spec")
