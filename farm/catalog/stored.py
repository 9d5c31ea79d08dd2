"""A catalog snapshot read back from storage, exactly as a run recorded it.

A snapshot's manifest names every document by digest: fleet.yaml, each application's app.yaml,
kurel.yaml, values.yaml and values/<cluster>.yaml, each ClusterProfile and each profile document.
``load_stored_catalog`` writes those documents back into a private scratch folder laid out as
fleet.yaml says and loads it with the same loader as a live folder, so every check and every
request is the same; then it refuses the result unless its digest is the stored snapshot's. A
worker that qualifies a subject renders what the run recorded, never what a folder holds today.
Charts too: a vendored chart is unpacked back into its application folder (packing is
deterministic, so it packs to the same archive), and a chart fetched at planning is read from its
stored blob (``StoredCharts``), never from its repository.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from farm.build.charts import ChartFetchError, unpack_chart
from farm.catalog.charts import StoredCharts
from farm.catalog.fleet import parse_fleet
from farm.catalog.loader import MAX_FILE_BYTES, CatalogError, cluster_entry, load_catalog
from farm.catalog.snapshot import CatalogSnapshot, digest_bytes, manifest_head
from farm.profiles import ProfileError

Fetch = Callable[[str], bytes]


class StoredCatalogError(CatalogError):
    """A stored snapshot that cannot be read back as it was recorded."""


def load_stored_catalog(
    fetch: Fetch, snapshot_digest: str, manifest_digest: str, *, max_file_bytes: int = MAX_FILE_BYTES
) -> CatalogSnapshot:
    """The snapshot ``snapshot_digest``, read back from its manifest blob ``manifest_digest``
    through ``fetch(digest) -> bytes`` (which verifies what it returns)."""
    manifest = json.loads(fetch(manifest_digest))
    with tempfile.TemporaryDirectory(prefix="farm-snapshot-") as scratch:
        root = Path(scratch)
        _write_catalog(root, manifest, fetch)
        snapshot = load_catalog(root, max_file_bytes=max_file_bytes, charts=_stored_charts(manifest, fetch))
    if snapshot.digest != snapshot_digest:
        raise StoredCatalogError(
            [f"catalog snapshot {snapshot_digest}: read back from storage it is {snapshot.digest}"]
        )
    return snapshot


def load_stored_profiles(fetch: Fetch, snapshot_digest: str, manifest_digest: str) -> CatalogSnapshot:
    """The ClusterProfiles and profile declarations of snapshot ``snapshot_digest``, read from its
    manifest blob and checked as the loader checks them, without its applications or targets:
    what a qualification state is derived from (``farm.qualification.service.today_for``), in
    memory bounded by the clusters, not by the targets. It is not the whole snapshot (its own
    digest is not ``snapshot_digest``); the manifest is: it must hash to ``snapshot_digest``."""
    data = fetch(manifest_digest)
    if digest_bytes(data) != snapshot_digest:
        raise StoredCatalogError(
            [f"catalog snapshot {snapshot_digest}: its manifest {manifest_digest} is another"]
        )
    manifest = manifest_head(data)
    del data
    name, clusters, profiles = manifest["name"], manifest["clusters"], manifest["profiles"]
    snapshot = CatalogSnapshot(
        name=name,
        fleet_yaml=b"",
        applications=(),
        clusters=tuple(
            cluster_entry(fetch(digest), f"{cluster}.yaml", cluster)[0]
            for cluster, digest in sorted(clusters.items())
        ),
        targets=(),
        profile_documents=tuple((source, fetch(digest)) for source, digest in sorted(profiles.items())),
    )
    try:
        snapshot.declarations  # noqa: B018 - parsed here, so a bad one is this error, not a later one
    except ProfileError as error:
        raise StoredCatalogError([f"catalog snapshot {snapshot_digest}: {error}"]) from None
    return snapshot


def _stored_charts(manifest: dict, fetch: Fetch) -> StoredCharts:
    digests = {
        (chart["repository"], chart["chart"], chart["version"]): chart["digest"]
        for entry in manifest["applications"].values()
        for chart in entry.get("charts", ())
        if not chart["vendored"]
    }
    return StoredCharts(fetch, manifest.get("helmVersion", ""), digests)


def _write_catalog(root: Path, manifest: dict, fetch: Fetch) -> None:
    fleet_yaml = fetch(manifest["fleet"])
    fleet, problems = parse_fleet(fleet_yaml, "fleet.yaml")
    if fleet is None:
        raise StoredCatalogError(problems)
    _write(root, "fleet.yaml", fleet_yaml)
    applications, clusters = fleet.spec.applications, fleet.spec.clusters
    (root / applications).mkdir(parents=True, exist_ok=True)
    (root / clusters).mkdir(parents=True, exist_ok=True)
    for name, entry in manifest["applications"].items():
        folder = f"{applications}/{name}"
        _write(root, f"{folder}/app.yaml", fetch(entry["app"]))
        for field, file in (("package", "kurel.yaml"), ("values", "values.yaml")):
            if entry.get(field):
                _write(root, f"{folder}/{file}", fetch(entry[field]))
        for cluster, digest in entry.get("clusterValues", {}).items():
            _write(root, f"{folder}/values/{cluster}.yaml", fetch(digest))
        for chart in entry.get("charts", ()):
            if chart["vendored"]:
                try:
                    files = unpack_chart(fetch(chart["digest"]))
                except (ChartFetchError, OSError, ValueError) as error:
                    raise StoredCatalogError([f"stored chart {chart['vendored']}: {error}"]) from None
                for relative, data in files:
                    _write(root, f"{applications}/{chart['vendored']}/{relative}", data)
    for name, digest in manifest["clusters"].items():
        _write(root, f"{clusters}/{name}.yaml", fetch(digest))
    if fleet.spec.profiles:
        (root / fleet.spec.profiles).mkdir(parents=True, exist_ok=True)
    for source, digest in manifest.get("profiles", {}).items():
        _write(root, source, fetch(digest))


def _write(root: Path, relative: str, data: bytes) -> None:
    """Write one document under ``root``; a name that would leave it is refused."""
    parts = PurePosixPath(relative).parts
    if PurePosixPath(relative).is_absolute() or ".." in parts:
        raise StoredCatalogError([f"stored catalog names {relative!r}, which leaves the catalog"])
    path = root.joinpath(*parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
