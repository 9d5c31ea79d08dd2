"""What the farm daemon keeps from one command to the next: farm run's storage (while the
settings and the folder are the same) and a heap frozen out of the collector's walks (unfrozen
when the catalog it keeps changes)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from farm.catalog import load_catalog, reuse
from farm.commands import run
from farm.daemon.server import _Heap
from farm.settings import load_settings

from .conftest import make_catalog


def test_farm_run_reuses_its_storage_while_the_settings_and_the_folder_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run, "_kept_storage", run._KeptStorage())
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    settings = load_settings(home=tmp_path / "farm")
    first = run._run_storage(settings)
    assert run._run_storage(load_settings(home=tmp_path / "farm")) is first
    monkeypatch.chdir(tmp_path / "b")  # a relative setting could name another database here
    second = run._run_storage(settings)
    assert second is not first
    assert run._run_storage(load_settings(home=tmp_path / "other")) is not second
    run._kept_storage.storage.close()


def test_without_a_kept_storage_each_farm_run_opens_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run, "_kept_storage", None)
    monkeypatch.chdir(tmp_path)
    settings = load_settings(home=tmp_path / "farm")
    first = run._run_storage(settings)
    assert run._run_storage(settings) is not first


class _Node:
    pass


def test_a_cycle_frozen_after_a_command_is_freed_by_the_daemon_s_next_full_collection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept = reuse.CatalogReuse()
    monkeypatch.setattr(reuse, "_reuse", kept)
    heap = _Heap()
    freed: list[bool] = []
    try:
        node = _Node()
        node.itself = node  # a reference cycle: only the collector frees it
        watch = weakref.ref(node, lambda _: freed.append(True))
        heap.settle()  # after a command: what survives it is frozen
        del node
        kept.changes += heap.FULL_EVERY - 1
        heap.settle()  # frozen objects are not walked
        assert not freed
        kept.changes += 1  # the kept catalog changed FULL_EVERY times: a full collection
        heap.settle()
        assert freed and watch() is None
    finally:
        gc.unfreeze()


def test_a_replaced_catalog_is_freed_at_once_though_the_daemon_froze_it(tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path / "catalog")
    snapshot = load_catalog(catalog.root)
    assert snapshot.target_requests and snapshot.request_pack_digests  # its cached parts built
    watch = weakref.ref(snapshot)
    gc.collect()
    gc.freeze()
    try:
        del snapshot
        assert watch() is None  # no reference cycle: reference counting frees it, frozen or not
    finally:
        gc.unfreeze()
