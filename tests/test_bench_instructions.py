"""bench/instructions.py's reading of callgrind's files: each process counted in its role by its
place in the process tree, and one target's cost as the difference between two sizes."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

_BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench_module() -> ModuleType:
    sys.path.insert(0, str(_BENCH))  # only while importing: bench/ holds a fleet.py and a core.py
    try:
        return importlib.import_module("instructions")
    finally:
        sys.path.remove(str(_BENCH))


bench = _bench_module()

_FORKSERVER = "python -B -c from multiprocessing.forkserver import main; main(3, 5)"


def _process(folder: Path, pid: int, parent: int, command: str, instructions: int | None) -> None:
    (folder / f"run.{pid}.log").write_text(
        f"=={pid}== Callgrind, a call-graph generating cache profiler\n=={pid}== Parent PID: {parent}\n"
    )
    totals = "" if instructions is None else f"totals: {instructions}\n"
    (folder / f"run.{pid}.out").write_text(
        f"# callgrind format\nversion: 1\npid: {pid}\ncmd:  {command}\npart: 1\n\nsummary: 1\n{totals}"
    )


def _run_tree(folder: Path, scale: int) -> None:
    _process(folder, 100, 1, "python -m farm run /catalog --processes 1 --json", 1_000 * scale)
    _process(folder, 101, 100, "python -B -c from multiprocessing.resource_tracker import main;main(3)", 7)
    _process(folder, 102, 100, _FORKSERVER, 500)
    _process(folder, 103, 102, _FORKSERVER, 2_000 * scale)
    _process(folder, 104, 103, _FORKSERVER, 5_000 * scale)


def test_each_process_is_counted_in_the_role_its_place_in_the_tree_gives(tmp_path: Path) -> None:
    _run_tree(tmp_path, 1)
    roles = bench.instructions_by_role(bench.read_counts(tmp_path, "run"))
    assert roles == {"planner": 1_000, "worker": 2_000, "render_child": 5_000}


def test_a_targets_cost_is_the_difference_between_two_sizes_over_the_targets_added(tmp_path: Path) -> None:
    small, large = tmp_path / "small", tmp_path / "large"
    small.mkdir()
    large.mkdir()
    _run_tree(small, 1)
    _run_tree(large, 3)
    roles = bench.per_target(
        bench.instructions_by_role(bench.read_counts(small, "run")),
        bench.instructions_by_role(bench.read_counts(large, "run")),
        100,
    )
    assert roles == {"planner": 20.0, "worker": 40.0, "render_child": 100.0}


def test_a_process_killed_before_callgrind_wrote_its_totals_stops_the_bench_naming_its_file(
    tmp_path: Path,
) -> None:
    _run_tree(tmp_path, 1)
    _process(tmp_path, 104, 103, _FORKSERVER, None)
    with pytest.raises(bench.BenchError, match=r"run\.104\.out: no totals line"):
        bench.read_counts(tmp_path, "run")


def test_a_tree_without_a_farm_run_at_its_root_stops_the_bench(tmp_path: Path) -> None:
    _process(tmp_path, 100, 1, "python -m farm plan /catalog", 10)
    with pytest.raises(bench.BenchError, match="expected one farm run process at the root"):
        bench.instructions_by_role(bench.read_counts(tmp_path, "run"))
