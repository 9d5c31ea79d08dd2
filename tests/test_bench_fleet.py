"""bench/fleet.py's view of a process tree: the descendants its memory sampler and CPU figures
read, found through the kernel's children lists as through the whole process table."""

from __future__ import annotations

import importlib
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
    sys.path.insert(0, str(_BENCH))  # only while importing: bench/ holds a fleet.py and a core.py
    try:
        return importlib.import_module("fleet")
    finally:
        sys.path.remove(str(_BENCH))


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
