"""A worker keeps SQLite's temporary storage in memory: recording a job creates no file.

SQLite moved a job's statement journal to a new temporary file once it grew past 64 KiB (about
half of the bench's jobs of 20 targets did), and creating a file cost 25 to 950 µs of system CPU
on a loaded filesystem. The temporary files are removed as soon as they are opened, so the test
watches their folder (``SQLITE_TMPDIR``) with inotify for files created in it.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

_IN_CREATE = 0x100
_EVENT = struct.Struct("iIII")  # struct inotify_event, before its name
_BENCH = Path(__file__).resolve().parents[2] / "bench" / "fleet.py"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="watches a folder with inotify")


def _bench_catalog_writer() -> ModuleType:
    """``bench/fleet.py``: its synthetic applications' outputs and evidence are the size whose
    job records made SQLite spill (the tests' small applications never did)."""
    spec = importlib.util.spec_from_file_location("farm_bench_fleet_catalog", _BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@contextmanager
def _files_created_in(folder: Path) -> Iterator[list[int]]:
    """Counts the files created in ``folder`` during the block (the list's one item, set at its end)."""
    libc = ctypes.CDLL(None, use_errno=True)
    watch = libc.inotify_init1(os.O_NONBLOCK)
    assert watch >= 0, os.strerror(ctypes.get_errno())
    try:
        assert libc.inotify_add_watch(watch, str(folder).encode(), _IN_CREATE) >= 0
        counted = [0]
        yield counted
        try:
            while data := os.read(watch, 65536):
                offset = 0
                while offset < len(data):
                    *_, name_length = _EVENT.unpack_from(data, offset)
                    offset += _EVENT.size + name_length
                    counted[0] += 1
        except BlockingIOError:
            pass
    finally:
        os.close(watch)


def test_a_local_run_s_workers_record_their_jobs_without_creating_a_temporary_file(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    _bench_catalog_writer().write_catalog(catalog, 1000, 20)  # 50 jobs of 20 targets
    temporary = tmp_path / "sqlite-temporary"
    temporary.mkdir()
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env |= {"FARM_HOME": str(tmp_path / "home"), "FARM_DAEMON": "off", "SQLITE_TMPDIR": str(temporary)}
    with _files_created_in(temporary) as created:
        result = subprocess.run(
            [sys.executable, "-m", "farm", "run", str(catalog), "--json", "--processes", "2"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 0, result.stderr
    assert '"succeeded": 1000' in result.stdout
    assert created == [0]
