"""Reusing a loaded catalog while none of its files changed: the farm daemon's re-runs.

A resident process (``farm daemon``) keeps the last snapshot it loaded with the state of every
entry under the catalog folder: path, kind, inode, size, modification and change times (as git's
index keeps them). The next load reuses the snapshot, with everything it computed (document and
request digests, request packs, its own digest), when a walk of the folder finds the same state,
and reads the catalog again otherwise. Adding, removing, renaming or editing a file changes the
state: an edit changes its change time even when the size and modification time are put back.

Two cases are never reused, since a walk cannot vouch for them: a catalog holding a symbolic link
anywhere (the loader refuses linked files, but a linked folder would be read through), and a
catalog with an entry changed less than ``RACY_SECONDS`` before it was loaded (a second edit in
the same timestamp tick could keep every field of the state: git calls that a racy entry).
Nor is a catalog with a chart fetched from a repository: the repository can re-publish it under the
same version while the folder stays as it was, so each load fetches it again (``farm.catalog.charts``).

A changed catalog is read again, but not every file of it: an application folder whose entries all
have the state they had at the last load (none of them racy then) keeps the application read then,
its documents already checked (``read_application`` reads nothing outside its folder). Editing one
application of a thousand re-reads that one; the rest of the snapshot (ClusterProfiles, targets,
requests, digests) is computed again.
"""

from __future__ import annotations

import bisect
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from farm.catalog.loader import MAX_FILE_BYTES, load_catalog, read_application
from farm.catalog.snapshot import ApplicationEntry, CatalogSnapshot

RACY_SECONDS = 1.0

TreeState = tuple[tuple[str, int, int, int, int, int], ...]


@dataclass(frozen=True)
class _Loaded:
    key: tuple[str, int]
    state: TreeState
    snapshot: CatalogSnapshot


@dataclass(frozen=True)
class _ReadApplication:
    state: TreeState  # of the folder and every entry under it
    entry: ApplicationEntry
    warnings: tuple[str, ...]


@dataclass
class _ApplicationReads:
    """The application folders of one load: each answered from the last load's read of it when its
    entries are unchanged, read otherwise (an ``ApplicationReader``)."""

    state: TreeState  # the catalog's, walked before the load
    kept: dict[str, _ReadApplication]  # the last load's, by folder (relative to the catalog root)
    loading_ns: int
    read: dict[str, _ReadApplication] = field(default_factory=dict)  # this load's, to keep

    def __call__(self, folder: Path, root: Path, limit: int, warnings: list[str]) -> ApplicationEntry:
        relative = os.fspath(folder.relative_to(root))
        state = _folder_state(self.state, relative)
        kept = self.kept.get(relative)
        if kept is not None and kept.state == state:
            warnings += kept.warnings
            self.read[relative] = kept
            return kept.entry
        own: list[str] = []
        entry = read_application(folder, root, limit, own)
        warnings += own
        if state and not _racy(state, self.loading_ns):
            self.read[relative] = _ReadApplication(state, entry, tuple(own))
        return entry


class CatalogReuse:
    """The last catalog loaded, reused while its folder's state is unchanged; and its applications,
    each reused while its own folder's state is unchanged."""

    def __init__(self) -> None:
        self._last: _Loaded | None = None
        self._applications: tuple[tuple[str, int], dict[str, _ReadApplication]] | None = None
        self.changes = 0  # how many times the snapshot kept was dropped or replaced

    def load(self, path: str | Path, *, max_file_bytes: int = MAX_FILE_BYTES) -> CatalogSnapshot:
        root = _catalog_root(Path(path))
        key = (str(root.resolve()), max_file_bytes)
        state = tree_state(root)
        last = self._last
        if state is not None and last is not None and last.key == key and last.state == state:
            return last.snapshot
        if last is not None:
            self._last = None
            self.changes += 1
        loading = time.time_ns()
        kept = self._applications[1] if self._applications and self._applications[0] == key else {}
        self._applications = None
        if state is None:  # a symbolic link somewhere: nothing is kept, nothing reused
            return load_catalog(path, max_file_bytes=max_file_bytes)
        reads = _ApplicationReads(state, kept, loading)
        snapshot = load_catalog(path, max_file_bytes=max_file_bytes, applications=reads)
        if tree_state(root) != state:  # changed while it was read: what was read may be either
            return snapshot
        if last is not None and last.key == key:
            snapshot.reuse_requests_of(last.snapshot)
        self._applications = (key, reads.read)
        fetched = any(not chart.vendored for app in snapshot.applications for chart in app.charts)
        if not _racy(state, loading) and not fetched:
            self._last = _Loaded(key, state, snapshot)
            self.changes += 1
        return snapshot


def tree_state(root: Path) -> TreeState | None:
    """The state of every entry under ``root`` (and of ``root``), sorted by path; None when the
    folder holds a symbolic link or cannot be walked."""
    try:
        root_state = _entry_state(root, ".")
        if root_state is None:
            return None
        entries = [root_state]
        folders = [(os.fspath(root), "")]
        while folders:
            folder, prefix = folders.pop()
            with os.scandir(folder) as scanned:
                for entry in scanned:
                    info = entry.stat(follow_symlinks=False)  # one lstat, as os.walk then lstat did
                    if stat.S_ISLNK(info.st_mode):
                        return None
                    relative = prefix + entry.name
                    entries.append(_state(relative, info))
                    if stat.S_ISDIR(info.st_mode):
                        folders.append((entry.path, relative + os.sep))
    except OSError:
        return None
    return tuple(sorted(entries))


def _folder_state(state: TreeState, relative: str) -> TreeState:
    """The entries of ``state`` that are the folder ``relative`` or under it (empty when it has
    none): a folder's own entry, then the range of the sorted paths it prefixes."""
    own = bisect.bisect_left(state, (relative,))
    entries = list(state[own : own + 1]) if own < len(state) and state[own][0] == relative else []
    prefix = relative + os.sep
    index = bisect.bisect_left(state, (prefix,))
    while index < len(state) and state[index][0].startswith(prefix):
        entries.append(state[index])
        index += 1
    return tuple(entries)


def _entry_state(path: str | Path, relative: str) -> tuple[str, int, int, int, int, int] | None:
    info = os.lstat(path)
    return None if stat.S_ISLNK(info.st_mode) else _state(relative, info)


def _state(relative: str, info: os.stat_result) -> tuple[str, int, int, int, int, int]:
    return relative, info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _racy(state: TreeState, loading_ns: int) -> bool:
    newest = max(max(entry[4], entry[5]) for entry in state)
    return newest >= loading_ns - int(RACY_SECONDS * 1e9)


def _catalog_root(path: Path) -> Path:
    """The folder of the catalog at ``path`` (a folder holding fleet.yaml, or the fleet.yaml);
    another file is no catalog (``load_catalog`` says so), never its folder's kept one."""
    return path.parent if path.is_file() and path.name == "fleet.yaml" else path


_reuse: CatalogReuse | None = None


def keep_loaded_catalogs() -> None:
    """Make ``load_catalog_reusing`` reuse unchanged catalogs in this process (the farm daemon)."""
    global _reuse
    _reuse = CatalogReuse()


def kept_catalog_changes() -> int:
    """How many times the snapshot this process keeps for reuse was dropped or replaced (0 where
    none is kept): the farm daemon unfreezes its heap when this moves."""
    return 0 if _reuse is None else _reuse.changes


def load_catalog_reusing(path: str | Path, *, max_file_bytes: int = MAX_FILE_BYTES) -> CatalogSnapshot:
    """``load_catalog``, reusing the last snapshot of an unchanged catalog where this process
    keeps loaded catalogs (``keep_loaded_catalogs``)."""
    if _reuse is None:
        return load_catalog(path, max_file_bytes=max_file_bytes)
    return _reuse.load(path, max_file_bytes=max_file_bytes)
