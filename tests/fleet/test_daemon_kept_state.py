"""What the farm daemon keeps from one command to the next: farm run's storage (while the
settings and the folder are the same) and a heap frozen out of the collector's walks (unfrozen
when the catalog it keeps changes)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from farm.catalog import reuse
from farm.commands import run
from farm.daemon.server import _Heap
from farm.settings import load_settings


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


def test_a_cycle_frozen_after_a_command_is_freed_once_the_daemon_keeps_another_catalog(
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
        heap.settle()  # the next command's end: frozen objects are not walked
        assert not freed
        kept.changes += 1  # the next command kept another catalog
        heap.settle()
        assert freed and watch() is None
    finally:
        gc.unfreeze()
