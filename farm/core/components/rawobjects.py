"""Raw objects: passthrough (one authored object), manifests and crd (a multi-document source).

Seed 002, "passthrough" and "crd / manifests". passthrough emits its ``object`` map as written,
filling ``metadata.name`` (the component name) and, on a namespaced object, ``metadata.namespace``
where either is missing, empty or not a string; lists are refused. manifests and crd take
``inline`` content (a YAML string of one or more documents); their ``url`` form fetches over the
network, which the pure core cannot do, so it is refused with a message saying so. Every object is
held to the environment policy (see :mod:`objectpolicy`).
"""

from __future__ import annotations

import copy
from typing import Any

from farm.core import yamlio
from farm.core.components import objectpolicy
from farm.core.errors import FieldError, TransformError
from farm.core.fields import go_type_name, parse_bool_field
from farm.core.model import BuildContext, ComponentSpec, Generated
from farm.core.registry import ComponentType

CRD_KIND = "CustomResourceDefinition"
CRD_GROUP = "apiextensions.k8s.io"


def _check_keys(props: dict[str, Any], allowed: tuple[str, ...], type_name: str) -> None:
    for key in props:
        if key not in allowed:
            raise FieldError(f'{type_name}: unknown property "{key}" (properties: {", ".join(allowed)})')


def _is_list(obj: dict[str, Any]) -> bool:
    """apimachinery's Unstructured.IsList: ``items`` present and a sequence."""
    return isinstance(obj.get("items"), list)


# --- passthrough ----------------------------------------------------------------------------


def _check_identity(obj: dict[str, Any], component: str) -> None:
    for key in ("apiVersion", "kind"):
        value = obj.get(key)
        if not isinstance(value, str) or not value:
            raise FieldError(f"object.{key}: required (a non-empty string)")
    if _is_list(obj):
        raise FieldError(
            f"object: {obj['kind']} is a list; passthrough emits a single object, so declare one component per object"
        )
    if "items" in obj and obj["items"] is None and str(obj["kind"]).endswith("List"):
        raise FieldError(
            f"object: {obj['kind']} with items: null is a list that expands to zero objects; "
            "declare one component per object"
        )


def _resolve_cluster_scoped(obj: dict[str, Any], authored: bool | None, component: str) -> tuple[bool, str]:
    """Whether the object is cluster-scoped, and why (for the namespace refusal)."""
    api_version, kind = obj["apiVersion"], obj["kind"]
    table = objectpolicy.table_scope(api_version, kind)
    label = f"{api_version} {kind}"
    if objectpolicy.is_api_governed(api_version, kind):
        if authored is not None and authored != table:
            scope = "cluster-scoped" if table else "namespaced"
            raise FieldError(
                f'passthrough component "{component}": clusterScoped is {str(authored).lower()}, but the '
                f"Kubernetes API defines {label} as {scope}; remove clusterScoped"
            )
        return bool(table), f"the Kubernetes API defines {label} as cluster-scoped"
    if authored is not None:
        return authored, f"clusterScoped is true for {label}"
    if table:
        return True, (
            f"{label} is registered as cluster-scoped (set clusterScoped: false if the cluster serves it namespaced)"
        )
    return False, ""


def build_passthrough(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = component.properties
    _check_keys(props, ("object", "clusterScoped"), "passthrough")
    raw = props.get("object")
    if raw is None:
        raise FieldError("object: required (the full object: apiVersion, kind, metadata, spec)")
    if not isinstance(raw, dict):
        raise FieldError(f"object: must be an object, got {go_type_name(raw)}")
    cluster_scoped, present = parse_bool_field(props, "clusterScoped")
    obj = copy.deepcopy(raw)
    _check_identity(obj, component.name)
    scoped, reason = _resolve_cluster_scoped(obj, cluster_scoped if present else None, component.name)
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
        obj["metadata"] = metadata
    if not isinstance(metadata.get("name"), str) or not metadata["name"]:
        metadata["name"] = component.name
    namespace = metadata.get("namespace")
    if scoped:
        if isinstance(namespace, str) and namespace:
            raise FieldError(
                f'passthrough component "{component.name}": object.metadata.namespace must not be set '
                f'("{namespace}"): {reason}; the Kubernetes API rejects a namespace on a cluster-scoped object'
            )
    elif not isinstance(namespace, str) or not namespace:
        metadata["namespace"] = ctx.namespace
    objectpolicy.check_object(ctx.policy, obj, "passthrough")
    return Generated(objects=[obj])


# --- manifests and crd ----------------------------------------------------------------------


def _inline_documents(props: dict[str, Any]) -> list[Any]:
    inline, url = props.get("inline"), props.get("url")
    if inline is not None and url is not None:
        raise FieldError("inline and url: set exactly one of them")
    if url is not None:
        raise FieldError(
            "url: a url source is fetched over the network at build time, and this build's core is pure "
            "(no network, no clock); put the content in inline instead"
        )
    if inline is None:
        raise FieldError("inline or url: set exactly one of them")
    if not isinstance(inline, str):
        raise FieldError(f"inline: must be a string, got {go_type_name(inline)}")
    try:
        return yamlio.load_all(inline, source="inline", manifest=True)
    except yamlio.YAMLError as exc:
        raise TransformError(f"manifest source: parse manifests: {exc}") from None


def _expand(documents: list[Any], where: str = "") -> list[dict[str, Any]]:
    """Documents with every list replaced by its items, in order."""
    objects: list[dict[str, Any]] = []
    for index, document in enumerate(documents):
        here = f"{where}item {index} of List: " if where else ""
        if not isinstance(document, dict):
            raise TransformError(
                f"manifest source: parse manifests: {here}not an object: {go_type_name(document)}"
            )
        kind = document.get("kind")
        if not isinstance(kind, str) or not kind or not isinstance(document.get("apiVersion"), str):
            raise TransformError(
                f"manifest source: parse manifests: {here}an object needs apiVersion and kind"
            )
        if _is_list(document):
            if not kind.endswith("List"):
                raise TransformError(
                    f'manifest source: parse manifests: {here}{kind} "{_name(document)}" is not a list but carries '
                    "a top-level items array"
                )
            objects.extend(_expand(document["items"], here))
        else:
            objects.append(document)
    return objects


def _name(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return str(metadata.get("name") or "")


def _parse_overrides(props: dict[str, Any]) -> dict[tuple[str, str], bool]:
    raw = props.get("scopeOverrides")
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise FieldError(f"scopeOverrides: must be a list, got {go_type_name(raw)}")
    overrides: dict[tuple[str, str], bool] = {}
    for index, entry in enumerate(raw):
        where = f"scopeOverrides[{index}]"
        if not isinstance(entry, dict):
            raise FieldError(f"{where}: must be an object, got {go_type_name(entry)}")
        for key in entry:
            if key not in ("apiVersion", "kind", "scope"):
                raise FieldError(f'{where}: unknown field "{key}"')
        for key in ("apiVersion", "kind", "scope"):
            value = entry.get(key)
            if not isinstance(value, str) or not value:
                raise FieldError(f"{where}.{key}: required (a non-empty string)")
        if entry["scope"] not in ("Cluster", "Namespaced"):
            raise FieldError(
                f'{where}: scope "{entry["scope"]}" is invalid; must be "Cluster" or "Namespaced"'
            )
        overrides[(entry["apiVersion"], entry["kind"])] = entry["scope"] == "Cluster"
    return overrides


def _crd_scopes(objects: list[dict[str, Any]]) -> dict[tuple[str, str], bool]:
    scopes = {}
    for obj in objects:
        if obj.get("kind") == CRD_KIND and objectpolicy.group_of(obj["apiVersion"]) == CRD_GROUP:
            spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
            names = spec.get("names") if isinstance(spec.get("names"), dict) else {}
            if isinstance(spec.get("group"), str) and isinstance(names.get("kind"), str):
                scopes[(spec["group"], names["kind"])] = spec.get("scope") == "Cluster"
    return scopes


def _scope_name(cluster: bool) -> str:
    return "Cluster" if cluster else "Namespaced"


def _resolve_scope(
    obj: dict[str, Any], overrides: dict[tuple[str, str], bool], crds: dict[tuple[str, str], bool]
) -> bool | None:
    """resolveObjectScope: API-governed kinds by the table; else an override (which must agree
    with a CRD of the same source), else the CRD, else the table; None when unknown."""
    api_version, kind = obj["apiVersion"], obj["kind"]
    if objectpolicy.is_api_governed(api_version, kind):
        return objectpolicy.table_scope(api_version, kind)
    crd = crds.get((objectpolicy.group_of(api_version), kind))
    override = overrides.get((api_version, kind))
    if override is not None:
        if crd is not None and crd != override:
            raise TransformError(
                f"manifest source: object {objectpolicy.describe(obj)}: scopeOverrides says {_scope_name(override)} "
                f"but the CustomResourceDefinition for {kind}.{objectpolicy.group_of(api_version)} in the same source "
                f"declares {_scope_name(crd)}"
            )
        return override
    if crd is not None:
        return crd
    return objectpolicy.table_scope(api_version, kind)


def _stamp(obj: dict[str, Any], cluster: bool | None, namespace: str) -> None:
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
        obj["metadata"] = metadata
    current = metadata.get("namespace")
    has_namespace = isinstance(current, str) and current != ""
    if cluster is None:
        if not has_namespace:
            raise TransformError(
                f"manifest source: object {objectpolicy.describe(obj)}: the scope of {obj['apiVersion']} "
                f"{obj['kind']} is unknown (not a kind this build registers, no CustomResourceDefinition in the "
                "source, no scopeOverrides entry); state it with scopeOverrides or set metadata.namespace"
            )
        return
    if cluster:
        if has_namespace:
            raise TransformError(
                f"manifest source: object {objectpolicy.describe(obj)}: metadata.namespace must not be set on a "
                "cluster-scoped object; the Kubernetes API rejects a namespace on a cluster-scoped object"
            )
        return
    if not has_namespace:
        metadata["namespace"] = namespace


def _source_objects(props: dict[str, Any], ctx: BuildContext, overrides: dict) -> list[dict[str, Any]]:
    objects = [copy.deepcopy(obj) for obj in _expand(_inline_documents(props))]
    crds = _crd_scopes(objects)
    for obj in objects:
        _stamp(obj, _resolve_scope(obj, overrides, crds), ctx.namespace)
        objectpolicy.check_object(ctx.policy, obj, "manifest source")
    return objects


def build_manifests(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = component.properties
    _check_keys(props, ("inline", "url", "scopeOverrides"), "manifests")
    overrides = _parse_overrides(props)
    return Generated(objects=_source_objects(props, ctx, overrides))


def build_crd(component: ComponentSpec, ctx: BuildContext) -> Generated:
    props = component.properties
    _check_keys(props, ("inline", "url"), "crd")
    objects = _source_objects(props, ctx, {})
    for obj in objects:
        if obj.get("kind") != CRD_KIND or objectpolicy.group_of(obj["apiVersion"]) != CRD_GROUP:
            raise TransformError(
                f"manifest source: object {objectpolicy.describe(obj)}: a crd source holds only "
                f"{CRD_GROUP} CustomResourceDefinitions; use a manifests component for other objects"
            )
    return Generated(objects=objects)


PASSTHROUGH = ComponentType(name="passthrough", build=build_passthrough, emits=("* *",), claims_object=False)
MANIFESTS = ComponentType(name="manifests", build=build_manifests, emits=("* *",), claims_object=False)
CRD = ComponentType(
    name="crd",
    build=build_crd,
    emits=("apiextensions.k8s.io/v1 CustomResourceDefinition",),
    cluster_scoped=True,
    claims_object=False,
)
