"""A resident process reuses a loaded catalog while none of its files changed, and reads it again
after any change a walk of its folder can see."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from farm.catalog import CatalogError
from farm.catalog.loader import load_catalog
from farm.catalog.reuse import CatalogReuse, tree_state

from .conftest import Catalog, make_catalog


def _age(root: Path, seconds: float = 60.0) -> None:
    """Every entry modified ``seconds`` ago: older than the racy window, as a catalog edited a
    while before the run is."""
    past = time.time() - seconds
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            os.utime(os.path.join(folder, name), (past, past))
    os.utime(root, (past, past))


def _settled() -> None:
    """Wait until the last change is older than the racy window (setting the modification time
    sets the change time to now, and only the clock moves that on)."""
    time.sleep(1.1)


@pytest.fixture
def aged_catalog(tmp_path: Path) -> Catalog:
    catalog = make_catalog(tmp_path / "catalog")
    _age(catalog.root)
    _settled()
    return catalog


def test_an_unchanged_catalog_is_not_read_again(aged_catalog: Catalog) -> None:
    reuse = CatalogReuse()
    first = reuse.load(aged_catalog.root)
    assert reuse.load(aged_catalog.root) is first
    assert reuse.load(aged_catalog.root / "fleet.yaml") is first  # the same catalog, named by its fleet.yaml


def test_another_file_of_a_kept_catalog_is_no_catalog_and_not_the_kept_one(aged_catalog: Catalog) -> None:
    # the daemon answered "farm run catalog/notes.yaml" with the catalog kept from "farm run catalog"
    reuse = CatalogReuse()
    reuse.load(aged_catalog.root)
    other = aged_catalog.root / "notes.yaml"
    other.write_text("note: 1\n")
    with pytest.raises(CatalogError) as refused:
        reuse.load(other)
    assert refused.value.problems == [
        f"{other}: not a catalog: give the catalog's folder (the one holding fleet.yaml) or its fleet.yaml"
    ]


def test_an_edit_that_keeps_size_and_modification_time_is_read_again(aged_catalog: Catalog) -> None:
    reuse = CatalogReuse()
    first = reuse.load(aged_catalog.root)
    app = aged_catalog.root / "applications" / "app-1" / "app.yaml"
    before = app.stat()
    text = app.read_text()
    edited = text.replace("ghcr.io/example/app:v1.0.0", "ghcr.io/example/app:v1.0.9")
    assert len(edited) == len(text)
    app.write_text(edited)
    os.utime(app, ns=(before.st_atime_ns, before.st_mtime_ns))  # only the change time tells
    second = reuse.load(aged_catalog.root)
    assert second is not first
    assert second.digest != first.digest
    assert b"v1.0.9" in second.application("app-1").app_yaml


def test_an_added_application_is_seen(aged_catalog: Catalog) -> None:
    reuse = CatalogReuse()
    first = reuse.load(aged_catalog.root)
    aged_catalog.write_app("app-7")
    second = reuse.load(aged_catalog.root)
    assert len(second.targets) == len(first.targets) + 3


def test_a_removed_cluster_is_seen(aged_catalog: Catalog) -> None:
    reuse = CatalogReuse()
    first = reuse.load(aged_catalog.root)
    (aged_catalog.root / "clusters" / "cluster-b.yaml").unlink()
    second = reuse.load(aged_catalog.root)
    assert {target.cluster for target in second.targets} == {"cluster-a", "cluster-c"}
    assert second is not first


def test_a_catalog_changed_just_before_it_was_loaded_is_read_again_next_time(tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path / "catalog")  # written now: inside the racy window
    reuse = CatalogReuse()
    first = reuse.load(catalog.root)
    assert reuse.load(catalog.root) is not first


def test_a_catalog_holding_a_symbolic_link_is_never_reused(aged_catalog: Catalog, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not part of the catalog\n")
    (aged_catalog.root / "notes").symlink_to(outside)
    assert tree_state(aged_catalog.root) is None
    reuse = CatalogReuse()
    first = reuse.load(aged_catalog.root)
    assert reuse.load(aged_catalog.root) is not first


def test_another_file_size_limit_reads_the_catalog_again(aged_catalog: Catalog) -> None:
    reuse = CatalogReuse()
    first = reuse.load(aged_catalog.root, max_file_bytes=1 << 20)
    assert reuse.load(aged_catalog.root, max_file_bytes=1 << 21) is not first


def test_the_kept_catalog_counts_a_change_only_when_it_is_replaced(aged_catalog: Catalog) -> None:
    """The farm daemon unfreezes its heap when the catalog it keeps changes (``changes``), and
    only then."""
    reuse = CatalogReuse()
    reuse.load(aged_catalog.root)
    assert reuse.changes == 1
    reuse.load(aged_catalog.root)
    assert reuse.changes == 1
    app = aged_catalog.root / "applications" / "app-1" / "app.yaml"
    app.write_text(app.read_text().replace("ghcr.io/example/app:v1.0.0", "ghcr.io/example/app:v1.0.9"))
    _age(aged_catalog.root)
    _settled()
    reuse.load(aged_catalog.root)
    assert reuse.changes == 3  # the old one dropped, the new one kept


def _entries(snapshot) -> dict[str, object]:
    return {app.name: app for app in snapshot.applications}


def test_a_changed_catalog_reads_again_only_the_application_folders_that_changed(
    aged_catalog: Catalog,
) -> None:
    reuse = CatalogReuse()
    first = _entries(reuse.load(aged_catalog.root))
    aged_catalog.write_app("app-1", image="ghcr.io/example/app:v2.0.0")
    second = reuse.load(aged_catalog.root)
    entries = _entries(second)
    assert [name for name in entries if entries[name] is first[name]] == ["app-0", "app-2", "app-3"]
    assert b"v2.0.0" in second.application("app-1").app_yaml
    fresh = load_catalog(aged_catalog.root)
    assert (second.digest, second.warnings, second.problems) == (fresh.digest, fresh.warnings, fresh.problems)


def test_a_file_added_to_an_application_folder_reads_that_application_again_and_keeps_its_warning(
    aged_catalog: Catalog,
) -> None:
    reuse = CatalogReuse()
    first = _entries(reuse.load(aged_catalog.root))
    (aged_catalog.root / "applications" / "app-2" / "notes.yml").write_text("a: 1\n")
    _age(aged_catalog.root)
    _settled()
    second = reuse.load(aged_catalog.root)
    assert _entries(second)["app-2"] is not first["app-2"]
    assert any("app-2/notes.yml: not read" in warning for warning in second.warnings)
    aged_catalog.write_app("app-0", image="ghcr.io/example/app:v2.0.0")  # app-2 answered from the last load
    third = reuse.load(aged_catalog.root)
    assert _entries(third)["app-2"] is _entries(second)["app-2"]
    assert third.warnings == load_catalog(aged_catalog.root).warnings


def test_an_application_changed_just_before_the_load_is_read_again_by_the_next(aged_catalog: Catalog) -> None:
    reuse = CatalogReuse()
    reuse.load(aged_catalog.root)
    aged_catalog.write_app("app-1", image="ghcr.io/example/app:v2.0.0")  # now: inside the racy window
    second = _entries(reuse.load(aged_catalog.root))
    third = _entries(reuse.load(aged_catalog.root))
    assert third["app-1"] is not second["app-1"]
    assert third["app-2"] is second["app-2"]


def test_a_symbolic_link_in_an_application_folder_reads_every_application_again(
    aged_catalog: Catalog, tmp_path: Path
) -> None:
    reuse = CatalogReuse()
    first = _entries(reuse.load(aged_catalog.root))
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text("a: 1\n")
    (aged_catalog.root / "applications" / "app-3" / "linked.yaml").symlink_to(outside)
    second = _entries(reuse.load(aged_catalog.root))
    assert not any(second[name] is first[name] for name in first)


def _requests(snapshot) -> dict[tuple[str, str, str, str], object]:
    return {
        (t.target.application, t.target.cluster, t.target.namespace, t.target.selection): t.request
        for t in snapshot.target_requests
    }


def _rebuilt(first: dict[tuple[str, str, str, str], object], snapshot) -> set[tuple[str, str, str, str]]:
    """The targets of ``snapshot`` whose request is not the one ``first`` held."""
    return {key for key, request in _requests(snapshot).items() if request is not first.get(key)}


def _same_as_a_fresh_load(snapshot, root: Path) -> None:
    fresh = load_catalog(root)
    assert snapshot.digest == fresh.digest
    assert snapshot.request_pack_digests == fresh.request_pack_digests
    assert [(t.target, t.request.descriptor_bytes, t.request.digest) for t in snapshot.target_requests] == [
        (t.target, t.request.descriptor_bytes, t.request.digest) for t in fresh.target_requests
    ]


def test_an_edited_application_builds_only_its_own_targets_requests_again(aged_catalog: Catalog) -> None:
    reuse = CatalogReuse()
    first = _requests(reuse.load(aged_catalog.root))
    aged_catalog.write_app("app-1", image="ghcr.io/example/app:v2.0.0")
    second = reuse.load(aged_catalog.root)
    rebuilt = _rebuilt(first, second)
    assert rebuilt == {key for key in first if key[0] == "app-1"}
    _same_as_a_fresh_load(second, aged_catalog.root)


def test_an_edited_cluster_profile_builds_its_targets_requests_again(aged_catalog: Catalog) -> None:
    reuse = CatalogReuse()
    first = _requests(reuse.load(aged_catalog.root))
    aged_catalog.write_cluster("cluster-b", ingress_class="traefik")
    second = reuse.load(aged_catalog.root)
    rebuilt = _rebuilt(first, second)
    assert rebuilt == {key for key in first if key[1] == "cluster-b"}
    _same_as_a_fresh_load(second, aged_catalog.root)


def test_an_edited_profile_value_builds_again_the_requests_of_the_targets_that_select_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "fleet"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "fleet", root)
    _age(root)
    _settled()
    reuse = CatalogReuse()
    first = _requests(reuse.load(root))
    profile = root / "profiles" / "prod-nginx-ingress.yaml"
    profile.write_text(
        profile.read_text().replace("ingressClassName: nginx-internal}", "ingressClassName: private}")
    )
    second = reuse.load(root)
    rebuilt = _rebuilt(first, second)
    assert rebuilt == {key for key in first if key[1] == "prod-nginx" and key[3] == "ingress-class=internal"}
    _same_as_a_fresh_load(second, root)
