"""The immutable catalog snapshot. Its digest covers content only: no paths, no times."""

from __future__ import annotations

from dataclasses import dataclass, field
from hashlib import sha256

from farm.evidence.canonical import canonical_json


def digest_bytes(data: bytes) -> str:
    return sha256(data).hexdigest()


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

    def values_for(self, cluster: str) -> bytes | None:
        """The cluster's values file when the application has one, else the shared values file."""
        return dict(self.cluster_values).get(cluster, self.values_yaml)

    @property
    def digest(self) -> str:
        return digest_bytes(canonical_json(self.content()))

    def content(self) -> dict:
        return {
            "app": digest_bytes(self.app_yaml),
            "package": digest_bytes(self.package_yaml) if self.package_yaml is not None else None,
            "values": digest_bytes(self.values_yaml) if self.values_yaml is not None else None,
            "clusterValues": {name: digest_bytes(data) for name, data in self.cluster_values},
        }


@dataclass(frozen=True)
class ClusterEntry:
    name: str
    profile_yaml: bytes
    problem: Problem | None = None

    @property
    def digest(self) -> str:
        return digest_bytes(self.profile_yaml)


@dataclass(frozen=True, order=True)
class Target:
    application: str
    cluster: str
    namespace: str | None = None


@dataclass(frozen=True)
class CatalogSnapshot:
    name: str
    fleet_yaml: bytes
    applications: tuple[ApplicationEntry, ...]
    clusters: tuple[ClusterEntry, ...]
    targets: tuple[Target, ...]
    problems: tuple[Problem, ...] = ()
    profile_documents: tuple[tuple[str, bytes], ...] = field(default_factory=tuple)

    def application(self, name: str) -> ApplicationEntry:
        for entry in self.applications:
            if entry.name == name:
                return entry
        raise KeyError(f"application {name!r} is not in catalog {self.name!r}")

    def cluster(self, name: str) -> ClusterEntry:
        for entry in self.clusters:
            if entry.name == name:
                return entry
        raise KeyError(f"ClusterProfile {name!r} is not in catalog {self.name!r}")

    def content(self) -> dict:
        return {
            "fleet": digest_bytes(self.fleet_yaml),
            "applications": {a.name: a.content() for a in self.applications},
            "clusters": {c.name: c.digest for c in self.clusters},
            "profiles": {name: digest_bytes(data) for name, data in self.profile_documents},
            "targets": [[t.application, t.cluster, t.namespace] for t in self.targets],
        }

    @property
    def digest(self) -> str:
        return digest_bytes(canonical_json(self.content()))
