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


_BURNING_GRANDCHILD = """
import os, sys, time
if os.fork() == 0:  # the child
    if os.fork() == 0:  # the grandchild: burns CPU, then says so
        end = time.process_time() + 0.4
        while time.process_time() < end:
            pass
        open(sys.argv[1], "w").close()
    time.sleep(30)
    os._exit(0)
time.sleep(30)
"""


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads Linux's /proc")
def test_the_bench_splits_a_tree_s_cpu_by_each_process_s_depth_below_its_root(tmp_path: Path) -> None:
    burnt = tmp_path / "burnt"
    tree = subprocess.Popen([sys.executable, "-c", _BURNING_GRANDCHILD, str(burnt)], start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not burnt.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert burnt.exists(), "the grandchild never finished burning"
        split = bench.process_roles_cpu_seconds(tree.pid, ("root", "child", "grandchild"))
        assert set(split) == {"root", "child", "grandchild"}
        assert sum(split["grandchild"]) >= 0.3, split  # its clock reads are system time
        assert sum(split["root"]) < 0.2 and sum(split["child"]) < 0.2, split
    finally:
        os.killpg(tree.pid, signal.SIGKILL)
        tree.wait()


def test_the_bench_reports_each_role_s_cpu_per_target_and_the_render_children_over_the_core() -> None:
    before = {
        "planner": (1.0, 0.5),
        "worker": (2.0, 1.0),
        "render_child": (3.0, 0.0),
        "forkserver": (0.0, 0.0),
    }
    after = {
        "planner": (1.2, 0.6),
        "worker": (2.4, 1.2),
        "render_child": (4.5, 0.1),
        "forkserver": (0.0, 0.0),
    }
    figures = bench.role_figures("daemon_again", before, after, core_memo_cpu=1.0, n=1000)
    assert figures == {
        "daemon_again_planner_user_ms_per_target": 0.2,
        "daemon_again_planner_system_ms_per_target": 0.1,
        "daemon_again_worker_user_ms_per_target": 0.4,
        "daemon_again_worker_system_ms_per_target": 0.2,
        "daemon_again_render_child_user_ms_per_target": 1.5,
        "daemon_again_render_child_system_ms_per_target": 0.1,
        "daemon_again_render_child_over_core_memo": 1.6,
    }


def test_the_file_create_probe_reports_a_cost_per_file_and_leaves_the_folder_as_it_found_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "kept").write_text("the bench's own file")
    cost = bench.file_create_cpu_us(tmp_path)
    assert cost > 0  # a create is never free: a probe that timed nothing would say 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["kept"]
