"""bench/fleet.py's view of a process tree: the descendants its memory sampler and CPU figures
read, found through the kernel's children lists as through the whole process table."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

_BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench_module() -> ModuleType:
    """``bench/fleet.py``, by its path: the name ``fleet`` is the tests' ``fleet`` package."""
    spec = importlib.util.spec_from_file_location("farm_bench_fleet", _BENCH / "fleet.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


bench = _bench_module()


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads Linux's /proc")
def test_the_bench_finds_every_descendant_of_a_process_tree_and_nothing_else() -> None:
    # a shell, two children, and a grandchild under a subshell
    tree = subprocess.Popen(
        ["bash", "-c", "sleep 30 & sleep 30 & (sleep 30 & wait) & wait"], start_new_session=True
    )
    try:
        deadline = time.monotonic() + 10
        while len(bench._tree_from_table((tree.pid,))) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        from_table = sorted(bench._tree_from_table((tree.pid,)))
        assert len(from_table) == 5, from_table
        assert sorted(bench._tree((tree.pid,))) == from_table
        assert tree.pid in from_table
    finally:
        os.killpg(tree.pid, signal.SIGKILL)  # the whole session, the grandchild with it
        tree.wait()


def test_the_file_create_probe_reports_a_cost_per_file_and_leaves_the_folder_as_it_found_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "kept").write_text("the bench's own file")
    cost = bench.file_create_cpu_us(tmp_path)
    assert cost > 0  # a create is never free: a probe that timed nothing would say 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["kept"]
