#!/usr/bin/env python3
"""Instructions per target: where the farm's CPU goes, in a figure the machine's noise cannot move.

On a shared machine a time moves by a fifth from one run to the next, CPU seconds too (other
guests, caches, frequency). Valgrind's callgrind counts the instructions a process executes
instead: the same code on the same inputs gives the same count, whatever else the machine does.
So this bench runs, under ``valgrind --tool=callgrind --trace-children=yes``:

- ``farm run --processes 1`` (the local executor, embedded SQLite under a temporary FARM_HOME,
  migrated beforehand) on a catalog of ``--small`` targets and on one of ``--large`` targets
  (``bench/fleet.py``'s synthetic applications × ``--clusters`` ClusterProfiles);
- the core alone on the same two catalogs: ``farm.core.render.render`` over every target through
  one ``DocumentMemo``, as a render child renders (``bench/fleet.py``'s memo baseline).

The difference between the two sizes, divided by the targets added, is what one more target
costs: the fixed costs (start-up, imports, migrations, the pool's start) cancel out. Each process
is counted apart, by its place in the process tree (valgrind's log names each one's parent):

- ``planner``: the ``farm run`` process (loading the catalog, planning, the run's rows, the
  executor's driver, completion);
- ``worker``: the pool worker (claiming jobs, fetching and checking requests, signing, storing
  blobs, recording rows);
- ``render_child``: the worker's render child (unpickling requests, rendering, pickling outcomes);

and the figures are each role's instructions per target, the core's per render, the farm's per
target beyond the render (every role's less the core's), and their ratios to the core's. Callgrind
counts instructions executed in user space only: the kernel's work for a process's system calls
(writing blobs and the database's log, syncing) is not in these figures, nor is time spent
waiting. Valgrind's virtual CPU lacks some extensions a real one has (the SHA instructions among
them), so OpenSSL hashes with its general code there: a sha256 counts several times the
instructions it takes natively. It runs each process some 50 times slower: the default sizes
take a few minutes; ``--keep FOLDER`` keeps the profiles for ``callgrind_annotate``.

Prints the figures, then one line holding the same figures as a JSON object.

    .venv/bin/python bench/instructions.py [--small 60] [--large 180] [--clusters 20] [--keep FOLDER]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))


def _fleet_bench() -> ModuleType:
    """``bench/fleet.py``, by its path: the name ``fleet`` may already be another module (the
    tests' ``fleet`` package)."""
    spec = importlib.util.spec_from_file_location("farm_bench_fleet", BENCH / "fleet.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


_fleet = _fleet_bench()
Target, write_catalog = _fleet.Target, _fleet.write_catalog
_base_env, _snapshot_source = _fleet._base_env, _fleet._snapshot_source

ROLES = ("planner", "worker", "render_child")
_PARENT = re.compile(r"^==(\d+)== Parent PID: (\d+)$", re.MULTILINE)
_TOTALS = re.compile(r"^totals: (\d+)$", re.MULTILINE)
_COMMAND = re.compile(r"^cmd: (.*)$", re.MULTILINE)


class BenchError(Exception):
    """What stops the bench, said in one line."""


@dataclass(frozen=True)
class CountedProcess:
    pid: int
    parent: int
    command: str
    instructions: int


def read_counts(folder: Path, prefix: str) -> list[CountedProcess]:
    """Every process callgrind followed under ``folder/<prefix>.<pid>.{log,out}``: its parent
    (from valgrind's log), its command line and the instructions it executed."""
    processes = []
    for log in sorted(folder.glob(f"{prefix}.*.log")):
        pid = int(log.name.split(".")[-2])
        parents = dict(_PARENT.findall(log.read_text(errors="replace")))
        out = folder / f"{prefix}.{pid}.out"
        if not out.exists():
            raise BenchError(f"callgrind wrote no profile for process {pid}: see {log}")
        profile = out.read_text(errors="replace")
        totals, command = _TOTALS.search(profile), _COMMAND.search(profile)
        if totals is None or command is None:
            raise BenchError(f"{out}: no totals line: was the process killed?")
        processes.append(
            CountedProcess(pid, int(parents.get(str(pid), 0)), command.group(1).strip(), int(totals.group(1)))
        )
    return processes


def instructions_by_role(processes: list[CountedProcess]) -> dict[str, int]:
    """Instructions of the planner (the ``farm run`` process), the pool workers (the forkserver's
    children) and their render children, by place in the tree: the run's one process whose
    parent callgrind did not follow is the planner, the forkserver is the planner's child that
    has children, its children are workers, theirs render children. A forked process's count
    includes its parent's before the fork; the difference between two sizes cancels that."""
    by_pid = {process.pid: process for process in processes}
    children: dict[int, list[CountedProcess]] = {}
    for process in processes:
        children.setdefault(process.parent, []).append(process)
    roots = [process for process in processes if process.parent not in by_pid]
    if len(roots) != 1 or " farm run " not in f" {roots[0].command} ":
        raise BenchError(f"expected one farm run process at the root, got {[p.command for p in roots]}")
    planner = roots[0]
    servers = [p for p in children.get(planner.pid, []) if "forkserver" in p.command and children.get(p.pid)]
    if len(servers) != 1:
        raise BenchError(f"expected one forkserver with workers under farm run, got {len(servers)}")
    workers = children[servers[0].pid]
    render_children = [child for worker in workers for child in children.get(worker.pid, [])]
    return {
        "planner": planner.instructions,
        "worker": sum(worker.instructions for worker in workers),
        "render_child": sum(child.instructions for child in render_children),
    }


def per_target(small: dict[str, int], large: dict[str, int], added: int) -> dict[str, float]:
    """What one more target costs each role: the difference between the sizes over the targets added."""
    return {role: (large[role] - small[role]) / added for role in small}


def _callgrind(prefix: Path, command: list[str], env: dict[str, str], cwd: Path) -> None:
    valgrind = [
        "valgrind",
        "--tool=callgrind",
        "--trace-children=yes",
        f"--callgrind-out-file={prefix}.%p.out",
        f"--log-file={prefix}.%p.log",
    ]
    result = subprocess.run([*valgrind, *command], env=env, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise BenchError(
            f"{' '.join(command)} under callgrind exited {result.returncode}: {result.stderr[-2000:]}"
        )


def count_farm_run(work: Path, catalog: Path, env: dict[str, str], name: str) -> dict[str, int]:
    """A ``farm run --processes 1`` of ``catalog`` under callgrind, on a home migrated beforehand."""
    home = work / f"home-{name}"
    env = {**env, "FARM_HOME": str(home)}
    subprocess.run(
        [sys.executable, "-m", "farm", "db", "upgrade"], env=env, cwd=work, check=True, capture_output=True
    )
    counts = work / f"counts-{name}"
    counts.mkdir()
    _callgrind(
        counts / "run",
        [sys.executable, "-m", "farm", "run", str(catalog), "--processes", "1", "--json"],
        env,
        work,
    )
    return instructions_by_role(read_counts(counts, "run"))


def count_core(work: Path, catalog: Path, targets: int, env: dict[str, str], name: str) -> int:
    """The instructions of ``--core-loop`` on ``catalog`` (one process)."""
    counts = work / f"core-{name}"
    counts.mkdir()
    _callgrind(
        counts / "core",
        [sys.executable, str(BENCH / "instructions.py"), "--core-loop", str(catalog), str(targets)],
        env,
        work,
    )
    (process,) = read_counts(counts, "core")
    return process.instructions


def core_loop(catalog: Path, targets: list[Target]) -> None:
    """Render every target through one document memo, after one warm-up render (as
    ``bench/fleet.py``'s memo baseline does)."""
    from farm.core.render import RenderRequest, render
    from farm.core.yamlio import DocumentMemo

    requests = [
        RenderRequest(
            (catalog / "applications" / t.application / "app.yaml").read_bytes(),
            (catalog / "clusters" / f"{t.cluster}.yaml").read_bytes(),
            app_source=f"{t.application}/app.yaml",
            cluster_profile_source=f"{t.cluster}.yaml",
        )
        for t in targets
    ]
    render(requests[0])
    memo = DocumentMemo()
    for request in requests:
        render(request, memo=memo)


def catalog_targets(catalog: Path, count: int) -> list[Target]:
    """The targets ``write_catalog`` wrote, in its order (applications × clusters, the first ``count``)."""
    applications = sorted(path.name for path in (catalog / "applications").iterdir())
    clusters = sorted(path.stem for path in (catalog / "clusters").iterdir())
    return [Target(a, c) for a in applications for c in clusters][:count]


def report(small: int, large: int, roles: dict[str, float], core: float) -> dict[str, float]:
    farm = sum(roles.values())
    beyond = farm - core
    print(
        f"instructions per target (the difference between {small} and {large} targets, over {large - small}):"
    )
    print(f"  core alone, per render (memo):   {core / 1e6:8.3f} M")
    for role in ROLES:
        print(
            f"  {role.replace('_', ' '):32s} {roles[role] / 1e6:8.3f} M  {roles[role] / core:5.2f}× a render"
        )
    print(f"  farm, every process:             {farm / 1e6:8.3f} M  {farm / core:5.2f}× a render")
    print(f"  farm beyond the render:          {beyond / 1e6:8.3f} M  {beyond / core:5.2f}× a render")
    print(f"  render child over the core:      {roles['render_child'] / core:8.3f}")
    figures = {
        "small_targets": small,
        "large_targets": large,
        "core_instructions_per_render": round(core),
        "farm_instructions_per_target": round(farm),
        "farm_beyond_render_instructions_per_target": round(beyond),
        "farm_beyond_render_over_render": round(beyond / core, 3),
        "render_child_over_core": round(roles["render_child"] / core, 3),
    }
    figures.update({f"{role}_instructions_per_target": round(roles[role]) for role in ROLES})
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--small", type=int, default=60, help="targets of the smaller run (default 60)")
    parser.add_argument("--large", type=int, default=180, help="targets of the larger run (default 180)")
    parser.add_argument("--clusters", type=int, default=20, help="ClusterProfiles (default 20)")
    parser.add_argument(
        "--keep",
        type=Path,
        help="copy callgrind's profiles (and valgrind's logs) into this folder, for callgrind_annotate",
    )
    parser.add_argument("--core-loop", nargs=2, metavar=("CATALOG", "TARGETS"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.core_loop:  # the process callgrind counts for the core's baseline
        catalog = Path(options.core_loop[0])
        core_loop(catalog, catalog_targets(catalog, int(options.core_loop[1])))
        return 0
    try:
        if shutil.which("valgrind") is None:
            raise BenchError("valgrind is not installed: apt-get install valgrind")
        if not 0 < options.small < options.large:
            raise BenchError(f"--small ({options.small}) must be above 0 and below --large ({options.large})")
        figures = _measure(options.small, options.large, options.clusters, options.keep)
    except BenchError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(figures, sort_keys=True))
    return 0


def _measure(small: int, large: int, clusters: int, keep: Path | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="farm-bench-instructions-") as temp:
        work = Path(temp)
        env = _base_env(_snapshot_source(work / "source"))
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # the snapshot is compiled: nothing to write
        env["PYTHONHASHSEED"] = "0"  # the same dict and set layouts in every run: the same counts
        catalogs = {}
        for size in (small, large):
            catalogs[size] = work / f"catalog-{size}"
            write_catalog(catalogs[size], size, clusters)
        print(
            f"{small} and {large} targets over {clusters} ClusterProfiles, under callgrind ({os.cpu_count()} cores)"
        )
        with ThreadPoolExecutor(max_workers=2) as pool:  # each size's runs in turn, the sizes side by side
            runs = {
                size: pool.submit(count_farm_run, work, catalogs[size], env, str(size))
                for size in (small, large)
            }
            cores = {
                size: pool.submit(count_core, work, catalogs[size], size, env, str(size))
                for size in (small, large)
            }
            roles = per_target(runs[small].result(), runs[large].result(), large - small)
            core = (cores[large].result() - cores[small].result()) / (large - small)
        if keep is not None:
            for size in (small, large):
                for counts in (work / f"counts-{size}", work / f"core-{size}"):
                    shutil.copytree(counts, keep / counts.name, dirs_exist_ok=True)
        return report(small, large, roles, core)


if __name__ == "__main__":
    sys.exit(main())
