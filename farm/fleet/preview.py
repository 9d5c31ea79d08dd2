"""``farm plan``: which targets a catalog would render, and why, without rendering anything.

The targets and their action keys come from the planning path of ``farm run``
(``farm.fleet.planner.key_targets``), so a plan and the run after it agree target for target.
A target whose key is in the action or failure cache stays cached whatever changed. For every
other target the cause is read off its render request: the descriptor's fields (document digests,
namespace, ``--set`` flags, selection) are compared with those of the same target's request in the
compared run (its stored descriptor, read out of its request pack) or the compared catalog.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple

from farm.allocation import gc_paused
from farm.catalog import CatalogSnapshot
from farm.catalog.changes import ChangedInputs, DocumentChange, Fetch, document_changes
from farm.catalog.snapshot import TargetRequest, digest_bytes
from farm.fleet.planner import key_targets, trusted_signers
from farm.identity.fingerprint import core_version
from farm.store.context import Storage
from farm.store.db import read_scope, session_scope
from farm.store.queries import StoredSnapshot, snapshot_manifest, stored_snapshot
from farm.store.runs import latest_fleet_run, run_by_id, targets_of_run
from farm.store.snapshots import RequestReader, persisting_snapshot

APPLICATION = "application changed"
CLUSTER_PROFILE = "ClusterProfile changed"
VALUES = "values changed"
CHART = "chart changed"  # a chart archive's digest or the helm version that renders it
SELECTION = "profile selection changed"
DECLARATION = "profile declaration changed"
# a resolved ClusterProfile changed and no compared document says why (no manifest to compare)
RESOLVED = "profile selection or declaration changed"
NAMESPACE = "namespace/flags changed"
CORE = "core version changed"
ADDED = "target added"
REMOVED = "target removed"
NOT_CACHED = "not in the cache"  # same request, same core: the output was collected or never made
CAUSES = (
    APPLICATION,
    CLUSTER_PROFILE,
    VALUES,
    CHART,
    SELECTION,
    DECLARATION,
    RESOLVED,
    NAMESPACE,
    CORE,
    ADDED,
    NOT_CACHED,
    REMOVED,
)

TargetKey = tuple[str, str]  # (application, cluster)


@dataclass(frozen=True)
class Cause:
    kind: str
    files: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.kind} ({', '.join(self.files)})" if self.files else self.kind


@dataclass(frozen=True)
class Baseline:
    """What a plan compares with: each target's request digest, a way to read a descriptor."""

    label: str
    core_version: str
    requests: dict[TargetKey, str | None]
    descriptor: Callable[[str], dict[str, Any]]
    run_id: str | None = None
    manifest: dict[str, Any] | None = None  # the compared snapshot's documents, when known
    fetch: Fetch | None = None  # reads those documents by digest


@dataclass(frozen=True)
class PlannedTarget:
    application: str
    cluster: str
    causes: tuple[Cause, ...]


@dataclass(frozen=True)
class RefusedTarget:
    """A target whose application or ClusterProfile the catalog loader refused: a run fails it."""

    application: str
    cluster: str
    code: str
    message: str


@dataclass
class Plan:
    fleet: str
    snapshot_digest: str
    against: str
    total: int
    cached_outputs: int = 0
    cached_failures: int = 0
    render: list[PlannedTarget] = field(default_factory=list)
    removed: list[TargetKey] = field(default_factory=list)
    refused: list[RefusedTarget] = field(default_factory=list)
    documents: list[DocumentChange] = field(default_factory=list)  # input documents that changed

    @property
    def reports_something(self) -> bool:
        """Whether a run of the plan would render or fail anything (``farm plan`` exits 2)."""
        return bool(self.render or self.refused)

    def by_cause(self) -> dict[str, list[PlannedTarget]]:
        """Targets under each of their causes, causes in ``CAUSES`` order; removed ones last."""
        groups: dict[str, list[PlannedTarget]] = {kind: [] for kind in CAUSES}
        for target in self.render:
            for kind in dict.fromkeys(cause.kind for cause in target.causes):
                groups[kind].append(target)
        groups[REMOVED] = [PlannedTarget(app, cluster, (Cause(REMOVED),)) for app, cluster in self.removed]
        return {kind: targets for kind, targets in groups.items() if targets}

    def as_json(self) -> dict[str, Any]:
        clusters: dict[str, dict[str, list[str]]] = {}
        for target in [*self.render, *self.by_cause().get(REMOVED, [])]:
            clusters.setdefault(target.cluster, {})[target.application] = [str(c) for c in target.causes]
        return {
            "fleet": self.fleet,
            "snapshot": self.snapshot_digest,
            "against": self.against,
            "total": self.total,
            "render": len(self.render),
            "cached": {"outputs": self.cached_outputs, "failures": self.cached_failures},
            "causes": {kind: len(targets) for kind, targets in self.by_cause().items()},
            "targets": {name: dict(sorted(apps.items())) for name, apps in sorted(clusters.items())},
            "refused": [
                {"application": r.application, "cluster": r.cluster, "code": r.code, "message": r.message}
                for r in self.refused
            ],
            "documents": [document.as_json() for document in self.documents],
        }


def _values_files(old: list[dict[str, str]], new: list[dict[str, str]]) -> tuple[str, ...]:
    before = {layer["source"]: layer["digest"] for layer in old}
    after = {layer["source"]: layer["digest"] for layer in new}
    changed = [source for source in {**before, **after} if before.get(source) != after.get(source)]
    return tuple(sorted(source.partition("/")[2] or source for source in changed))


def _changed_charts(old: dict[str, Any], new: dict[str, Any]) -> tuple[str, ...]:
    """The charts (``NAME VERSION``) whose archive differs between two descriptors, and
    ``helm VERSION`` when the helm that renders them does."""

    def archives(descriptor: dict[str, Any]) -> dict[str, str]:
        return {
            f"{chart['chart'] or chart['repository'].rstrip('/').rsplit('/', 1)[-1]} {chart['version']}": chart[
                "digest"
            ]
            for chart in descriptor.get("charts") or []
        }

    before, after = archives(old), archives(new)
    changed = sorted(name for name in {**before, **after} if before.get(name) != after.get(name))
    if (old.get("helmVersion") or "") != (new.get("helmVersion") or "") and (before or after):
        changed.append(f"helm {new.get('helmVersion') or 'none'}")
    return tuple(changed)


def _profile_causes(old: dict[str, Any], new: dict[str, Any], inputs: ChangedInputs | None) -> list[Cause]:
    """Why a target's resolved ClusterProfile changed: its selection, its ClusterProfile, its
    declaration (read off the changed documents), or, with no documents to read, either."""
    causes = []
    if old.get("selection") != new.get("selection"):
        causes.append(Cause(SELECTION))
    if inputs is None:
        return causes or [Cause(RESOLVED)]
    cluster = (new.get("sources") or {}).get("clusterProfile", "").removesuffix(".yaml")
    if inputs.cluster_profile_changed(cluster):
        causes.append(Cause(CLUSTER_PROFILE))
    declarations = inputs.declarations_of(cluster)
    if declarations:
        causes.append(Cause(DECLARATION, declarations))
    return causes or [Cause(RESOLVED)]


def request_causes(
    old: dict[str, Any], new: dict[str, Any], inputs: ChangedInputs | None = None
) -> list[Cause]:
    """What differs between two request descriptors of one target, field by field; ``inputs``
    (the documents that changed) names what changed a resolved ClusterProfile."""
    causes = []
    app_files = tuple(
        name
        for field_name, name in (("app", "app.yaml"), ("package", "kurel.yaml"))
        if old.get(field_name) != new.get(field_name)
    )
    if app_files:
        causes.append(Cause(APPLICATION, app_files))
    profile_changed = old.get("selection") != new.get("selection") or old.get("resolvedProfile") != new.get(
        "resolvedProfile"
    )
    # a profiled ClusterProfile is rendered resolved: a new selection or fragment changes its bytes
    # too, so "ClusterProfile changed" is named only when the profile side did not change
    if old.get("clusterProfile") != new.get("clusterProfile") and not profile_changed:
        causes.append(Cause(CLUSTER_PROFILE))
    if old.get("values") != new.get("values"):
        causes.append(Cause(VALUES, _values_files(old.get("values") or [], new.get("values") or [])))
    charts = _changed_charts(old, new)
    if charts:
        causes.append(Cause(CHART, charts))
    if profile_changed:
        causes += _profile_causes(old, new, inputs)
    if old.get("namespace") != new.get("namespace") or old.get("sets") != new.get("sets"):
        causes.append(Cause(NAMESPACE))
    return causes


def _target_causes(
    new: dict[str, Any],
    old_digest: str | None,
    new_digest: str,
    baseline: Baseline,
    version: str,
    inputs: ChangedInputs | None,
) -> tuple[Cause, ...]:
    causes = (
        [] if old_digest == new_digest else request_causes(baseline.descriptor(old_digest or ""), new, inputs)
    )
    if baseline.core_version != version:
        causes.append(Cause(CORE))
    return tuple(causes) or (Cause(NOT_CACHED),)


class PlanEntry(NamedTuple):
    """One target of the planned snapshot: its request and whether a render already serves it
    (a named tuple: one per target)."""

    key: TargetKey
    request_digest: str
    descriptor: Callable[[], dict[str, Any]]
    cached: str | None = None  # "output" or "failure" when the target stays cached


def plan_entries(
    fleet: str,
    snapshot_digest: str,
    entries: Sequence[PlanEntry],
    baseline: Baseline | None,
    version: str,
    documents: list[DocumentChange] | None = None,
) -> Plan:
    """The plan of ``entries`` against ``baseline``: every uncached target with its causes.

    The one classification of ``farm plan`` (``preview``) and of the API's diff of two stored
    snapshots (``snapshot_plan``).
    """
    plan = Plan(fleet, snapshot_digest, baseline.label if baseline else "nothing", len(entries))
    plan.documents = list(documents or [])
    inputs = ChangedInputs(tuple(documents)) if documents is not None else None
    previous = baseline.requests if baseline else {}
    added = (Cause(ADDED),)  # immutable: every added target shares it
    for entry in entries:
        if entry.cached == "output":
            plan.cached_outputs += 1
        elif entry.cached == "failure":
            plan.cached_failures += 1
        elif baseline is None or entry.key not in previous:
            plan.render.append(PlannedTarget(*entry.key, added))
        else:
            causes = _target_causes(
                entry.descriptor(), previous[entry.key], entry.request_digest, baseline, version, inputs
            )
            plan.render.append(PlannedTarget(*entry.key, causes))
    current = {entry.key for entry in entries}
    plan.removed = sorted(key for key in previous if key not in current)
    return plan


@gc_paused()
def preview(storage: Storage, snapshot: CatalogSnapshot, baseline: Baseline | None, *, source: str) -> Plan:
    """The plan of ``snapshot`` against ``baseline`` (None: every target is added).

    Writes the snapshot (as ``farm run`` would) and nothing else: no run, no job, no render.
    """
    version = core_version()
    with (
        session_scope(storage.sessions) as session,
        persisting_snapshot(session, storage.objects, snapshot, source),
    ):
        keyed = key_targets(
            session, snapshot, version, storage.objects, trust=lambda: trusted_signers(storage)
        )
    cached = [
        "output" if item.output_digest is not None else "failure" if item.failure is not None else None
        for item in keyed
    ]
    requests = [item.target_request for item in keyed]
    return _plan_of(snapshot, requests, cached, baseline, version, storage.objects.get)


def preview_without_farm(snapshot: CatalogSnapshot, baseline: Baseline | None) -> Plan:
    """The plan of ``snapshot`` where no farm exists: nothing is cached and nothing is written,
    so every target is compared with ``baseline`` alone (None: every target is added)."""
    blobs = {digest_bytes(blob): blob for blob in snapshot.documents()}
    requests = list(snapshot.target_requests)
    return _plan_of(snapshot, requests, [None] * len(requests), baseline, core_version(), blobs.__getitem__)


def _plan_of(
    snapshot: CatalogSnapshot,
    requests: Sequence[TargetRequest],
    cached: Sequence[str | None],
    baseline: Baseline | None,
    version: str,
    fetch: Fetch,
) -> Plan:
    """``cached``: for each of ``requests``, "output", "failure" or None."""
    refused: list[RefusedTarget] = []
    entries: list[PlanEntry] = []
    problems = snapshot.has_problems
    for target_request, held in zip(requests, cached, strict=True):
        target = target_request.target
        problem = snapshot.problem_of(target) if problems else None
        if problem is not None:  # the run fails it at planning: listed apart, never rendered
            refused.append(RefusedTarget(target.application, target.cluster, problem.code, problem.message))
            continue
        request = target_request.request
        entries.append(
            PlanEntry((target.application, target.cluster), request.digest, request.descriptor, held)
        )
    refused += [
        RefusedTarget(target.application, target.cluster, problem.code, problem.message)
        for target, problem in snapshot.refused
    ]
    documents = _changed_documents(baseline, partial(snapshot.content, targets=False), fetch)
    plan = plan_entries(snapshot.name, snapshot.digest, entries, baseline, version, documents)
    plan.total += len(refused)
    plan.refused = refused
    return plan


def _changed_documents(
    baseline: Baseline | None, manifest: Callable[[], dict[str, Any]], fetch: Fetch
) -> list[DocumentChange] | None:
    """The input documents that differ from the baseline's; None when it names no documents.
    ``manifest`` (the new manifest's documents) is called only then."""
    if baseline is None or baseline.manifest is None or baseline.fetch is None:
        return None
    return document_changes(baseline.manifest, manifest(), baseline.fetch, fetch)


def _stored_descriptor(storage: Storage, packs: dict[str, str | None]) -> Callable[[str], dict[str, Any]]:
    """Read a stored request descriptor by digest, out of the pack ``packs`` names for it."""
    loaded: dict[str, dict[str, Any]] = {}
    reader = RequestReader(storage.objects)

    def descriptor(digest: str) -> dict[str, Any]:
        if digest not in loaded:
            stored = reader.descriptor(digest, packs.get(digest)) if digest else b"{}"
            loaded[digest] = json.loads(stored)
        return loaded[digest]

    return descriptor


def run_baseline(storage: Storage, run_id: str) -> Baseline:
    """The targets of a recorded run and their stored requests. LookupError if there is no such run."""
    with read_scope(storage.sessions) as session:
        run = run_by_id(session, run_id)
        if run is None:
            raise LookupError(f"--against: run {run_id} does not exist (farm runs lists them)")
        version = run.core_version
        rows = targets_of_run(session, run_id)
        manifest = snapshot_manifest(session, storage.objects, run.snapshot_digest)
    requests = {(row.application, row.cluster_profile): row.request_digest for row in rows}
    packs = {row.request_digest: row.request_pack for row in rows if row.request_digest}
    descriptor = _stored_descriptor(storage, packs)
    return Baseline(f"run {run_id}", version, requests, descriptor, run_id, manifest, storage.objects.get)


def catalog_baseline(snapshot: CatalogSnapshot, label: str) -> Baseline:
    """Another catalog's targets and requests, as the current core would key them."""
    requests = {(tr.target.application, tr.target.cluster): tr.request for tr in snapshot.target_requests}
    descriptors = {request.digest: request.descriptor() for request in requests.values()}
    digests: dict[TargetKey, str | None] = {key: request.digest for key, request in requests.items()}
    blobs = {digest_bytes(blob): blob for blob in snapshot.documents()}
    return Baseline(
        label,
        core_version(),
        digests,
        lambda digest: descriptors.get(digest, {}),
        manifest=snapshot.content(),
        fetch=blobs.__getitem__,
    )


def latest_run_of_fleet(storage: Storage, fleet: str) -> str | None:
    """The latest complete fleet run of the fleet named ``fleet``: what ``farm plan`` compares
    with by default (never a qualification's partial run)."""
    with read_scope(storage.sessions) as session:
        run = latest_fleet_run(session, storage.objects, fleet)
        return run.id if run is not None else None


def _stored(storage: Storage, digest: str) -> tuple[StoredSnapshot, dict[str, Any] | None]:
    with read_scope(storage.sessions) as session:
        stored = stored_snapshot(session, storage.objects, digest)
        manifest = snapshot_manifest(session, storage.objects, digest)
    if stored is None:
        raise LookupError(f"no catalog snapshot {digest}")
    return stored, manifest


def snapshot_plan(
    storage: Storage, old_digest: str, new_digest: str
) -> tuple[StoredSnapshot, StoredSnapshot, Plan]:
    """The plan of stored snapshot ``new_digest`` against stored snapshot ``old_digest``.

    A target whose request is the same in both is unchanged (the old snapshot's render serves
    it, whatever the action cache holds today); every other target gets its causes from the
    same classification as ``farm plan``. LookupError when either snapshot is unknown.
    """
    (old, old_manifest), (new, new_manifest) = _stored(storage, old_digest), _stored(storage, new_digest)
    descriptor = _stored_descriptor(storage, {**old.pack_of_request(), **new.pack_of_request()})
    requests: dict[TargetKey, str | None] = {key: request for key, (_, request) in old.targets.items()}
    baseline = Baseline(
        f"snapshot {old_digest}",
        core_version(),
        requests,
        descriptor,
        None,
        old_manifest,
        storage.objects.get,
    )
    entries = [
        PlanEntry(
            key, request, partial(descriptor, request), "output" if requests.get(key) == request else None
        )
        for key, (_, request) in sorted(new.targets.items())
    ]
    documents = (
        _changed_documents(baseline, lambda: new_manifest, storage.objects.get) if new_manifest else None
    )
    return old, new, plan_entries(new.name, new_digest, entries, baseline, baseline.core_version, documents)
