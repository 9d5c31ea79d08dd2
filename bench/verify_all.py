#!/usr/bin/env python3
"""The time and peak memory of ``farm verify --all`` on the home a fleet run of ``bench/fleet.py``'s
catalog leaves (local executor, embedded SQLite and a blob folder).

    .venv/bin/python bench/verify_all.py --targets 100000 --clusters 100 [--home DIR]

With ``--home`` the home (and its catalog) is kept there and reused when it already holds a run,
so the verify can be measured again without rendering again. Needs GNU time (``/usr/bin/time``).
Prints one JSON line: targets, wall seconds and peak RSS (KiB) of the run and of the verify, and
the verify's counts by kind.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fleet  # noqa: E402 - bench/fleet.py's catalog writer

ROOT = Path(__file__).resolve().parent.parent


def timed(arguments: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """(wall seconds, peak RSS KiB, stdout) of one command under /usr/bin/time -v."""
    done = subprocess.run(["/usr/bin/time", "-v", *arguments], env=env, capture_output=True, text=True)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    if wall is None or rss is None:
        raise SystemExit(f"bench: {' '.join(arguments)} failed:\n{done.stderr[-2000:]}")
    seconds = 0.0
    for part in wall.group(1).split(":"):
        seconds = seconds * 60 + float(part)
    return seconds, int(rss.group(1)), done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--targets", type=int, default=2000)
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--home", type=Path, help="keep the catalog and home here (reused when present)")
    options = parser.parse_args()
    work = options.home or Path(tempfile.mkdtemp(prefix="farm-bench-verify-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("FARM_")}
    env |= {"FARM_HOME": str(work / "home"), "PYTHONPATH": str(ROOT)}
    farm = [sys.executable, "-m", "farm"]
    figures: dict[str, object] = {"targets": options.targets}
    if not (work / "catalog").exists():
        fleet.write_catalog(work / "catalog", options.targets, options.clusters)
    subprocess.run([*farm, "db", "upgrade"], env=env, check=True, capture_output=True)
    if not (work / "home" / "ran").exists():
        figures["run_seconds"], figures["run_peak_rss_kib"], _ = timed(
            [*farm, "run", str(work / "catalog")], env
        )
        (work / "home" / "ran").write_text("")
    seconds, rss, out = timed([*farm, "verify", "--all", "--json"], env)
    if options.home is None:
        shutil.rmtree(work)
    report = json.loads(out)
    figures |= {
        "verify_seconds": seconds,
        "verify_peak_rss_kib": rss,
        "ok": report["ok"],
        "checked": report["checked"],
    }
    print(json.dumps(figures, sort_keys=True))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
