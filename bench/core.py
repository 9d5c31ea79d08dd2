#!/usr/bin/env python3
"""Core render throughput, and how close the handler logic is to the YAML I/O floor.

For a mix of inputs (every renderable golden case under tests/golden and every application of
examples/fleet for every ClusterProfile there), measures in one process:

- renders per second of ``farm.core.render.render`` over the mix;
- the I/O floor: only loading the same inputs and dumping the same outputs with the same YAML code;
- the ratio render time / floor time (1.0 would mean the handlers cost nothing beyond YAML I/O);
- the start-up of ``farm build``: the wall time of one small build in a fresh process, against the
  wall time of ``python -c "import farm.core.render"`` (best of ``--startup-runs`` each), and their
  ratio (the target is at most 2: a build imports the core and the CLI, nothing else).

Prints the figures, then one line holding the same figures as a JSON object.

    .venv/bin/python bench/core.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
STARTUP_CASE = ROOT / "tests" / "golden" / "multi-webservices-scaler-expose"

from farm.core import yamlio  # noqa: E402
from farm.core.errors import CoreError  # noqa: E402
from farm.core.render import RenderRequest, ValuesLayer, render  # noqa: E402


def _golden_inputs() -> list[tuple[bytes, bytes, bytes | None, bytes | None]]:
    inputs = []
    for case in sorted((ROOT / "tests" / "golden").glob("*/app.yaml")):
        folder = case.parent
        if (folder / "expected-error.txt").exists():
            continue
        package = folder / "kurel.yaml"
        values = folder / "values.yaml"
        inputs.append(
            (
                case.read_bytes(),
                (folder / "cluster.yaml").read_bytes(),
                package.read_bytes() if package.exists() else None,
                values.read_bytes() if values.exists() else None,
            )
        )
    return inputs


def _example_inputs() -> list[tuple[bytes, bytes, bytes | None, bytes | None]]:
    fleet = ROOT / "examples" / "fleet"
    clusters = sorted((fleet / "clusters").glob("*.yaml"))
    inputs = []
    for app in sorted((fleet / "applications").glob("*/app.yaml")):
        package = app.parent / "kurel.yaml"
        for cluster in clusters:
            inputs.append(
                (
                    app.read_bytes(),
                    cluster.read_bytes(),
                    package.read_bytes() if package.exists() else None,
                    None,
                )
            )
    return inputs


def _request(app: bytes, cluster: bytes, package: bytes | None, values: bytes | None) -> RenderRequest:
    layers = (ValuesLayer("values.yaml", values),) if values is not None else ()
    return RenderRequest(app, cluster, package=package, values=layers)


def _renderable(inputs):
    kept, outputs = [], []
    for app, cluster, package, values in inputs:
        try:
            rendered = render(_request(app, cluster, package, values))
        except CoreError:
            continue
        kept.append((app, cluster, package, values))
        outputs.append(list(rendered.objects))
    return kept, outputs


def _time_render(inputs, rounds: int) -> float:
    requests = [_request(*entry) for entry in inputs]
    start = time.perf_counter()
    for _ in range(rounds):
        for request in requests:
            render(request)
    return time.perf_counter() - start


def _time_io_floor(inputs, outputs, rounds: int) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        for (app, cluster, package, values), objects in zip(inputs, outputs, strict=True):
            yamlio.load(app)
            yamlio.load(cluster)
            if package is not None:
                yamlio.load(package)
            if values is not None:
                yamlio.load(values)
            yamlio.dump_documents(objects)
    return time.perf_counter() - start


def _best_wall_time(argv: list[str], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
    return best


def _startup(runs: int) -> dict[str, float]:
    """Wall seconds of a small ``farm build`` and of importing the core, each in a new process."""
    build = [sys.executable, "-m", "farm", "build", str(STARTUP_CASE), "--profile"]
    build.append(str(STARTUP_CASE / "cluster.yaml"))
    import_core = [sys.executable, "-c", "import farm.core.render"]
    build_seconds = _best_wall_time(build, runs)
    import_seconds = _best_wall_time(import_core, runs)
    return {
        "build_startup_seconds": round(build_seconds, 3),
        "core_import_seconds": round(import_seconds, 3),
        "build_to_core_import_ratio": round(build_seconds / import_seconds, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--startup-runs", type=int, default=5)
    options = parser.parse_args()
    inputs, outputs = _renderable(_golden_inputs() + _example_inputs())
    if not inputs:
        print("no renderable inputs found", file=sys.stderr)
        return 2
    render_seconds = _time_render(inputs, options.rounds)
    floor_seconds = _time_io_floor(inputs, outputs, options.rounds)
    renders = len(inputs) * options.rounds
    objects = sum(len(o) for o in outputs) * options.rounds
    figures = {
        "inputs": len(inputs),
        "rounds": options.rounds,
        "renders_per_second": round(renders / render_seconds, 1),
        "objects_per_second": round(objects / render_seconds, 1),
        "io_floor_renders_per_second": round(renders / floor_seconds, 1),
        "render_to_io_floor_ratio": round(render_seconds / floor_seconds, 3),
    } | _startup(options.startup_runs)
    print(f"inputs in the mix:            {figures['inputs']} ({figures['rounds']} rounds)")
    print(f"renders per second:           {figures['renders_per_second']}")
    print(f"objects per second:           {figures['objects_per_second']}")
    print(f"I/O floor (load+dump) per s:  {figures['io_floor_renders_per_second']}")
    print(f"render time / I/O floor time: {figures['render_to_io_floor_ratio']}")
    print(f"farm build (small app), s:    {figures['build_startup_seconds']}")
    print(f"import farm.core.render, s:   {figures['core_import_seconds']}")
    print(f"build / core import:          {figures['build_to_core_import_ratio']} (target <= 2)")
    print(json.dumps(figures, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
