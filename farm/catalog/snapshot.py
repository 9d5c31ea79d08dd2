"""The immutable catalog snapshot. Its digest covers content only: no paths, no times."""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from hashlib import sha256
from json.encoder import encode_basestring

from farm.core.request import REQUEST_VERSION, ChartArchive, RenderRequest, ValuesLayer, pack_requests
from farm.identity.canonical import canonical_json
from farm.identity.keys import request_action_keys
from farm.profiles import (
    Declaration,
    ResolvedClusterProfile,
    Selection,
    parse_declaration,
    parse_selection,
    resolve,
)


def digest_bytes(data: bytes) -> str:
    return sha256(data).hexdigest()


_TARGETS_MEMBER = b',"targets":['


def manifest_head(manifest: bytes) -> dict:
    """Every member of a snapshot manifest but ``targets`` (one entry per target: as large as the
    fleet), without decoding that one. The manifest is canonical JSON (keys sorted, no spaces), so
    ``targets`` is its last member; no string can hold the member's text (a quote in a string is
    escaped), and the part before it must decode as the whole object, or ``ValueError``."""
    at = manifest.rfind(_TARGETS_MEMBER)
    return json.loads(manifest[:at] + b"}") if at >= 0 else json.loads(manifest)


@dataclass(frozen=True)
class Problem:
    """A document that did not validate. Jobs that need it fail with this error; others go on."""

    file: str
    code: str
    message: str


@dataclass(frozen=True)
class ApplicationEntry:
    name: str
    app_yaml: bytes
    package_yaml: bytes | None
    values_yaml: bytes | None
    cluster_values: tuple[tuple[str, bytes], ...] = ()
    problem: Problem | None = None
    # the charts its chart components render (vendored or fetched at load; farm.catalog.charts)
    charts: tuple[ChartArchive, ...] = ()

    def values_layers(self, cluster: str) -> tuple[ValuesLayer, ...]:
        """The values files of one cluster, in the order the core layers them: the shared
        ``values.yaml`` first, then ``values/<cluster>.yaml`` merged over it."""
        overlay = self._cluster_values.get(cluster)
        if overlay is None:  # one tuple for every cluster without an overlay: hashed once
            return self._shared_values
        return (*self._shared_values, ValuesLayer(f"{self.name}/values/{cluster}.yaml", overlay))

    @cached_property
    def _shared_values(self) -> tuple[ValuesLayer, ...]:
        if self.values_yaml is None:
            return ()
        return (ValuesLayer(f"{self.name}/values.yaml", self.values_yaml),)

    def values_layerings(self) -> list[tuple[ValuesLayer, ...]]:
        """Every layering of its values a target can get: the shared file alone, then each
        cluster's over it."""
        return [self.values_layers(""), *(self.values_layers(cluster) for cluster, _ in self.cluster_values)]

    @cached_property
    def _cluster_values(self) -> dict[str, bytes]:
        return dict(self.cluster_values)

    @property
    def cluster_value_names(self) -> dict[str, bytes]:
        """ClusterProfile name → its values overlay, for the clusters that have one."""
        return self._cluster_values

    @cached_property
    def document_digests(self) -> dict[str, str]:
        digests = {"app": digest_bytes(self.app_yaml)}
        if self.package_yaml is not None:
            digests["package"] = digest_bytes(self.package_yaml)
        return digests

    @property
    def digest(self) -> str:
        return digest_bytes(canonical_json(self.content()))

    def content(self) -> dict:
        content = {
            "app": self.document_digests["app"],
            "package": self.document_digests.get("package"),
            "values": digest_bytes(self.values_yaml) if self.values_yaml is not None else None,
            "clusterValues": {name: digest_bytes(data) for name, data in self.cluster_values},
        }
        if self.charts:  # absent without charts: those applications keep their digests
            content["charts"] = [archive.entry() for archive in self.charts]
        return content

    def documents(self) -> list[bytes]:
        blobs = [self.app_yaml, *(data for _, data in self.cluster_values)]
        blobs += [data for data in (self.package_yaml, self.values_yaml) if data is not None]
        return blobs + [archive.data for archive in self.charts]


@dataclass(frozen=True)
class ClusterEntry:
    name: str
    profile_yaml: bytes
    problem: Problem | None = None

    @cached_property
    def digest(self) -> str:
        return digest_bytes(self.profile_yaml)


@dataclass(frozen=True, order=True)
class Target:
    application: str
    cluster: str
    namespace: str | None = None
    selection: str = ""


@dataclass(frozen=True)
class TargetRequest:
    """One target of a snapshot and the render request the catalog built for it."""

    target: Target
    request: RenderRequest


def json_text(text: str | None) -> str:
    """``text`` as ``json.dumps(..., ensure_ascii=False)`` writes it (the same encoder function)."""
    return "null" if text is None else encode_basestring(text)


# A request descriptor without charts, its members in key order, as
# ``farm.core.request.RenderRequest.descriptor_bytes`` writes it (canonical JSON); every part
# substituted is JSON text already (``json_text``, ``values_text``) or a bare digest. Written here,
# outside the core, so that the core's source (and so the core version in every action key) stays
# as it is; ``tests/profiles/test_catalog_profiles.py`` holds every request a catalog builds equal
# to the one the core's constructor makes of the same fields.
_DESCRIPTOR_HEAD = '{"app":"%s","clusterProfile":"%s","namespace":%s,"package":%s,"requestVersion":%d'
_DESCRIPTOR_TAIL = (
    ',"selection":%s,"sets":[%s],"sources":{"app":%s,"clusterProfile":%s,"package":%s},"values":[%s]}'
)


def descriptor_text(
    app: str,
    cluster_profile: str,
    namespace: str,
    package: str,
    resolved_profile: str | None,
    selection: str,
    sets: str,
    app_source: str,
    cluster_profile_source: str,
    package_source: str,
    values: str,
) -> str:
    """The descriptor of a request without charts from its parts."""
    head = _DESCRIPTOR_HEAD % (app, cluster_profile, namespace, package, REQUEST_VERSION)
    if resolved_profile is not None:
        head += f',"resolvedProfile":"{resolved_profile}"'
    return head + _DESCRIPTOR_TAIL % (
        selection,
        sets,
        app_source,
        cluster_profile_source,
        package_source,
        values,
    )


def values_text(values: tuple[ValuesLayer, ...]) -> str:
    """The members of a descriptor's ``values`` array, as JSON text."""
    return ",".join(f'{{"digest":"{layer.digest}","source":{json_text(layer.source)}}}' for layer in values)


def _planned_request(state: dict) -> RenderRequest:
    """A request whose instance dict is ``state``: every field, ``_digests`` (shared, never
    changed), and the ``descriptor_bytes`` and ``digest`` its fields compute (cached values of the
    request's own, as its first reads would store them). The frozen dataclass's ``__init__`` sets
    each field through ``object.__setattr__``: a snapshot builds one request per target."""
    request = object.__new__(RenderRequest)
    object.__setattr__(request, "__dict__", state)
    return request


class _DescriptorParts:
    """The parts of request descriptors that many targets share, each written once: an
    application's (its document digests and source names), a ClusterProfile's under one selection,
    and a values layering's. A target's descriptor is then its parts and its namespace and
    selection put together (``farm.core.request.descriptor_text``), instead of every part
    written again per target (a snapshot builds one request per target)."""

    def __init__(self, snapshot: CatalogSnapshot) -> None:
        # the snapshot caches this object: a weak reference back keeps the pair out of a reference
        # cycle, so a replaced snapshot is freed at once (the farm daemon freezes its heap)
        self.snapshot = weakref.proxy(snapshot)
        self._applications: dict[str, tuple] = {}
        self._profiles: dict[tuple[str, str], tuple] = {}
        self._values: dict[tuple[str, str], tuple[tuple[ValuesLayer, ...], str]] = {}
        self._digests: dict[tuple[str, str], dict[str, str]] = {}
        self._earlier: _EarlierRequests | None = None

    def reuse(self, earlier: _EarlierRequests) -> None:
        """Take the requests of ``earlier`` (an earlier load's) for the targets whose inputs it
        shows unchanged, instead of building them again."""
        self._earlier = earlier

    def requests(self, targets: Iterable[Target]) -> list[RenderRequest]:
        """The request of each of ``targets``; none of their applications renders charts."""
        applications, profiles, values_of = self._applications, self._profiles, self._values
        earlier, self._earlier = self._earlier, None  # used once: the requests built now replace it
        built = []
        for target in targets:
            app_name, cluster_name, namespace, selection = (
                target.application,
                target.cluster,
                target.namespace,
                target.selection,
            )
            app_parts = applications.get(app_name) or self._application(app_name)
            profile = profiles.get((cluster_name, selection)) or self._profile(
                app_parts, cluster_name, selection
            )
            if earlier is not None:
                request = earlier.request(target, app_parts[0], profile)
                if request is not None:
                    built.append(request)
                    continue
            app = app_parts[0]
            values = values_of.get((app_name, cluster_name if cluster_name in app_parts[1] else ""))
            if values is None:
                values = self._layering(app, cluster_name)
            descriptor = descriptor_text(
                app_parts[2],
                profile[2],
                json_text(namespace),
                app_parts[3],
                profile[3],
                json_text(selection),
                "",
                app_parts[6],
                profile[5],
                app_parts[7],
                values[1],
            ).encode()
            built.append(
                _planned_request(
                    {
                        "app": app.app_yaml,
                        "cluster_profile": profile[0],
                        "package": app.package_yaml,
                        "values": values[0],
                        "sets": (),
                        "namespace": namespace,
                        "selection": selection,
                        "app_source": app_parts[4],
                        "cluster_profile_source": profile[4],
                        "package_source": app_parts[5],
                        "resolved_profile": profile[1],
                        "charts": (),
                        "helm_version": "",
                        "_digests": self._digests.get((app_name, profile[2]))
                        or self._known_digests(app, profile[2]),
                        "descriptor_bytes": descriptor,
                        "digest": sha256(descriptor).hexdigest(),
                    }
                )
            )
        return built

    def _application(self, name: str) -> tuple:
        app = self.snapshot.application(name)
        sources = (f"{name}/app.yaml", f"{name}/kurel.yaml")
        parts = (
            app,
            app.cluster_value_names,
            app.document_digests["app"],
            json_text(app.document_digests.get("package")),
            *sources,
            *map(json_text, sources),
        )
        self._applications[name] = parts
        return parts

    def _profile(self, app_parts: tuple, cluster_name: str, selection: str) -> tuple:
        snapshot = self.snapshot
        cluster = snapshot.cluster(cluster_name)
        resolved = snapshot.resolved_for(cluster_name, parse_selection(selection) if selection else None)
        profiled = resolved.selected is not None
        source = f"{cluster_name}.yaml"
        parts = (
            resolved.effective,
            resolved.document if profiled else None,
            cluster.digest
            if resolved.effective == cluster.profile_yaml
            else digest_bytes(resolved.effective),
            digest_bytes(resolved.document) if profiled else None,
            source,
            json_text(source),
        )
        self._profiles[(cluster_name, selection)] = parts
        return parts

    def _layering(self, app: ApplicationEntry, cluster_name: str) -> tuple[tuple[ValuesLayer, ...], str]:
        layers = app.values_layers(cluster_name)
        values = (layers, values_text(layers))
        self._values[(app.name, cluster_name if cluster_name in app.cluster_value_names else "")] = values
        return values

    def _known_digests(self, app: ApplicationEntry, profile_digest: str) -> dict[str, str]:
        digests = {**app.document_digests, "clusterProfile": profile_digest}
        self._digests[(app.name, profile_digest)] = digests
        return digests


class _EarlierRequests:
    """The requests an earlier snapshot built, for a later load of the same catalog: a target's
    request is the same object when its application is the very entry the earlier snapshot read
    (the farm daemon keeps an unchanged folder's, ``farm.catalog.reuse``), its ClusterProfile
    under its selection resolves to the same documents (by digest) and its namespace and
    selection are the same. Those are every input of a request without charts."""

    def __init__(self, snapshot: CatalogSnapshot) -> None:
        parts = snapshot._parts  # noqa: SLF001 - the earlier snapshot's own, already computed
        self._applications = {name: entry[0] for name, entry in parts._applications.items()}  # noqa: SLF001
        self._profiles = {key: profile[2:4] for key, profile in parts._profiles.items()}  # noqa: SLF001
        self._snapshot: CatalogSnapshot | None = snapshot
        self._requests: dict[tuple[str, str, str | None, str], RenderRequest] = {}

    def request(self, target: Target, app: ApplicationEntry, profile: tuple) -> RenderRequest | None:
        """The earlier request of ``target``, when its inputs are unchanged; None otherwise."""
        if self._applications.get(target.application) is not app:
            return None
        if self._profiles.get((target.cluster, target.selection)) != profile[2:4]:
            return None
        if self._snapshot is not None:  # indexed at the first target whose inputs are unchanged
            self._requests = {
                (t.target.application, t.target.cluster, t.target.namespace, t.target.selection): t.request
                for t in self._snapshot.target_requests
            }
            self._snapshot = None
        return self._requests.get((target.application, target.cluster, target.namespace, target.selection))


@dataclass(frozen=True)
class CatalogSnapshot:
    name: str
    fleet_yaml: bytes
    applications: tuple[ApplicationEntry, ...]
    clusters: tuple[ClusterEntry, ...]
    targets: tuple[Target, ...]
    problems: tuple[Problem, ...] = ()
    profile_documents: tuple[tuple[str, bytes], ...] = field(default_factory=tuple)
    warnings: tuple[str, ...] = ()  # e.g. a target rule that matches nothing (not in the digest)
    helm_version: str = ""  # ``helm version --short`` of the load, when an application has charts
    # targets the loader refused on their own (a selection naming an undeclared profile or value):
    # each fails in the run with its problem (not in the digest, like the warnings)
    refused: tuple[tuple[Target, Problem], ...] = ()

    @cached_property
    def _applications(self) -> dict[str, ApplicationEntry]:
        return {entry.name: entry for entry in self.applications}

    @cached_property
    def _clusters(self) -> dict[str, ClusterEntry]:
        return {entry.name: entry for entry in self.clusters}

    def application(self, name: str) -> ApplicationEntry:
        try:
            return self._applications[name]
        except KeyError:
            raise KeyError(f"application {name!r} is not in catalog {self.name!r}") from None

    def cluster(self, name: str) -> ClusterEntry:
        try:
            return self._clusters[name]
        except KeyError:
            raise KeyError(f"ClusterProfile {name!r} is not in catalog {self.name!r}") from None

    def problem_of(self, target: Target) -> Problem | None:
        """Why the loader refused the application or ClusterProfile of ``target``, if it did."""
        return self.application(target.application).problem or self.cluster(target.cluster).problem

    @cached_property
    def has_problems(self) -> bool:
        """Whether the loader refused an application or a ClusterProfile (``problem_of`` answers
        None for every target otherwise)."""
        return any(app.problem for app in self.applications) or any(c.problem for c in self.clusters)

    @cached_property
    def declarations(self) -> dict[str, Declaration]:
        """ClusterProfile name → its declaration (the loader already checked them)."""
        parsed = (parse_declaration(data, source) for source, data in self.profile_documents)
        return {declaration.cluster_profile: declaration for declaration in parsed}

    def subjects(self) -> list[tuple[str, str, str]]:
        """Every qualification subject: (cluster, profile, value) per declared value, and
        (cluster, "", "") for a ClusterProfile without a declaration."""
        subjects = []
        for cluster in self.clusters:
            declaration = self.declarations.get(cluster.name)
            if declaration is None:
                subjects.append((cluster.name, "", ""))
            else:
                subjects += [(cluster.name, declaration.name, v.name) for v in declaration.values]
        return subjects

    @cached_property
    def _resolved(self) -> dict[tuple[str, Selection | None], ResolvedClusterProfile]:
        return {}

    def resolved_for(self, cluster: str, selection: Selection | None) -> ResolvedClusterProfile:
        """The resolved ClusterProfile of ``cluster`` under ``selection`` (None: the default),
        resolved once per snapshot however many targets share it. Raises ``ProfileError`` for an
        unknown profile or value, or a selection without a declaration."""
        resolved = self._resolved.get((cluster, selection))
        if resolved is None:
            entry = self.cluster(cluster)
            if entry.problem is not None:  # never parsed again: its targets fail with the problem
                return ResolvedClusterProfile(entry.profile_yaml, b"", digest_bytes(b""), None, {})
            declaration = self.declarations.get(cluster)
            resolved = resolve(entry.profile_yaml, f"{cluster}.yaml", declaration, selection)
            self._resolved[(cluster, selection)] = resolved
        return resolved

    def subject_requests(self, cluster: str, selection: Selection | None) -> list[TargetRequest]:
        """The requests of every target of ``cluster``, rendered under ``selection``."""
        resolved = self.resolved_for(cluster, selection)
        text = str(resolved.selected) if resolved.selected else ""
        targets = [replace(target, selection=text) for target in self.targets if target.cluster == cluster]
        return [TargetRequest(*entry) for entry in zip(targets, self._requests(targets), strict=True)]

    def request_for(self, target: Target) -> RenderRequest:
        """The one render request of ``target``: every input its render reads."""
        return self._requests([target])[0]

    def _requests(self, targets: Sequence[Target]) -> list[RenderRequest]:
        """The requests of ``targets``, in their order; a target's selection is resolved once per
        snapshot (``resolved_for``)."""
        charted = self._charted
        if not charted:
            return self._parts.requests(targets)
        plain = iter(
            self._parts.requests([target for target in targets if target.application not in charted])
        )
        return [
            self._chart_request(target) if target.application in charted else next(plain)
            for target in targets
        ]

    @cached_property
    def _charted(self) -> frozenset[str]:
        """The applications that render charts."""
        return frozenset(app.name for app in self.applications if app.charts)

    def _chart_request(self, target: Target) -> RenderRequest:
        """The request of a target whose application renders charts (rare): its descriptor is
        written whole (``json.dumps``)."""
        app = self.application(target.application)
        cluster = self.cluster(target.cluster)
        resolved = self.resolved_for(
            target.cluster, parse_selection(target.selection) if target.selection else None
        )
        profile_digest = cluster.digest if resolved.effective == cluster.profile_yaml else None
        return RenderRequest.with_known_digests(
            {**app.document_digests, **({"clusterProfile": profile_digest} if profile_digest else {})},
            **self._request_fields(app, cluster, target, resolved),
            charts=app.charts,
            helm_version=self.helm_version,
        )

    def _request_fields(
        self, app: ApplicationEntry, cluster: ClusterEntry, target: Target, resolved: ResolvedClusterProfile
    ) -> dict:
        return {
            "app": app.app_yaml,
            "cluster_profile": resolved.effective,
            "resolved_profile": resolved.document if resolved.selected is not None else None,
            "package": app.package_yaml,
            "values": app.values_layers(target.cluster),
            "namespace": target.namespace,
            "selection": target.selection,
            "app_source": f"{app.name}/app.yaml",
            "cluster_profile_source": f"{cluster.name}.yaml",
            "package_source": f"{app.name}/kurel.yaml",
        }

    @cached_property
    def _parts(self) -> _DescriptorParts:
        return _DescriptorParts(self)

    def reuse_requests_of(self, earlier: CatalogSnapshot) -> None:
        """Build this snapshot's requests from ``earlier``'s where their inputs are unchanged (an
        earlier load of the same catalog whose requests were built; the farm daemon's, after an
        edit): the requests of the applications and ClusterProfiles not edited are the earlier
        objects. Nothing when this snapshot's requests are built already, or ``earlier``'s not."""
        if "target_requests" in self.__dict__ or "target_requests" not in earlier.__dict__:
            return
        self._parts.reuse(_EarlierRequests(earlier))

    @cached_property
    def target_requests(self) -> tuple[TargetRequest, ...]:
        """Every target with its request, in target order; each application and ClusterProfile
        is hashed once however many targets share it."""
        return tuple(map(TargetRequest, self.targets, self._requests(self.targets)))

    def action_keys(self, version: str) -> list[str]:
        """The action key of each target's request on core ``version``, in target order; computed
        once per version (the farm daemon plans an unchanged catalog again on every re-run)."""
        keys = self._action_keys.get(version)
        if keys is None:
            keys = request_action_keys(version, [entry.request.digest for entry in self.target_requests])
            self._action_keys.clear()  # one version at a time: a core upgrade replaces the process
            self._action_keys[version] = keys
        return keys

    @cached_property
    def _action_keys(self) -> dict[str, list[str]]:
        return {}

    @cached_property
    def request_packs(self) -> dict[str, bytes]:
        """Application → the pack of its targets' requests: a snapshot stores one request blob per
        application, and an application whose targets did not change keeps the blob it had."""
        by_application: dict[str, list[RenderRequest]] = {}
        for entry in self.target_requests:
            by_application.setdefault(entry.target.application, []).append(entry.request)
        return {name: pack_requests(requests) for name, requests in by_application.items()}

    @cached_property
    def request_pack_digests(self) -> dict[str, str]:
        """Application → the digest of its request pack."""
        return {name: digest_bytes(pack) for name, pack in self.request_packs.items()}

    def documents(self) -> list[bytes]:
        """Every document blob of the snapshot (each request names some of them)."""
        blobs = [self.fleet_yaml]
        for app in self.applications:
            blobs += app.documents()
        blobs += [cluster.profile_yaml for cluster in self.clusters]
        blobs += [data for _, data in self.profile_documents]
        return blobs + self.resolved_documents

    @cached_property
    def resolved_documents(self) -> list[bytes]:
        """The effective and the resolved ClusterProfile documents of every declared value, whether a target
        selects it or only its qualification renders it: part of the snapshot, so they stay
        stored (and ``farm gc`` keeps them) while the snapshot does."""
        blobs = set()
        for cluster, name, value in self.subjects():
            if name and self.cluster(cluster).problem is None:
                resolved = self.resolved_for(cluster, Selection(name, value))
                blobs.update((resolved.effective, resolved.document))
        return sorted(blobs)

    def content(self, *, targets: bool = True) -> dict:
        """The manifest's content; without ``targets``, only its documents (no target list and
        no request packs: what a comparison of documents reads, a fraction of the work)."""
        content = {
            "name": self.name,
            "fleet": digest_bytes(self.fleet_yaml),
            "applications": {a.name: a.content() for a in self.applications},
            "clusters": {c.name: c.digest for c in self.clusters},
            "profiles": {name: digest_bytes(data) for name, data in self.profile_documents},
        }
        if targets:
            content["targets"] = [
                [t.target.application, t.target.cluster, t.target.selection, t.request.digest]
                for t in self.target_requests
            ]
            content["requestPacks"] = self.request_pack_digests
        if self.resolved_documents:  # absent when nothing is profiled: those digests never change
            content["resolved"] = sorted(digest_bytes(blob) for blob in self.resolved_documents)
        if self.helm_version:  # absent when no application renders a chart, likewise
            content["helmVersion"] = self.helm_version
        return content

    @cached_property
    def manifest(self) -> bytes:
        """The snapshot's own blob: its content as canonical JSON (documents and requests by digest)."""
        # names, digests and lists of them only: nothing for the canonical check to refuse
        return canonical_json(self.content(), checked=False)

    @cached_property
    def digest(self) -> str:
        return digest_bytes(self.manifest)
