"""The transform: lowering, component handlers, traits, tiers and bundles, object order.

Order of work, as the reference does it:
1. evaluate the ClusterProfile (every rendering checked; built-in renderings validated and
   defaulted by their trait's ``validate_rendering``);
2. lower traits that are lowering rules (``expose``) until nothing changes; lowered traits are
   sealed and get no second capability merge;
3. group components into tier bundles (infra, services, apps). No type has a built-in tier: only
   the ``launcher.gokure.dev/tier`` annotation moves a component; the rest stay with apps, in
   document order;
4. per bundle: build every component, apply each component's traits in authored order, then
   write each component's objects in order, the traits' objects after them, and last the objects
   a trait asks to be placed at the end of the bundle. Objects that belong to the document (a
   generated source) come first, once, ahead of every bundle;
5. refuse a name collision (two components resolving one name of one kind and namespace, each
   under its name role), then a generated-object collision (two origins producing one object
   identity: a trait's object meets another's, or a component's);
6. run the environment policy over every emitted object: its object kind rules, and the pod
   checks of every object with a pod template.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from farm.core import policy as policy_checks
from farm.core.capabilities import (
    check_rendering_values,
    merge_rendering,
    missing_capability_error,
    resolve_capability,
)
from farm.core.charts import ChartRender
from farm.core.documents import Application, ClusterProfile
from farm.core.errors import CapabilityError, CoreError, TransformError
from farm.core.fields import go_type_name
from farm.core.model import (
    COMPONENT_LABEL,
    DELIVERY_ANNOTATIONS,
    TIER_ANNOTATION,
    BuildContext,
    ComponentSpec,
    Generated,
    NameClaim,
    TraitSpec,
    pod_spec_of,
)
from farm.core.policy import DEFAULT_POLICY, Policy
from farm.core.registry import (
    HELD_COMPONENT_TYPES,
    HELD_REASON,
    TIERS,
    TraitApplication,
    component_type,
    trait_type,
)

MAX_LOWERING_ROUNDS = 9


def evaluate_profile(profile: ClusterProfile) -> dict[str, dict[str, Any]]:
    """Every capability's rendering, checked, and for built-in trait types validated and defaulted."""
    evaluated: dict[str, dict[str, Any]] = {}
    for key, capability in (profile.spec.capabilities or {}).items():
        rendering = capability.rendering or {}
        check_rendering_values(key, rendering, profile.metadata.name)
        handler = trait_type(key.split(".", 1)[0])
        if handler is not None and handler.validate_rendering is not None:
            try:
                rendering = handler.validate_rendering(dict(rendering), key)
            except CoreError as exc:
                raise CapabilityError(
                    f'ClusterProfile "{profile.metadata.name}": capability "{key}": {exc.message}'
                ) from None
        evaluated[key] = {k: v for k, v in rendering.items() if v is not None}
    return evaluated


def _component_specs(app: Application) -> list[ComponentSpec]:
    specs = []
    for component in app.spec.components or []:
        traits = [TraitSpec(t.type, dict(t.properties or {})) for t in component.traits or []]
        specs.append(
            ComponentSpec(
                name=component.name,
                type=component.type,
                properties=dict(component.properties or {}),
                traits=traits,
                annotations=dict(component.annotations or {}),
            )
        )
    return specs


def _check_types(components: list[ComponentSpec]) -> None:
    for component in components:
        handler = component_type(component.type)
        if handler is None and component.type in HELD_COMPONENT_TYPES:
            raise TransformError(
                f'component "{component.name}": component type "{component.type}" '
                f"({HELD_COMPONENT_TYPES[component.type]}) is not authorable yet: {HELD_REASON}"
            )
        if handler is None:
            raise TransformError(
                f'component "{component.name}": unsupported component type "{component.type}"'
            )
        for trait in component.traits:
            t_handler = trait_type(trait.type)
            if t_handler is None:
                raise TransformError(
                    f'component "{component.name}": no handler for trait type "{trait.type}"'
                )
            if t_handler.component_types is not None and component.type not in t_handler.component_types:
                allowed = ", ".join(sorted(t_handler.component_types))
                raise TransformError(
                    f'component "{component.name}": trait "{trait.type}" is not supported on component '
                    f'type "{component.type}" (supported: {allowed})'
                )


def _merged_properties(
    trait: TraitSpec, component: ComponentSpec, ctx: BuildContext, capability: str
) -> tuple[dict[str, Any], str | None]:
    """The trait's properties after the capability merge, and the capability key used."""
    if trait.sealed:
        return trait.properties, None
    binding = resolve_capability(ctx.capabilities, trait.type, trait.properties)
    if binding is None:
        if capability == "required":
            raise missing_capability_error(
                component.name, trait.type, trait.properties, ctx.profile.metadata.name
            )
        return {k: v for k, v in trait.properties.items() if v is not None}, None
    key, rendering = binding
    return merge_rendering(rendering, trait.properties), key


def _lower_traits(components: list[ComponentSpec], ctx: BuildContext) -> None:
    for _ in range(MAX_LOWERING_ROUNDS):
        changed = False
        for component in components:
            for index, trait in enumerate(component.traits):
                handler = trait_type(trait.type)
                if handler is None or handler.lower is None or trait.sealed:
                    continue
                properties, _ = _merged_properties(trait, component, ctx, handler.capability)
                try:
                    lowered = handler.lower(trait, properties, component, ctx)
                except CoreError as exc:
                    raise exc.with_prefix(_trait_lowering_prefix(component, trait)) from None
                lowered.sealed = True
                component.traits[index] = lowered
                changed = True
        if not changed:
            return
    raise TransformError(f"lowering did not reach a fixpoint in {MAX_LOWERING_ROUNDS} rounds")


def _trait_lowering_prefix(component: ComponentSpec, trait: TraitSpec) -> str:
    """A trait-lowering error on a lowering rule's component names the rule's step too (seed 002,
    worker: "gains one chain line naming the component/worker@v1alpha1 step"; on one line here)."""
    prefix = f'component "{component.name}" trait "{trait.type}": '
    handler = component_type(component.type)
    if handler is not None and handler.lowering_rule:
        prefix += f"step component/{component.type}@v1alpha1: "
    return prefix


def _tier_of(component: ComponentSpec) -> str:
    authored = component.annotations.get(TIER_ANNOTATION)
    if authored is not None:
        if authored not in TIERS:
            raise TransformError(
                f'component "{component.name}": annotation {TIER_ANNOTATION}: invalid tier "{authored}" '
                f"(must be one of {', '.join(TIERS)})"
            )
        return authored
    handler = component_type(component.type)
    assert handler is not None
    return handler.tier


def _label(obj: dict[str, Any], component: str) -> None:
    metadata = obj.setdefault("metadata", {})
    labels = metadata.get("labels") or {}
    if not isinstance(labels, dict):  # an authored raw object (passthrough, manifests) with labels: "x"
        raise TransformError(
            f'component "{component}": {_describe_object(obj)}: metadata.labels: must be a map of strings, '
            f"got {go_type_name(labels)}"
        )
    labels[COMPONENT_LABEL] = component
    metadata["labels"] = labels


def _build_component(component: ComponentSpec, ctx: BuildContext) -> Generated:
    handler = component_type(component.type)
    assert handler is not None
    try:
        return handler.build(component, ctx)
    except CoreError as exc:
        raise exc.with_prefix(
            _component_prefix(component, ctx, handler.lowering_rule and not exc.terminal)
        ) from None


def _component_prefix(component: ComponentSpec, ctx: BuildContext, lowered: bool) -> str:
    """The handler's prefix, or the lowering engine's for a refusal of a lowering rule (seed 002,
    worker: ``component "w" (type "worker") in document …: <cause>``; the document is named by the
    Application's name, our wording of the elided part)."""
    if lowered:
        return f'component "{component.name}" (type "{component.type}") in document "{ctx.app_name}": '
    return f'component "{component.name}": '


def _apply_traits(component: ComponentSpec, generated: Generated, ctx: BuildContext) -> tuple[list, list]:
    added: list[dict[str, Any]] = []
    tail: list[dict[str, Any]] = []
    for trait in component.traits:
        handler = trait_type(trait.type)
        assert handler is not None
        if handler.apply is None:
            raise TransformError(f'component "{component.name}": trait "{trait.type}" was not lowered')
        properties, key = _merged_properties(trait, component, ctx, handler.capability)
        application = TraitApplication(trait, properties, component, generated, ctx, capability_key=key)
        try:
            new_objects = handler.apply(application)
        except CoreError as exc:
            raise exc.with_prefix(f'component "{component.name}" trait "{trait.type}": ') from None
        for obj in new_objects:
            _label(obj, component.name)
        for obj in application.bundle_tail:
            _label(obj, component.name)
        added.extend(new_objects)
        tail.extend(application.bundle_tail)
    _annotate_delivery(generated, added)
    return added, tail


def _annotate_delivery(generated: Generated, added: list[dict[str, Any]]) -> None:
    """Delivery intents (prune-protection, force-replace) cover every object the component and its
    traits generate, whatever the trait order; synthesized bundle-tail objects are not the component's."""
    annotations = generated.facts.get(DELIVERY_ANNOTATIONS)
    if not annotations:
        return
    for obj in [*generated.objects, *added]:
        metadata = obj.setdefault("metadata", {})
        metadata["annotations"] = {**(metadata.get("annotations") or {}), **annotations}


def _object_identity(obj: dict[str, Any]) -> tuple[Any, ...]:
    metadata = obj.get("metadata") or {}
    return (obj.get("apiVersion"), obj.get("kind"), metadata.get("namespace"), metadata.get("name"))


def _add_document_objects(documents: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    """A document-owned object several components generate alike (one shared source) is
    written once, where the first of them put it."""
    seen = {_object_identity(obj) for obj in documents}
    for obj in new:
        if _object_identity(obj) not in seen:
            seen.add(_object_identity(obj))
            documents.append(obj)


def _claims_of(component: ComponentSpec, generated: Generated) -> list[NameClaim]:
    """The names a component claims: what its handler states, else its one object under role
    "object" (set by properties.objectName when that names it)."""
    if generated.claims is not None:
        return generated.claims
    handler = component_type(component.type)
    if handler is None or not handler.claims_object or len(generated.objects) != 1:
        return []
    obj = generated.objects[0]
    object_name = component.properties.get("objectName")
    named = isinstance(object_name, str) and object_name and object_name == _name_of(obj)
    return [NameClaim(obj, "object", "properties.objectName" if named else None)]


def _name_of(obj: dict[str, Any]) -> Any:
    return (obj.get("metadata") or {}).get("name")


def _identity(obj: dict[str, Any]) -> tuple[Any, ...]:
    """An object's identity to the API: group, kind, namespace, name (the version aside)."""
    metadata = obj.get("metadata") or {}
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    return (group, obj.get("kind"), metadata.get("namespace"), metadata.get("name"))


def _describe_claim(component: str, claim: NameClaim) -> str:
    how = f"set by {claim.set_by}" if claim.set_by else "its default"
    return f'component "{component}" (role "{claim.role}", {how})'


def _check_name_claims(claims: list[tuple[str, NameClaim]]) -> None:
    """Every resolved name is held against every other of its kind and namespace (one cluster-scoped
    name): two claims of one name are refused, naming both components and their roles."""
    seen: dict[tuple[Any, ...], tuple[str, NameClaim]] = {}
    for component, claim in claims:
        identity = _identity(claim.obj)
        if identity in seen:
            first = _describe_claim(*seen[identity])
            raise TransformError(
                f"{claim.context}name collision: {_describe_object(claim.obj)} is named by {first} and by "
                f"{_describe_claim(component, claim)}; give one of them another name"
            )
        seen[identity] = (component, claim)


def _build_bundle(
    components: list[ComponentSpec],
    ctx: BuildContext,
    documents: list[dict[str, Any]],
    claims: list[tuple[str, NameClaim]],
) -> list[tuple[dict[str, Any], str]]:
    """The bundle's objects in output order, each with what generated it (for collision errors);
    the names its components claim are added to ``claims``."""
    own: list[tuple[dict[str, Any], str]] = []
    generated_by_component = []
    for component in components:
        generated = _build_component(component, ctx)
        generated_by_component.append((component, generated))
        claims.extend((component.name, claim) for claim in _claims_of(component, generated))
    trait_objects: list[tuple[dict[str, Any], str]] = []
    tail_objects: list[tuple[dict[str, Any], str]] = []
    for component, generated in generated_by_component:
        added, tail = _apply_traits(component, generated, ctx)
        trait_objects.extend((obj, _sub_application(obj, component.name)) for obj in added)
        tail_objects.extend((obj, _sub_application(obj, component.name)) for obj in tail)
    for component, generated in generated_by_component:
        for obj in generated.objects:
            _label(obj, component.name)
        _add_document_objects(documents, generated.document_objects)
        own.extend((obj, f'component "{component.name}"') for obj in generated.objects)
    return own + trait_objects + tail_objects


def _sub_application(obj: dict[str, Any], component: str) -> str:
    name = (obj.get("metadata") or {}).get("name", "")
    return f'sub-application "{name}" of component "{component}"'


def _describe_object(obj: dict[str, Any]) -> str:
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.rpartition("/")[0]
    kind = f"{obj.get('kind')}.{group}" if group else str(obj.get("kind"))
    metadata = obj.get("metadata") or {}
    namespace, name = metadata.get("namespace"), metadata.get("name", "")
    return f'{kind} "{namespace}/{name}"' if namespace else f'{kind} "{name}"'


def _check_collisions(objects: list[tuple[dict[str, Any], str]]) -> None:
    """Two generated objects with one identity would overwrite each other when applied: refuse."""
    seen: dict[tuple[Any, ...], str] = {}
    for obj, origin in objects:
        identity = _identity(obj)
        if identity in seen:
            raise TransformError(
                f"generated-object collision: {_describe_object(obj)} is generated by both {seen[identity]} "
                f"and {origin}; give one of them another name"
            )
        seen[identity] = origin


def _enforce_object_policy(objects: list[dict[str, Any]], policy: Policy) -> None:
    """The checks the environment policy runs on every emitted object: its kind, and its pods."""
    for obj in objects:
        component = ((obj.get("metadata") or {}).get("labels") or {}).get(COMPONENT_LABEL)
        policy_checks.check_object_kind(policy, obj, f'component "{component}"' if component else "document")
    _enforce_pod_policy(objects, policy)


# The kinds whose pod template the environment policy reads (seed 002: the workload kinds, and the
# CloudNativePG Pooler whose ApplyPolicy applies the pod gates to template.spec). A custom resource
# of any other kind is not checked, "the pods its controller creates" included (passthrough,
# manifests: "Not checked").
_POD_TEMPLATE_KINDS = frozenset(
    {
        ("v1", "Pod"),
        ("v1", "PodTemplate"),
        ("v1", "ReplicationController"),
        ("apps/v1", "Deployment"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"),
        ("apps/v1", "ReplicaSet"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
        ("postgresql.cnpg.io/v1", "Pooler"),
    }
)


def _enforce_pod_policy(objects: list[dict[str, Any]], policy: Policy) -> None:
    for obj in objects:
        if (obj.get("apiVersion"), obj.get("kind")) not in _POD_TEMPLATE_KINDS:
            continue
        pod_spec = (
            pod_spec_of(obj)
            if isinstance(obj.get("spec"), dict) or obj.get("kind") == "PodTemplate"
            else None
        )
        if not pod_spec:
            continue
        component = ((obj.get("metadata") or {}).get("labels") or {}).get(COMPONENT_LABEL, "")
        where = f'component "{component}": {obj.get("kind")} "{(obj.get("metadata") or {}).get("name", "")}"'
        policy_checks.check_pod_spec(policy, pod_spec, where)


def transform(
    app: Application,
    profile: ClusterProfile,
    *,
    namespace: str | None = None,
    policy: Policy = DEFAULT_POLICY,
    charts: Mapping[str, ChartRender] | None = None,
) -> list[dict[str, Any]]:
    """The objects an Application renders to for a ClusterProfile, in output order. ``charts``
    holds the chart renders a client-side Helm render needs (see farm.core.charts)."""
    capabilities = evaluate_profile(profile)
    ctx = BuildContext(
        app_name=app.metadata.name,
        namespace=namespace or app.metadata.namespace or "default",
        profile=profile,
        policy=policy,
        capabilities=capabilities,
        charts=charts or {},
    )
    components = _component_specs(app)
    ctx = replace(ctx, components=tuple(components))
    _check_types(components)
    if app.spec.policies:
        first = app.spec.policies[0]
        raise TransformError(f'policy "{first.name}": no handler for policy type "{first.type}"')
    _lower_traits(components, ctx)
    by_tier: dict[str, list[ComponentSpec]] = {tier: [] for tier in TIERS}
    for component in components:
        by_tier[_tier_of(component)].append(component)
    # document-owned objects (generated sources) form the application bundle, ahead of every tier
    documents: list[dict[str, Any]] = []
    built: list[tuple[dict[str, Any], str]] = []
    claims: list[tuple[str, NameClaim]] = []
    for tier in TIERS:
        if by_tier[tier]:
            built.extend(_build_bundle(by_tier[tier], ctx, documents, claims))
    _check_name_claims(claims)
    _check_collisions(built)
    objects = documents + [obj for obj, _ in built]
    _enforce_object_policy(objects, policy)
    return objects
