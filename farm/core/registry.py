"""The tables that map a component or trait type to its handler, and the seal check.

A row names the module attribute that holds the handler as ``"module:ATTRIBUTE"``; modules are
imported on first use, so a build loads only the handlers its document needs. Adding a type adds
its own module and one row here. Rows stay sorted by type within each family block.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from farm.core.model import BuildContext, ComponentSpec, Generated, TraitSpec

TIER_INFRA, TIER_SERVICES, TIER_APPS = "infra", "services", "apps"
TIERS = (TIER_INFRA, TIER_SERVICES, TIER_APPS)


@dataclass(frozen=True)
class ComponentType:
    """A component handler: ``build`` turns one component into objects."""

    name: str
    build: Callable[[ComponentSpec, BuildContext], Generated]
    emits: tuple[str, ...] = ()  # "apiVersion Kind" of every object it can emit, for docs
    decode: str = "hand-written parser"
    status: str = "component"  # "kind" for kind components (properties are the object's spec)
    # Seed 002: "Like every component, they are in no tier unless a tier annotation or placement
    # policy places them." No type has a built-in tier; untiered components sort with "apps".
    tier: str = TIER_APPS
    cluster_scoped: bool = False
    # Whether the one object it generates is claimed under role "object" when the handler states no
    # claims. Objects written elsewhere (passthrough, manifests, crd) are named by their author.
    claims_object: bool = True
    # A component-position lowering rule (webservice, worker, helm, oci, postgresql): its refusals
    # read ``component "w" (type "worker") in document "<application>": <cause>``.
    lowering_rule: bool = False


@dataclass
class TraitApplication:
    """One trait being applied: its merged properties and the component it acts on."""

    trait: TraitSpec
    properties: dict[str, Any]
    component: ComponentSpec
    generated: Generated
    ctx: BuildContext
    bundle_tail: list[dict[str, Any]] = field(default_factory=list)
    capability_key: str | None = None


@dataclass(frozen=True)
class TraitType:
    """A trait handler. ``apply`` may change the component's objects in place and returns the
    objects the trait adds. A lowering rule sets ``lower`` instead: it rewrites the trait into
    another (sealed) trait before any component is built."""

    name: str
    apply: Callable[[TraitApplication], list[dict[str, Any]]] | None = None
    lower: Callable[[TraitSpec, dict[str, Any], ComponentSpec, BuildContext], TraitSpec] | None = None
    capability: str = "none"  # "none" | "optional" | "required"
    validate_rendering: Callable[[dict[str, Any], str], dict[str, Any]] | None = None
    emits: tuple[str, ...] = ()
    component_types: frozenset[str] | None = None  # None: any component type


COMPONENT_TYPES: dict[str, str] = {
    # --- workloads (farm/core/components) ---
    "cronjob": "farm.core.components.cronjob:HANDLER",
    "daemonset": "farm.core.components.daemonset:HANDLER",
    "deployment": "farm.core.components.deployment:HANDLER",
    "job": "farm.core.components.job:HANDLER",
    "pod": "farm.core.components.podkinds:POD",
    "podtemplate": "farm.core.components.podkinds:PODTEMPLATE",
    "replicaset": "farm.core.components.podkinds:REPLICASET",
    "replicationcontroller": "farm.core.components.podkinds:REPLICATIONCONTROLLER",
    "statefulset": "farm.core.components.statefulset:HANDLER",
    "webservice": "farm.core.components.roles:WEBSERVICE",
    "worker": "farm.core.components.roles:WORKER",
    # --- core objects ---
    "configmap": "farm.core.components.configmap:HANDLER",
    "limitrange": "farm.core.components.corekinds:LIMIT_RANGE",
    "namespace": "farm.core.components.corekinds:NAMESPACE",
    "persistentvolumeclaim": "farm.core.components.persistentvolumeclaim:HANDLER",
    "resourcequota": "farm.core.components.corekinds:RESOURCE_QUOTA",
    "secret": "farm.core.components.secret:HANDLER",
    "service": "farm.core.components.service:HANDLER",
    "serviceaccount": "farm.core.components.serviceaccount:HANDLER",
    # --- networking and Gateway API kinds ---
    "backendtlspolicy": "farm.core.components.gateway:BACKEND_TLS_POLICY",
    "endpointslice": "farm.core.components.networking:ENDPOINT_SLICE",
    "gateway": "farm.core.components.gateway:GATEWAY_KIND",
    "gatewayclass": "farm.core.components.gateway:GATEWAY_CLASS",
    "grpcroute": "farm.core.components.gateway:GRPC_ROUTE",
    "httproute": "farm.core.components.gateway:HTTP_ROUTE",
    "ingress": "farm.core.components.networking:INGRESS",
    "ingressclass": "farm.core.components.networking:INGRESS_CLASS",
    "listenerset": "farm.core.components.gateway:LISTENER_SET",
    "networkpolicy": "farm.core.components.networking:NETWORK_POLICY",
    "referencegrant": "farm.core.components.gateway:REFERENCE_GRANT",
    "servicecidr": "farm.core.components.networking:SERVICE_CIDR",
    "tcproute": "farm.core.components.gateway:TCP_ROUTE",
    "tlsroute": "farm.core.components.gateway:TLS_ROUTE",
    "udproute": "farm.core.components.gateway:UDP_ROUTE",
    # --- cilium kinds ---
    "cilium-bgpadvertisement": "farm.core.components.cilium:BGP_ADVERTISEMENT",
    "cilium-bgpclusterconfig": "farm.core.components.cilium:BGP_CLUSTER_CONFIG",
    "cilium-bgpnodeconfigoverride": "farm.core.components.cilium:BGP_NODE_CONFIG_OVERRIDE",
    "cilium-bgppeerconfig": "farm.core.components.cilium:BGP_PEER_CONFIG",
    "cilium-cidrgroup": "farm.core.components.cilium:CIDR_GROUP",
    "cilium-clusterwidenetworkpolicy": "farm.core.components.cilium:CLUSTERWIDE_NETWORK_POLICY",
    "cilium-egressgatewaypolicy": "farm.core.components.cilium:EGRESS_GATEWAY_POLICY",
    "cilium-loadbalancerippool": "farm.core.components.cilium:LOAD_BALANCER_IP_POOL",
    "cilium-localredirectpolicy": "farm.core.components.cilium:LOCAL_REDIRECT_POLICY",
    "cilium-networkpolicy": "farm.core.components.cilium:NETWORK_POLICY",
    "cilium-nodeconfig": "farm.core.components.cilium:NODE_CONFIG",
    # --- metallb kinds ---
    "metallb-bfdprofile": "farm.core.components.metallb:BFD_PROFILE",
    "metallb-bgpadvertisement": "farm.core.components.metallb:BGP_ADVERTISEMENT",
    "metallb-bgppeer": "farm.core.components.metallb:BGP_PEER",
    "metallb-community": "farm.core.components.metallb:COMMUNITY",
    "metallb-ipaddresspool": "farm.core.components.metallb:IP_ADDRESS_POOL",
    "metallb-l2advertisement": "farm.core.components.metallb:L2_ADVERTISEMENT",
    # --- cert-manager and external-secrets kinds ---
    "certificate": "farm.core.components.certmanager:CERTIFICATE",
    "clusterexternalsecret": "farm.core.components.externalsecrets:CLUSTER_EXTERNAL_SECRET",
    "clusterissuer": "farm.core.components.certmanager:CLUSTER_ISSUER",
    "clustersecretstore": "farm.core.components.externalsecrets:CLUSTER_SECRET_STORE",
    "externalsecret": "farm.core.components.externalsecrets:EXTERNAL_SECRET",
    "issuer": "farm.core.components.certmanager:ISSUER",
    "secretstore": "farm.core.components.externalsecrets:SECRET_STORE",
    # --- rbac, storage, scheduling, admission kinds ---
    "apiservice": "farm.core.components.admission:API_SERVICE",
    "clusterrole": "farm.core.components.rbac:CLUSTER_ROLE",
    "clusterrolebinding": "farm.core.components.rbac:CLUSTER_ROLE_BINDING",
    "csidriver": "farm.core.components.storage:CSI_DRIVER",
    "horizontalpodautoscaler": "farm.core.components.scheduling:HORIZONTAL_POD_AUTOSCALER",
    "mutatingwebhookconfiguration": "farm.core.components.admission:MUTATING_WEBHOOK_CONFIGURATION",
    "persistentvolume": "farm.core.components.storage:PERSISTENT_VOLUME",
    "poddisruptionbudget": "farm.core.components.scheduling:POD_DISRUPTION_BUDGET",
    "priorityclass": "farm.core.components.scheduling:PRIORITY_CLASS",
    "role": "farm.core.components.rbac:ROLE",
    "rolebinding": "farm.core.components.rbac:ROLE_BINDING",
    "runtimeclass": "farm.core.components.scheduling:RUNTIME_CLASS",
    "storageclass": "farm.core.components.storage:STORAGE_CLASS",
    "validatingwebhookconfiguration": "farm.core.components.admission:VALIDATING_WEBHOOK_CONFIGURATION",
    "volumeattributesclass": "farm.core.components.storage:VOLUME_ATTRIBUTES_CLASS",
    # --- monitoring kinds ---
    "alertmanager": "farm.core.components.monitoring_workloads:ALERTMANAGER",
    "podmonitor": "farm.core.components.monitoring:POD_MONITOR",
    "prometheus": "farm.core.components.monitoring_workloads:PROMETHEUS",
    "prometheus-probe": "farm.core.components.monitoring:PROBE",
    "prometheusrule": "farm.core.components.monitoring:PROMETHEUS_RULE",
    "servicemonitor": "farm.core.components.monitoring:SERVICE_MONITOR",
    "thanosruler": "farm.core.components.monitoring_workloads:THANOS_RULER",
    # --- flux, helm and oci ---
    "artifactgenerator": "farm.core.components.fluxextras:ARTIFACT_GENERATOR",
    "bucket": "farm.core.components.fluxkinds:BUCKET",
    "fluxcd-alert": "farm.core.components.fluxextras:ALERT",
    "fluxcd-kustomization": "farm.core.components.fluxkinds:FLUX_KUSTOMIZATION",
    "fluxcd-provider": "farm.core.components.fluxextras:PROVIDER",
    "fluxcd-receiver": "farm.core.components.fluxextras:RECEIVER",
    "gitrepository": "farm.core.components.fluxkinds:GIT_REPOSITORY",
    "helm": "farm.core.components.helm:HANDLER",
    "helmchart": "farm.core.components.fluxkinds:HELM_CHART",
    "helmrelease": "farm.core.components.fluxkinds:HELM_RELEASE",
    "helmrepository": "farm.core.components.fluxkinds:HELM_REPOSITORY",
    "helmtemplate": "farm.core.components.helmtemplate:HANDLER",
    "imagepolicy": "farm.core.components.fluxextras:IMAGE_POLICY",
    "imagerepository": "farm.core.components.fluxextras:IMAGE_REPOSITORY",
    "imageupdateautomation": "farm.core.components.fluxextras:IMAGE_UPDATE_AUTOMATION",
    "oci": "farm.core.components.oci:HANDLER",
    "ocirepository": "farm.core.components.fluxkinds:OCI_REPOSITORY",
    "resourcesetinputprovider": "farm.core.components.fluxextras:RESOURCE_SET_INPUT_PROVIDER",
    # --- cloudnative-pg and postgresql ---
    "cnpg-backup": "farm.core.components.cnpg:BACKUP",
    "cnpg-cluster": "farm.core.components.cnpg_kinds:CLUSTER",
    "cnpg-clusterimagecatalog": "farm.core.components.cnpg:CLUSTER_IMAGE_CATALOG",
    "cnpg-database": "farm.core.components.cnpg_database:HANDLER",
    "cnpg-databaserole": "farm.core.components.cnpg:DATABASE_ROLE",
    "cnpg-imagecatalog": "farm.core.components.cnpg:IMAGE_CATALOG",
    "cnpg-objectstore": "farm.core.components.cnpg_kinds:OBJECT_STORE",
    "cnpg-pooler": "farm.core.components.cnpg_kinds:POOLER",
    "cnpg-publication": "farm.core.components.cnpg:PUBLICATION",
    "cnpg-scheduledbackup": "farm.core.components.cnpg:SCHEDULED_BACKUP",
    "cnpg-subscription": "farm.core.components.cnpg:SUBSCRIPTION",
    "postgresql": "farm.core.components.postgresql:HANDLER",
    # --- volsync kinds ---
    "replicationdestination": "farm.core.components.volsync:REPLICATION_DESTINATION",
    "replicationsource": "farm.core.components.volsync:REPLICATION_SOURCE",
    # --- raw objects (passthrough, manifests, crd) ---
    "crd": "farm.core.components.rawobjects:CRD",
    "manifests": "farm.core.components.rawobjects:MANIFESTS",
    "passthrough": "farm.core.components.rawobjects:PASSTHROUGH",
}

# Kinds the seed lists as held: authorable, with no component until something named is in place.
HELD_COMPONENT_TYPES: dict[str, str] = {
    "mutatingadmissionpolicy": "MutatingAdmissionPolicy",
    "mutatingadmissionpolicybinding": "MutatingAdmissionPolicyBinding",
    "validatingadmissionpolicy": "ValidatingAdmissionPolicy",
    "validatingadmissionpolicybinding": "ValidatingAdmissionPolicyBinding",
}
HELD_REASON = (
    "ValidatingAdmissionPolicy and its binding, and MutatingAdmissionPolicy and its binding, are still "
    "held: their kind components follow under go-kure/launcher#943"
)

TRAIT_TYPES: dict[str, str] = {
    # --- traits (farm/core/traits) ---
    "certificate": "farm.core.traits.certificate:HANDLER",
    "cilium-networkpolicy": "farm.core.traits.cilium_networkpolicy:HANDLER",
    "configmap": "farm.core.traits.configmap:HANDLER",
    "expose": "farm.core.traits.expose:HANDLER",
    "external-secret": "farm.core.traits.external_secret:HANDLER",
    "force-replace": "farm.core.traits.force_replace:HANDLER",
    "httproute": "farm.core.traits.httproute:HANDLER",
    "ingress": "farm.core.traits.ingress:HANDLER",
    "networkpolicy": "farm.core.traits.networkpolicy:HANDLER",
    "prune-protection": "farm.core.traits.prune_protection:HANDLER",
    "pvc": "farm.core.traits.pvc:HANDLER",
    "rbac": "farm.core.traits.rbac:HANDLER",
    "scaler": "farm.core.traits.scaler:HANDLER",
    "secret": "farm.core.traits.secret:HANDLER",
    "security-context": "farm.core.traits.security_context:HANDLER",
    "topology-spread": "farm.core.traits.topology_spread:HANDLER",
    "volsync": "farm.core.traits.volsync:HANDLER",
}

_loaded_components: dict[str, ComponentType] = {}
_loaded_traits: dict[str, TraitType] = {}


def _load(path: str) -> Any:
    module_name, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def component_type(name: str) -> ComponentType | None:
    handler = _loaded_components.get(name)
    if handler is None and name in COMPONENT_TYPES:
        handler = _load(COMPONENT_TYPES[name])
        _loaded_components[name] = handler
    return handler


def trait_type(name: str) -> TraitType | None:
    handler = _loaded_traits.get(name)
    if handler is None and name in TRAIT_TYPES:
        handler = _load(TRAIT_TYPES[name])
        _loaded_traits[name] = handler
    return handler


def seal() -> list[str]:
    """Problems with the registry: a row whose handler does not load, or names another type.
    An empty list means the registry is whole."""
    problems = []
    for table, loader in ((COMPONENT_TYPES, component_type), (TRAIT_TYPES, trait_type)):
        for name, path in table.items():
            try:
                handler = loader(name)
            except Exception as exc:  # noqa: BLE001 - reported, not raised
                problems.append(f"{name}: {path} does not load: {exc}")
                continue
            if handler is None or handler.name != name:
                problems.append(f"{name}: {path} holds a handler for {getattr(handler, 'name', None)!r}")
    return problems
