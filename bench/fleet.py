#!/usr/bin/env python3
"""Fleet-run throughput: what the farm costs on top of the handler core.

Generates a catalog of N synthetic targets (applications × ClusterProfiles; webservice, worker and
statefulset components with expose and scaler traits (the statefulset exposed through its
authored headless Service); ingress and gateway clusters) and measures,
in one run:

- core-only: ``farm.core.render.render`` over the same targets, one after the other, in this process
  (the baseline of every ratio); and again through one ``DocumentMemo``, each document parsed
  once, as the farm's workers render (the local ratio to it is printed beside); both timed again
  after the farm's runs, with their drift (``core_drift_percent``): on a shared machine whose
  speed moves over minutes, the drift says how far one bench's ratios can be trusted;
- ``farm run`` with the local executor (embedded SQLite under a temporary FARM_HOME, process pool
  on every core);
- ``farm run`` with the Celery executor: one worker with 2 pool processes, a PostgreSQL database
  created for the bench, Redis as the broker, a queue of its own; everything is removed afterwards;
- the no-change re-run with each executor (every target a cache hit), and the local one as a
  percentage of the local full run;
- both again through ``farm daemon`` (started and warmed up beforehand, as the Celery worker is):
  the local executor with the imports, the pool's workers and their caches already warm, and
  Celery with the planning side warm (on the same catalog with every image retagged, so every
  target renders again); and the local daemon's second full run, after its no-change re-run, on
  the catalog retagged (``daemon_again_*``): its render children started, as Celery's are then;
- planning (``farm plan``'s path, the one ``farm run`` plans with) at 2,000 and 100,000 targets,
  in targets per second (``--plan-only`` measures only this, ``--no-plan`` skips it);
- each as a ratio to (core-only time / cores used): 1.0 would mean the farm adds nothing to the
  core's work spread over its cores;
- peak worker memory: the RSS of the rendering processes (pool children) and of the whole worker
  tree, sampled from /proc every 50 ms during the runs;
- the machine's busy CPU during each run (``/proc/stat``; for Celery it includes PostgreSQL's,
  Redis's and the worker's own), and the full run's as a multiple of the core-only renders': on
  an otherwise idle machine it does not move when the scheduler or the disk makes a process
  wait, as wall time does, so it compares two versions of the farm with less noise.
- the farm's own CPU (the ``farm run`` command, the daemon's and the Celery worker's process
  trees, from ``/proc/<pid>/stat``; not PostgreSQL's) during the full runs through the daemon and
  with Celery (its own ``farm run`` process, and through the daemon: the figure to compare with
  the local daemon's, a fresh process's imports left out), and from it the farm's CPU per rendered
  target beyond the render (less the core-only renders with a memo): other work on a shared
  machine does not move it; for Celery through the daemon, PostgreSQL's backends' CPU per target
  beside it;
- for the local daemon's second full run, each process role's CPU per target, user and system
  apart (the daemon planning and recording the run, its pool's workers, their render children:
  ``daemon_again_<role>_{user,system}_ms_per_target``), and the render children's CPU over the
  core's memo renders (``daemon_again_render_child_over_core_memo``): the same renders cost more
  in a render child taking turns on the cores with its worker than in one process alone;
- what each full run and no-change re-run adds to the store: objects written (new blobs in the
  folder object store) per rendered target, object bytes per run, database bytes per target per
  run (the SQLite file, or ``pg_database_size`` for Celery);
- how the local daemon run's jobs used the pool, from their rows: the seconds from the start of
  planning to the first claim, workers holding a job on average (a worker holds its next job
  while it records the last: the union of its jobs' spans counts), and a worker's time holding
  none (p50, p90 and its share of the jobs' span; ``daemon_jobs_in_parallel``,
  ``daemon_gap_*``);
- what the local daemon's full run and its no-change re-run wrote to storage, per target
  (``/proc/<pid>/io``'s ``write_bytes`` of the daemon and its pool: the database's log and its
  checkpoints, the blobs; ``daemon_written_kib_per_target``): unlike a time, it barely moves from
  one run to the next, so it shows a change in the database's write volume that wall times hide;
- the first Celery run again once ``--history-runs`` (default 5) full runs are on its database,
  every target rendering: its wall time, the farm's CPU and the PostgreSQL backends' CPU over the
  first run's (``celery_last_over_first_*``): a run must not cost more for the rows earlier runs
  left.

Wall times are those of the ``farm run`` command (planning, execution, completion polling), with
the database migrated and the Celery worker started beforehand. The subprocesses and the core-only
renders all import one copy of the farm's source, so an edit of the working tree during the bench
cannot change the core between planning and rendering.

Prints the figures, then one line holding the same figures as a JSON object.

    .venv/bin/python bench/fleet.py [--targets N] [--clusters C] [--celery-processes P]
                                    [--local-only] [--plan-only | --no-plan]

Needs PostgreSQL (``--postgres``, default ``FARM_TEST_POSTGRES_URL`` or
``postgresql+psycopg://postgres@127.0.0.1:5432/test``: a role that may create databases) and Redis
(``--broker``, default ``redis://127.0.0.1:6379/0``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_POSTGRES = os.environ.get(
    "FARM_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
DEFAULT_BROKER = "redis://127.0.0.1:6379/0"
MIB = 1024 * 1024

FLEET = """apiVersion: farm.dev/v1alpha1
kind: Fleet
metadata:
  name: bench
spec:
  applications: applications
  clusters: clusters
  targets:
    - applications: ["*"]
      clusters: ["*"]
{exclude}"""

WEBSERVICE = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: team-{team}
spec:
  components:
    - name: {name}
      type: webservice
      properties:
        image: ghcr.io/example/{name}:v1.{index}.0
        port: 8080
        replicas: 2
        env:
          - name: UPSTREAM
            value: http://svc-{team}.team-{team}.svc:8080
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
      traits:
        - type: expose
          properties:
            hostnames: ["{name}.example.com"]
        - type: scaler
          properties:
            minReplicas: 2
            maxReplicas: {max_replicas}
"""

WORKER = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: team-{team}
spec:
  components:
    - name: {name}
      type: worker
      properties:
        image: ghcr.io/example/{name}:v2.{index}.1
        replicas: 2
        command: ["/app/worker"]
        args: ["--queue", "{name}"]
      traits:
        - type: scaler
          properties:
            minReplicas: 1
            maxReplicas: {max_replicas}
"""

STATEFULSET = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: team-{team}
spec:
  components:
    - name: {name}
      type: statefulset
      properties:
        image: ghcr.io/example/{name}:v3.{index}.2
        replicas: 3
        serviceName: {name}-headless
        ports:
          - name: redis
            containerPort: 6379
        volumeClaimTemplates:
          - name: data
            mountPath: /data
            size: 5Gi
      traits:
        - type: expose
          properties:
            hostnames: ["{name}.internal.example.com"]
            serviceName: {name}-headless
            servicePort: 6379
    - name: {name}-headless
      type: service
      properties:
        clusterIP: None
        selector:
          app: {name}
        ports:
          - name: redis
            port: 6379
"""

INGRESS_CLUSTER = """apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: {name}
spec:
  capabilities:
    expose:
      rendering:
        controllerType: ingress
        ingressClassName: {ingress_class}
    certificate:
      rendering:
        issuerRef:
          name: issuer-{index}
          kind: ClusterIssuer
"""

GATEWAY_CLUSTER = """apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: {name}
spec:
  capabilities:
    expose:
      rendering:
        controllerType: gateway
        gatewayName: gateway-{index}
        gatewayNamespace: gateway-system
    certificate:
      rendering:
        issuerRef:
          name: issuer-{index}
          kind: ClusterIssuer
"""


# ---------------------------------------------------------------------------------------------
# The synthetic catalog
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    application: str
    cluster: str


def write_catalog(root: Path, targets: int, clusters: int) -> list[Target]:
    """``targets`` (application, cluster) pairs: ceil(targets / clusters) applications × clusters,
    minus excluded pairs so the count is exact."""
    clusters = max(1, min(clusters, targets))
    applications = math.ceil(targets / clusters)
    (root / "applications").mkdir(parents=True)
    (root / "clusters").mkdir()
    app_names = [f"app-{index:04d}" for index in range(applications)]
    cluster_names = [f"cluster-{index:02d}" for index in range(clusters)]
    templates = (WEBSERVICE, WORKER, STATEFULSET)
    for index, name in enumerate(app_names):
        folder = root / "applications" / name
        folder.mkdir()
        text = templates[index % 3].format(name=name, team=index % 7, index=index, max_replicas=4 + index % 9)
        (folder / "app.yaml").write_text(text)
    for index, name in enumerate(cluster_names):
        if index % 2:
            text = GATEWAY_CLUSTER.format(name=name, index=index)
        else:
            ingress_class = ("nginx", "traefik", "haproxy")[index // 2 % 3]
            text = INGRESS_CLUSTER.format(name=name, index=index, ingress_class=ingress_class)
        (root / "clusters" / f"{name}.yaml").write_text(text)
    pairs = [Target(a, c) for a in app_names for c in cluster_names]
    excluded = pairs[targets:]
    exclude = ""
    if excluded:
        entries = ", ".join(f'{{application: "{t.application}", cluster: "{t.cluster}"}}' for t in excluded)
        exclude = f"      exclude: [{entries}]\n"
    (root / "fleet.yaml").write_text(FLEET.format(exclude=exclude))
    return pairs[:targets]


def time_core_only(root: Path, targets: list[Target]) -> tuple[float, float, float]:
    """Render every target with the core alone, in this process, one after the other: each
    render parsing its documents afresh (``farm build``'s way, the baseline every ratio uses), and
    again through one document memo, as a farm worker renders (each document parsed once). Their
    wall times, and the CPU time of the memo's renders (what the farm's CPU figures subtract: on
    a shared machine the wall time also holds the waits for a core)."""
    from farm.core.render import RenderRequest, render
    from farm.core.yamlio import DocumentMemo

    cache: dict[Path, bytes] = {}

    def read(path: Path) -> bytes:
        if path not in cache:
            cache[path] = path.read_bytes()
        return cache[path]

    inputs = [
        (
            read(root / "applications" / t.application / "app.yaml"),
            read(root / "clusters" / f"{t.cluster}.yaml"),
            t,
        )
        for t in targets
    ]
    requests = [
        RenderRequest(
            app,
            profile,
            app_source=f"{target.application}/app.yaml",
            cluster_profile_source=f"{target.cluster}.yaml",
        )
        for app, profile, target in inputs
    ]
    render(requests[0])  # imports and first-use caches, as a warm worker has them
    start = time.perf_counter()
    for request in requests:
        render(request)
    fresh = time.perf_counter() - start
    memo = DocumentMemo()
    start, cpu = time.perf_counter(), time.process_time()
    for request in requests:
        render(request, memo=memo)
    return fresh, time.perf_counter() - start, time.process_time() - cpu


# ---------------------------------------------------------------------------------------------
# Processes and their memory
# ---------------------------------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        tree.setdefault(parent, []).append(int(entry))
    return tree


def _rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / MIB
    except OSError:
        pass
    return 0.0


def busy_cpu_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (``/proc/stat``: user, nice,
    system, irq, softirq, steal), None where there is no ``/proc/stat``. The difference over a
    run is what the run cost every process it involved (the farm's, and PostgreSQL's, Redis's and
    Celery's for a Celery run) on an otherwise idle machine: unlike wall time, it does not move
    when the scheduler or the disk makes a process wait."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(value) for value in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def process_tree_cpu_seconds(roots: tuple[int, ...]) -> float:
    """CPU seconds the processes ``roots`` and their descendants have used (``/proc/<pid>/stat``:
    user and system time, plus those of the children each has waited for, so a pool child or
    render child that exits between two readings stays counted through its parent). Unlike the
    machine's busy CPU, other work on a shared machine does not move it."""
    total = 0.0
    for pid in _tree(roots):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        utime, stime, cutime, cstime = (int(v) for v in stat[stat.rindex(")") + 2 :].split()[11:15])
        total += (utime + stime + cutime + cstime) / os.sysconf("SC_CLK_TCK")
    return total


# the farm daemon's process tree, by depth: the daemon plans and records runs; its local pool's
# forkserver starts the workers, each of which forks the render child it renders in
DAEMON_ROLES = ("planner", "forkserver", "worker", "render_child")


def process_roles_cpu_seconds(
    root: int, roles: Sequence[str] = DAEMON_ROLES
) -> dict[str, tuple[float, float]]:
    """(user, system) CPU seconds of ``root``'s tree now, summed by depth below ``root``, each
    depth named by ``roles`` (deeper processes count with the last role). A process that exited
    counts with its parent, once the parent waited for it (``cutime``/``cstime``)."""
    split = {role: (0.0, 0.0) for role in roles}
    tick = os.sysconf("SC_CLK_TCK")
    frontier = [(root, 0)]
    while frontier:
        pid, depth = frontier.pop()
        frontier += [(child, depth + 1) for child in _children_of(pid)]
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        utime, stime, cutime, cstime = (int(v) for v in stat[stat.rindex(")") + 2 :].split()[11:15])
        role = roles[min(depth, len(roles) - 1)]
        user, system = split[role]
        split[role] = (user + (utime + cutime) / tick, system + (stime + cstime) / tick)
    return split


def role_figures(
    prefix: str,
    before: dict[str, tuple[float, float]],
    after: dict[str, tuple[float, float]],
    core_memo_cpu: float,
    n: int,
) -> dict[str, float]:
    """Prints, and returns as ``<prefix>_<role>_{user,system}_ms_per_target`` figures, each role's
    CPU during a run per target, and the render children's over the core's memo renders
    (``<prefix>_render_child_over_core_memo``): what rendering inside the farm costs beyond
    rendering alone (the render child takes turns on the cores with its worker)."""
    figures: dict[str, float] = {}
    parts = []
    for role in after:
        user = after[role][0] - before.get(role, (0.0, 0.0))[0]
        system = after[role][1] - before.get(role, (0.0, 0.0))[1]
        if user + system == 0:
            continue
        figures[f"{prefix}_{role}_user_ms_per_target"] = round(1000 * user / n, 3)
        figures[f"{prefix}_{role}_system_ms_per_target"] = round(1000 * system / n, 3)
        parts.append(f"{role} {1000 * user / n:.3f} + {1000 * system / n:.3f}")
        if role == "render_child" and core_memo_cpu > 0:
            figures[f"{prefix}_render_child_over_core_memo"] = round((user + system) / core_memo_cpu, 2)
    print(f"  CPU per target by process, user + system ms: {'; '.join(parts)}")
    if f"{prefix}_render_child_over_core_memo" in figures:
        print(
            f"  render children over the core's memo renders: {figures[f'{prefix}_render_child_over_core_memo']:.2f}×"
        )
    return figures


def _tree(roots: tuple[int, ...]) -> list[int]:
    """``roots`` and every process descending from them now: read from each process's
    ``/proc/<pid>/task/<tid>/children`` (a few files, where walking all of ``/proc`` took the
    memory sampler 2.4 ms of CPU every 50 ms, beside the run it measures), or from the whole
    process table where the kernel does not list children."""
    if not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists():
        return _tree_from_table(roots)
    found, frontier = [], list(roots)
    while frontier:
        pid = frontier.pop()
        found.append(pid)
        frontier += _children_of(pid)
    return found


def _children_of(pid: int) -> list[int]:
    children: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return children
    for thread in threads:
        try:
            children += map(int, Path(f"/proc/{pid}/task/{thread}/children").read_text().split())
        except OSError:
            continue
    return children


def _tree_from_table(roots: tuple[int, ...]) -> list[int]:
    tree, found, frontier = _children(), [], list(roots)
    while frontier:
        pid = frontier.pop()
        found.append(pid)
        frontier += tree.get(pid, [])
    return found


def process_tree_write_bytes(roots: tuple[int, ...]) -> int:
    """Bytes the processes ``roots`` and their descendants have caused to be written to storage
    (``/proc/<pid>/io``'s ``write_bytes``: the database's log and its checkpoints, the blobs; not
    pipes). A process that exits between two readings takes its count with it: the pool's workers
    and the daemon stay for the whole run."""
    total = 0
    for pid in _tree(roots):
        try:
            lines = Path(f"/proc/{pid}/io").read_text().splitlines()
        except OSError:
            continue
        total += sum(int(line.split()[1]) for line in lines if line.startswith("write_bytes:"))
    return total


def postgres_backends_cpu_seconds(url: str | None) -> float:
    """CPU seconds of the PostgreSQL backends connected to the database of ``url`` now (the
    Celery worker's pooled connections; a backend that exits meanwhile takes its CPU with it)."""
    if url is None:
        return 0.0
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            pids = connection.scalars(
                text(
                    "SELECT pid FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            ).all()
    finally:
        engine.dispose()
    return process_tree_cpu_seconds(tuple(pids))


def children_cpu_seconds() -> float:
    """CPU seconds of this process's waited-for children (a ``farm run`` and what it waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class MemorySampler:
    """Samples the RSS of a process tree: the biggest pool child, and the whole tree."""

    root_pid: int
    peak_child_mib: float = 0.0
    peak_tree_mib: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def sample(self) -> None:
        descendants = _tree((self.root_pid,))[1:]
        child_rss = [_rss_mib(pid) for pid in descendants]
        self.peak_child_mib = max([self.peak_child_mib, *child_rss])
        self.peak_tree_mib = max(self.peak_tree_mib, _rss_mib(self.root_pid) + sum(child_rss))

    def _loop(self) -> None:
        while not self._stop.wait(0.05):
            self.sample()

    def __enter__(self) -> MemorySampler:
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


@dataclass
class Farm:
    env: dict[str, str]
    cwd: Path
    last_cpu_seconds: float | None = None  # busy CPU of the machine during the last timed_run
    # CPU of the farm's own processes during the last timed_run: the ``farm run`` command and the
    # resident processes named by ``cpu_roots`` (the daemon, the Celery worker), not PostgreSQL's
    last_farm_cpu_seconds: float = 0.0
    database_url: str | None = None  # PostgreSQL: its backends' CPU is measured too
    last_database_cpu_seconds: float = 0.0  # CPU of the database's backends during the last timed_run
    last_write_bytes: int = 0  # bytes the resident processes (``cpu_roots``) wrote to storage then

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "-m", "farm", *args], env=self.env, cwd=self.cwd, capture_output=True, text=True
        )
        if result.returncode != 0:
            raise RuntimeError(f"farm {' '.join(args)} exited {result.returncode}:\n{result.stderr}")
        return result

    def timed_run(
        self,
        catalog: Path,
        executor: str,
        expect: dict[str, int],
        sampler_root: int | None = None,
        cpu_roots: tuple[int, ...] = (),
    ) -> tuple[float, MemorySampler | None]:
        """Time ``farm run --json``; check every target ended in the expected state."""
        command = [sys.executable, "-m", "farm", "run", str(catalog), "--executor", executor, "--json"]
        farm_cpu_before = process_tree_cpu_seconds(cpu_roots) + children_cpu_seconds()
        written_before = process_tree_write_bytes(cpu_roots)
        database_cpu_before = postgres_backends_cpu_seconds(self.database_url)
        cpu_before = busy_cpu_seconds()
        start = time.perf_counter()
        process = subprocess.Popen(
            command, env=self.env, cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        sampler = MemorySampler(sampler_root if sampler_root is not None else process.pid)
        with sampler:
            stdout, stderr = process.communicate()
        seconds = time.perf_counter() - start
        cpu_after = busy_cpu_seconds()
        self.last_cpu_seconds = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
        farm_cpu_after = process_tree_cpu_seconds(cpu_roots) + children_cpu_seconds()
        self.last_farm_cpu_seconds = farm_cpu_after - farm_cpu_before
        self.last_write_bytes = process_tree_write_bytes(cpu_roots) - written_before
        self.last_database_cpu_seconds = (
            postgres_backends_cpu_seconds(self.database_url) - database_cpu_before
        )
        if process.returncode != 0:
            raise RuntimeError(f"farm run exited {process.returncode}:\n{stderr}")
        counts = json.loads(stdout)["counts"]
        got = {state: count for state, count in counts.items() if count}
        if got != expect:
            raise RuntimeError(f"farm run --executor {executor}: expected {expect}, got {got}")
        return seconds, sampler


@dataclass(frozen=True)
class DaemonRuns:
    """The full run and the no-change re-run through the daemon: wall time, the machine's busy
    CPU, and the memory sampled during the full run."""

    seconds: float
    rerun_seconds: float
    cpu_seconds: float | None
    rerun_cpu_seconds: float | None
    memory: MemorySampler
    farm_cpu_seconds: float  # the farm's own processes' CPU during the full run
    database_cpu_seconds: float = 0.0  # PostgreSQL's backends' CPU during the full run (Celery)
    write_bytes: int = 0  # what the daemon's tree wrote to storage during the full run
    rerun_write_bytes: int = 0  # and during the no-change re-run
    # a second full run after the no-change re-run, every image retagged (``again``)
    again_seconds: float | None = None
    again_cpu_seconds: float | None = None
    again_farm_cpu_seconds: float | None = None
    # each role's (user, system) CPU in the daemon's tree around the second full run
    again_roles: tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float]]] | None = None


def cpu_figures(
    prefix: str, cpu_seconds: float | None, rerun_cpu_seconds: float | None, core_seconds: float
) -> dict[str, float]:
    """Prints, and returns as ``<prefix>_cpu_*`` figures, the machine's busy CPU during a full run
    and its no-change re-run, and the full run's as a multiple of the core-only renders' (one
    process, CPU-bound: their CPU is their time). Nothing where ``/proc/stat`` is missing."""
    if cpu_seconds is None or rerun_cpu_seconds is None:
        return {}
    print(
        f"  CPU, whole machine:          {cpu_seconds:8.2f} s  {cpu_seconds / core_seconds:.2f}× the core's; "
        f"no-change re-run {rerun_cpu_seconds:.2f} s"
    )
    return {
        f"{prefix}_cpu_seconds": round(cpu_seconds, 2),
        f"{prefix}_cpu_ratio": round(cpu_seconds / core_seconds, 2),
        f"{prefix}_rerun_cpu_seconds": round(rerun_cpu_seconds, 2),
    }


def _daemon_runs(
    env: dict[str, str],
    work: Path,
    catalog: Path,
    n: int,
    executor: str = "local",
    sampler_root: int | None = None,
    database_url: str | None = None,
    again: bool = False,
) -> DaemonRuns:
    """The full run and the no-change re-run through ``farm daemon``, started (and warmed up)
    beforehand on a migrated database, as the Celery worker is; stopped afterwards. The memory
    sampled is the daemon's tree's (the local pool), or ``sampler_root``'s (the Celery worker),
    whose CPU counts as the farm's too; ``database_url``: PostgreSQL's backends' CPU is measured.
    With ``again``, then a second full run with every image retagged: a resident daemon's run
    after its first (its render children started, its database file and log grown), as the
    Celery leg through the daemon meets its worker after the Celery leg's own runs."""
    farm = Farm(env, work, database_url=database_url)
    farm.run("db", "upgrade")
    started = farm.run("daemon", "start", "--idle", "600").stdout  # "… (pid N); log: …"
    try:
        pid = int(started.rsplit("(pid ", 1)[1].split(")")[0])
        root = pid if sampler_root is None else sampler_root
        roots = (pid,) if sampler_root is None else (pid, sampler_root)
        seconds, memory = farm.timed_run(
            catalog, executor, {"succeeded": n}, sampler_root=root, cpu_roots=roots
        )
        cpu_seconds, farm_cpu_seconds = farm.last_cpu_seconds, farm.last_farm_cpu_seconds
        database_cpu_seconds = farm.last_database_cpu_seconds
        write_bytes = farm.last_write_bytes
        rerun_seconds, _ = farm.timed_run(catalog, executor, {"cached": n}, cpu_roots=roots)
        rerun_cpu_seconds, rerun_write_bytes = farm.last_cpu_seconds, farm.last_write_bytes
        again_seconds = again_cpu_seconds = again_farm_cpu_seconds = again_roles = None
        if again:
            retag_catalog(catalog, "daemon-again")
            roles_before = process_roles_cpu_seconds(pid)
            again_seconds, _ = farm.timed_run(catalog, executor, {"succeeded": n}, cpu_roots=roots)
            again_roles = (roles_before, process_roles_cpu_seconds(pid))
            again_cpu_seconds, again_farm_cpu_seconds = farm.last_cpu_seconds, farm.last_farm_cpu_seconds
        served = farm.run("daemon", "status").stdout
        runs = 3 if again else 2
        if f"{runs} commands served" not in served:  # every run must have gone through the daemon
            raise RuntimeError(f"the daemon did not serve all {runs} runs: {served}")
    finally:
        farm.run("daemon", "stop")
    assert memory is not None
    return DaemonRuns(
        seconds,
        rerun_seconds,
        cpu_seconds,
        rerun_cpu_seconds,
        memory,
        farm_cpu_seconds,
        database_cpu_seconds,
        write_bytes,
        rerun_write_bytes,
        again_seconds,
        again_cpu_seconds,
        again_farm_cpu_seconds,
        again_roles,
    )


def again_figures(
    daemon: DaemonRuns, floor: float, core_seconds: float, core_memo_cpu: float, n: int
) -> dict[str, float]:
    """Prints, and returns as ``daemon_again_*`` figures, the daemon's second full run."""
    if daemon.again_seconds is None or daemon.again_farm_cpu_seconds is None:
        return {}
    farm_ms = farm_cpu_per_target_ms(daemon.again_farm_cpu_seconds, core_memo_cpu, n)
    print(
        f"  again, every image retagged: {daemon.again_seconds:8.2f} s  ratio {daemon.again_seconds / floor:.2f} "
        f"(the daemon's second full run); farm CPU per target beyond the render {farm_ms:.3f} ms"
    )
    figures = {
        "daemon_again_seconds": round(daemon.again_seconds, 3),
        "daemon_again_ratio": round(daemon.again_seconds / floor, 2),
        "daemon_again_farm_cpu_ms_per_target": farm_ms,
    }
    if daemon.again_cpu_seconds is not None:
        figures["daemon_again_cpu_ratio"] = round(daemon.again_cpu_seconds / core_seconds, 2)
    if daemon.again_roles is not None:
        figures |= role_figures("daemon_again", *daemon.again_roles, core_memo_cpu, n)
    return figures


def retag_catalog(root: Path, tag: str = "retagged") -> None:
    """Another image registry in every application (``ghcr.io/example-<tag>/``): every target
    renders again, the catalog's shape unchanged. Waits out the racy second, so a daemon may reuse
    the loaded catalog."""
    for app in (root / "applications").glob("*/app.yaml"):
        text = app.read_text()
        registry = text.split("image: ghcr.io/", 1)[1].split("/", 1)[0]
        app.write_text(text.replace(f"ghcr.io/{registry}/", f"ghcr.io/example-{tag}/"))
    time.sleep(1.1)


def growth_figures(prefix: str, full: StoreGrowth, rerun: StoreGrowth, n: int) -> dict[str, float]:
    """Prints, and returns as ``<prefix>_*`` figures, what a full run and its no-change re-run
    added to the object store and the database (``database_bytes_per_target``: per target per run).
    """
    print(
        f"  store growth, {prefix}:          full run {full.objects} objects written "
        f"({full.objects / n:.2f} per rendered target, {full.object_bytes / 1e6:.1f} MB), database "
        f"{full.database_bytes / n:,.0f} bytes per target; no-change re-run {rerun.objects} objects, "
        f"{rerun.database_bytes / n:,.0f} database bytes per target"
    )
    return {
        f"{prefix}_object_writes_per_rendered_target": round(full.objects / n, 3),
        f"{prefix}_object_bytes_per_run": full.object_bytes,
        f"{prefix}_database_bytes_per_target": round(full.database_bytes / n, 1),
        f"{prefix}_rerun_object_writes": rerun.objects,
        f"{prefix}_rerun_database_bytes_per_target": round(rerun.database_bytes / n, 1),
    }


def celery_history(
    celery: Farm,
    catalog: Path,
    n: int,
    worker_pid: int,
    history_runs: int,
    first: tuple[float, float, float],
) -> dict[str, float]:
    """The first Celery run again (every target rendering, ``farm run`` without the daemon) once
    ``history_runs`` full runs are on the database (the first and the daemon's are two of them):
    its wall time, the farm's CPU and the database backends' CPU over the first run's (``first``:
    those three). A run's cost must not grow with the rows earlier runs left."""
    first_seconds, first_cpu, first_database_cpu = first
    if history_runs < 2:
        return {}
    for index in range(history_runs - 2):  # the first run and the daemon's full run are on record
        retag_catalog(catalog, f"history-{index}")
        celery.timed_run(catalog, "celery", {"succeeded": n})
    retag_catalog(catalog, "last")
    seconds, _ = celery.timed_run(catalog, "celery", {"succeeded": n}, cpu_roots=(worker_pid,))
    cpu, database_cpu = celery.last_farm_cpu_seconds, celery.last_database_cpu_seconds
    print(
        f"celery, after {history_runs} full runs: {seconds:8.2f} s ({seconds / first_seconds:.2f}× the first), "
        f"farm CPU {cpu:.2f} s ({cpu / first_cpu:.2f}× the first's), PostgreSQL backends' CPU "
        f"{database_cpu:.2f} s ({database_cpu / max(first_database_cpu, 0.01):.2f}× the first's)"
    )
    return {
        "celery_history_runs": history_runs,
        "celery_last_seconds": round(seconds, 3),
        "celery_last_over_first_seconds": round(seconds / first_seconds, 2),
        "celery_last_farm_cpu_seconds": round(cpu, 2),
        "celery_last_over_first_farm_cpu": round(cpu / first_cpu, 2),
        "celery_database_cpu_seconds": round(first_database_cpu, 2),
        "celery_last_database_cpu_seconds": round(database_cpu, 2),
        "celery_last_over_first_database_cpu": round(database_cpu / max(first_database_cpu, 0.01), 2),
    }


def core_again(
    root: Path, targets: list[Target], core_seconds: float, core_memo_cpu: float
) -> dict[str, float]:
    """The core-only renders timed again once the farm's runs are done, printed and returned as
    ``core_*_after`` figures with their drift from the first timing: on a machine whose speed
    moves over minutes (a shared host), a ratio is only as steady as its denominator, and the
    drift says how far to trust one bench's ratios. The ratios keep the first timing."""
    seconds, _, memo_cpu = time_core_only(root, targets)
    drift, memo_drift = 100 * (seconds / core_seconds - 1), 100 * (memo_cpu / core_memo_cpu - 1)
    print(
        f"core only, again after the runs: {seconds:8.2f} s ({drift:+.1f} % from the first timing; "
        f"with a document memo {memo_cpu:.2f} CPU-s, {memo_drift:+.1f} %)"
    )
    return {
        "core_only_seconds_after": round(seconds, 3),
        "core_memo_cpu_seconds_after": round(memo_cpu, 3),
        "core_drift_percent": round(drift, 1),
        "core_memo_drift_percent": round(memo_drift, 1),
    }


FILE_CREATE_PROBES = 300  # files created to time the work folder's filesystem
FILE_CREATE_BYTES = 2_600  # about a rendered output's size


def file_create_cpu_us(work: Path) -> float:
    """The CPU (user and system) this process spends creating, writing and closing one new file of
    an output's size in a fresh folder of ``work``, in microseconds (the files are removed after).

    A worker creates a file for each new blob (0.56 per rendered target here), and what a create
    costs depends on the filesystem's state, not on the farm: on one machine of this kind it
    moved between 20 and 700 microseconds within an hour on the same ext4 filesystem, the
    system CPU of a fleet run's blob writes with it. The figure, timed before and after the runs,
    says how much of a run's farm CPU per target the filesystem took that day."""
    folder = Path(tempfile.mkdtemp(prefix="file-create-", dir=work))
    data = b"x" * FILE_CREATE_BYTES
    before = resource.getrusage(resource.RUSAGE_SELF)
    for index in range(FILE_CREATE_PROBES):
        descriptor = os.open(folder / f"probe-{index}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        os.write(descriptor, data)
        os.close(descriptor)
    after = resource.getrusage(resource.RUSAGE_SELF)
    shutil.rmtree(folder)
    spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return round(1e6 * spent / FILE_CREATE_PROBES, 1)


def file_create_figures(work: Path, suffix: str = "") -> dict[str, float]:
    cost = file_create_cpu_us(work)
    print(
        f"creating a file in the bench's folder{' after the runs' if suffix else ''}: {cost:8.1f} µs of CPU"
    )
    return {f"file_create_cpu_us{suffix}": cost}


def farm_cpu_per_target_ms(farm_cpu_seconds: float, core_memo_cpu_seconds: float, n: int) -> float:
    """The farm's CPU per rendered target beyond the render itself, in milliseconds: its processes'
    CPU during a full run less the CPU of the core's renders of the same targets with a document
    memo (as a worker renders them), over the targets."""
    return round(1000 * (farm_cpu_seconds - core_memo_cpu_seconds) / n, 3)


@dataclass(frozen=True)
class StoreGrowth:
    """What a run added to the object store (a folder: a new blob is a new file) and the database."""

    objects: int
    object_bytes: int
    database_bytes: int


def folder_blobs(folder: Path) -> tuple[int, int]:
    """(blobs, bytes) of the folder object store at ``folder``: the rows of its small-blob file
    and its blob files, as the store lists them."""
    from farm.store.objects import LocalObjectStore

    sizes = [blob.size for blob in LocalObjectStore(folder).list_blobs()]
    return len(sizes), sum(sizes)


def postgres_bytes(url: str) -> int:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            connection.execute(text("CHECKPOINT"))
            return int(connection.scalar(text("SELECT pg_database_size(current_database())")))
    finally:
        engine.dispose()


def sqlite_bytes(home: Path) -> int:
    return sum(path.stat().st_size for path in home.glob("farm.db*"))


def job_timeline(home: Path) -> dict[str, float]:
    """How the jobs of the first run that had any used the pool, read from its rows in the SQLite
    database under ``home`` (``render_jobs``: when each was claimed and recorded, by which worker):
    the seconds from the start of the run's planning to its first claim, how many workers held a
    job on average, and the time a worker spent holding none (committing the last, waiting for
    the write lock, the pool's round trip) as percentiles and as a share of the jobs' span.
    Nothing where there is no such run."""
    import sqlite3

    def moment(text: str) -> float:
        return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()

    connection = sqlite3.connect(f"{(home / 'farm.db').resolve().as_uri()}?mode=ro", uri=True)
    try:
        run = connection.execute(
            "SELECT fleet_runs.id, fleet_runs.created_at FROM fleet_runs "
            "WHERE EXISTS (SELECT 1 FROM render_jobs WHERE render_jobs.run_id = fleet_runs.id) "
            "ORDER BY fleet_runs.created_at LIMIT 1"
        ).fetchone()
        if run is None:
            return {}
        rows = connection.execute(
            "SELECT claimed_by, started_at, finished_at FROM render_jobs "
            "WHERE run_id = ? AND started_at IS NOT NULL AND finished_at IS NOT NULL",
            (run[0],),
        ).fetchall()
    finally:
        connection.close()
    by_worker: dict[str, list[tuple[float, float]]] = {}
    for worker, started, finished in rows:
        by_worker.setdefault(worker, []).append((moment(started), moment(finished)))
    # a worker holds its next job while it records the last (farm.fleet.jobs.run_jobs): its busy
    # time is the union of its jobs' spans, and a gap is a hole in that union
    busy = {worker: _union(sorted(worker_jobs)) for worker, worker_jobs in by_worker.items()}
    jobs = [span for spans in busy.values() for span in spans]
    first, last = min(start for start, _ in jobs), max(end for _, end in jobs)
    span = max(last - first, 1e-9)
    gaps = sorted(
        later[0] - earlier[1] for spans in busy.values() for earlier, later in itertools.pairwise(spans)
    )

    def percentile(share: float) -> float:
        return round(1000 * gaps[int(share * (len(gaps) - 1))], 2) if gaps else 0.0

    return {
        "seconds_before_first_claim": round(first - moment(run[1]), 3),
        "jobs_in_parallel": round(sum(end - start for start, end in jobs) / span, 2),
        "gap_p50_ms": percentile(0.5),
        "gap_p90_ms": percentile(0.9),
        "gap_percent_of_span": round(100 * sum(gaps) / (span * len(by_worker)), 1),
    }


def _union(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Sorted (start, end) spans merged where they overlap."""
    merged: list[tuple[float, float]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


@contextmanager
def store_growth(objects: Path, database_bytes: Callable[[], int]) -> Iterator[list[StoreGrowth]]:
    """Measures what the block adds to the store; the one-element list is filled on exit."""
    found: list[StoreGrowth] = []
    files, size, database = *folder_blobs(objects), database_bytes()
    yield found
    files_after, size_after = folder_blobs(objects)
    found.append(StoreGrowth(files_after - files, size_after - size, database_bytes() - database))


def _snapshot_source(root: Path) -> Path:
    """A copy of the farm's source with its bytecode compiled, as ``pip install`` leaves a package:
    without it, where PYTHONDONTWRITEBYTECODE is set, every process of every run would compile
    each module it imports (about 0.2 s for a worker's), which no installed farm does."""
    import compileall

    for package in ("farm", "workers", "migrations"):
        shutil.copytree(ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
        if not compileall.compile_dir(root / package, quiet=1):
            raise RuntimeError(f"bench: could not compile {root / package}")
    return root


def _base_env(source: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env["PYTHONPATH"] = str(source)
    return env


# ---------------------------------------------------------------------------------------------
# Celery: a PostgreSQL database, a queue and a worker, all removed afterwards
# ---------------------------------------------------------------------------------------------


@contextmanager
def bench_database(admin_url: str) -> Iterator[str]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from farm.store.db import normalize_database_url

    admin_url = normalize_database_url(admin_url)
    name = f"farm_bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def forget_queue(broker: str, queue: str) -> None:
    """Remove the queue's keys, and unacked messages bound for it, from Redis."""
    import redis

    client = redis.Redis.from_url(broker)
    try:
        for key in client.scan_iter(match=f"{queue}*"):
            client.delete(key)
        for binding in ("_kombu.binding", "_kombu.binding_permanent"):  # kombu's, per versioned queue
            for key in client.scan_iter(match=f"{binding}.{queue}*"):
                client.delete(key)
        for tag, payload in client.hscan_iter("unacked"):
            try:
                _message, exchange, routing_key = json.loads(payload)
            except (ValueError, TypeError):
                continue
            if any(name == queue or name.startswith(f"{queue}.") for name in (exchange, routing_key)):
                client.hdel("unacked", tag)
                client.zrem("unacked_index", tag)
    finally:
        client.close()


@contextmanager
def celery_worker(env: dict[str, str], cwd: Path, queue: str, processes: int) -> Iterator[int]:
    """A Celery worker with ``processes`` pool processes; yields its pid once it is ready."""
    from farm.identity.fingerprint import core_version, versioned_queue

    log_path = cwd / "worker.log"
    with open(log_path, "wb") as log:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "workers.celery_app",
                "worker",
                f"--concurrency={processes}",
                "-Q",
                versioned_queue(queue, core_version()),  # where farm run sends this core's jobs
                "-n",
                f"{queue}@%h",
                "--without-gossip",
                "--without-mingle",
                "--loglevel=INFO",
            ],
            env=env,
            cwd=cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 120
        while b" ready." not in log_path.read_bytes():
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Celery worker did not start:\n{log_path.read_text()}")
            time.sleep(0.05)
        yield worker.pid
    finally:
        with suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()


# ---------------------------------------------------------------------------------------------


PLAN_SIZES = (2_000, 100_000)


def bench_plan(work: Path, clusters: int) -> dict[str, float]:
    """``farm plan``'s planning path at each of ``PLAN_SIZES``, on an embedded SQLite database with
    no earlier run (every target is added), each size in a fresh process as a ``farm plan`` runs.

    The catalog's files are flushed to disk before that process starts: the snapshot's one
    ``syncfs`` flushes the whole filesystem, and a catalog a user plans was not written a moment
    before (the bench's own writes are not the planner's cost)."""
    import farm

    source = Path(farm.__file__).resolve().parent.parent
    figures: dict[str, float] = {}
    for size in PLAN_SIZES:
        catalog = work / f"plan-catalog-{size}"
        write_catalog(catalog, size, clusters)
        os.sync()
        measured = subprocess.run(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--measure-plan",
                str(catalog),
                str(work / f"plan-home-{size}"),
            ],
            env=os.environ | {"PYTHONPATH": str(source)},
            check=True,
            capture_output=True,
            text=True,
        )
        plan = json.loads(measured.stdout.splitlines()[-1])
        n, plan_seconds = plan["targets"], plan["plan_seconds"]
        print(
            f"plan, {n:>7} targets:  load {plan['load_seconds']:6.2f} s, plan {plan_seconds:6.2f} s  "
            f"({n / plan_seconds:,.0f} targets/s planning; a second plan in the same process "
            f"{plan['second_plan_seconds']:.2f} s, {n / plan['second_plan_seconds']:,.0f} targets/s)"
        )
        figures[f"plan_{size}_targets"] = n
        figures[f"plan_{size}_load_seconds"] = round(plan["load_seconds"], 3)
        figures[f"plan_{size}_seconds"] = round(plan_seconds, 3)
        figures[f"plan_{size}_targets_per_second"] = round(n / plan_seconds, 1)
        figures[f"plan_{size}_second_plan_seconds"] = round(plan["second_plan_seconds"], 3)
    return figures


def measure_plan(catalog: Path, home: Path) -> dict[str, float]:
    """What ``farm plan CATALOG`` does, timed: load the catalog, then plan it (the baseline
    look-up, the snapshot stored, every target keyed and asked of the caches); then plan it once
    more in a second home, as a long-running process (the API) plans after its first plan."""
    from farm.catalog import load_catalog
    from farm.fleet.preview import latest_run_of_fleet, preview, run_baseline
    from farm.settings import load_settings
    from farm.store.context import open_storage
    from farm.store.migrate import prepare_database

    def plan_once(folder: Path) -> tuple[int, float]:
        storage = open_storage(load_settings(home=folder))
        prepare_database(storage)
        planning = time.perf_counter()
        latest = latest_run_of_fleet(storage, snapshot.name)
        baseline = run_baseline(storage, latest) if latest else None
        plan = preview(storage, snapshot, baseline, source="bench")
        seconds = time.perf_counter() - planning
        storage.close()
        return plan.total, seconds

    loading = time.perf_counter()
    snapshot = load_catalog(catalog)
    load_seconds = time.perf_counter() - loading
    targets, seconds = plan_once(home)
    snapshot = load_catalog(catalog)  # a new snapshot object: its requests are hashed again
    _, second_seconds = plan_once(home.with_name(home.name + "-again"))
    return {
        "targets": targets,
        "load_seconds": load_seconds,
        "plan_seconds": seconds,
        "second_plan_seconds": second_seconds,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--targets", type=int, default=2000, help="synthetic targets (default 2000)")
    parser.add_argument("--clusters", type=int, default=20, help="ClusterProfiles (default 20)")
    parser.add_argument("--celery-processes", type=int, default=2, help="Celery pool processes (default 2)")
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="PostgreSQL admin URL")
    parser.add_argument("--broker", default=DEFAULT_BROKER, help="Redis broker URL")
    parser.add_argument("--local-only", action="store_true", help="skip the Celery executor")
    parser.add_argument(
        "--history-runs",
        type=int,
        default=5,
        help="full Celery runs before the one compared with the first (default 5; 1 skips the leg)",
    )
    parser.add_argument("--batch-size", type=int, default=0, help="FARM_BATCH_SIZE (default: the farm's)")
    parser.add_argument(
        "--plan-only", action="store_true", help="only time planning (farm plan) at 2,000 and 100,000 targets"
    )
    parser.add_argument(
        "--no-plan",
        action="store_true",
        help="skip the planning figures (farm plan at 2,000 and 100,000 targets)",
    )
    parser.add_argument("--measure-plan", nargs=2, metavar=("CATALOG", "HOME"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.measure_plan:  # the fresh process bench_plan times one plan size in
        print(json.dumps(measure_plan(*map(Path, options.measure_plan))))
        return 0
    if options.plan_only:
        with tempfile.TemporaryDirectory(prefix="farm-bench-plan-") as temp:
            figures = bench_plan(Path(temp), options.clusters)
        print(json.dumps(figures, sort_keys=True))
        return 0
    if options.targets < 1:
        parser.error("--targets: must be at least 1")
    cores = os.cpu_count() or 1
    started = time.perf_counter()

    with tempfile.TemporaryDirectory(prefix="farm-bench-") as temp:
        work = Path(temp)
        source = _snapshot_source(work / "source")
        sys.path.insert(0, str(source))
        catalog = work / "catalog"
        targets = write_catalog(catalog, options.targets, options.clusters)
        n = len(targets)
        applications = len({t.application for t in targets})
        clusters = len({t.cluster for t in targets})
        print(f"{n} targets: {applications} applications × {clusters} ClusterProfiles; {cores} cores")

        core_seconds, core_memo_seconds, core_memo_cpu = time_core_only(catalog, targets)
        print(f"core only, 1 process:          {core_seconds:8.2f} s  ({n / core_seconds:.0f} renders/s)")
        print(
            f"  with a document memo:        {core_memo_seconds:8.2f} s  ({n / core_memo_seconds:.0f} renders/s, "
            "each document parsed once, as a worker renders)"
        )
        create_figures = file_create_figures(work)

        # Local executor: embedded SQLite under a temporary FARM_HOME, a process per core.
        batch = {"FARM_BATCH_SIZE": str(options.batch_size)} if options.batch_size else {}
        local_env = _base_env(source) | {"FARM_HOME": str(work / "local-home")} | batch
        local = Farm(local_env, work)
        local.run("db", "upgrade")
        local_home = work / "local-home"
        with store_growth(local_home / "objects", lambda: sqlite_bytes(local_home)) as local_growth:
            local_seconds, local_memory = local.timed_run(catalog, "local", {"succeeded": n})
        local_cpu_seconds = local.last_cpu_seconds
        with store_growth(local_home / "objects", lambda: sqlite_bytes(local_home)) as local_rerun_growth:
            local_rerun_seconds, _ = local.timed_run(catalog, "local", {"cached": n})
        local_floor = core_seconds / cores
        print(
            f"farm run, local ({cores} procs):     {local_seconds:8.2f} s  "
            f"ratio {local_seconds / local_floor:.2f} "
            f"({local_seconds / (core_memo_seconds / cores):.2f} to the core with a document memo)"
        )
        print(
            f"  no-change re-run:            {local_rerun_seconds:8.2f} s  "
            f"ratio {local_rerun_seconds / local_floor:.2f}, "
            f"{100 * local_rerun_seconds / local_seconds:.1f} % of the full run"
        )
        cpu = cpu_figures("local", local_cpu_seconds, local.last_cpu_seconds, core_seconds)
        assert local_memory is not None
        print(
            f"peak worker RSS, local:        {local_memory.peak_child_mib:8.1f} MiB per process, "
            f"{local_memory.peak_tree_mib:.1f} MiB for farm run and its pool"
        )
        daemon = _daemon_runs(
            _base_env(source) | {"FARM_HOME": str(work / "daemon-home")} | batch, work, catalog, n, again=True
        )
        daemon_seconds, daemon_rerun_seconds, daemon_memory = (
            daemon.seconds,
            daemon.rerun_seconds,
            daemon.memory,
        )
        print(
            f"farm run, local, daemon:       {daemon_seconds:8.2f} s  ratio {daemon_seconds / local_floor:.2f} "
            f"(the daemon started beforehand, as a Celery worker is)"
        )
        print(
            f"  no-change re-run:            {daemon_rerun_seconds:8.2f} s  "
            f"ratio {daemon_rerun_seconds / local_floor:.2f}, "
            f"{100 * daemon_rerun_seconds / daemon_seconds:.1f} % of the full run through the daemon"
        )
        cpu |= cpu_figures("daemon", daemon.cpu_seconds, daemon.rerun_cpu_seconds, core_seconds)
        timeline = job_timeline(work / "daemon-home")
        if timeline:
            print(
                f"  its jobs:                    {timeline['jobs_in_parallel']:.2f} workers busy, the first claimed "
                f"{timeline['seconds_before_first_claim']:.2f} s after planning began; a worker holding none "
                f"p50 {timeline['gap_p50_ms']:.1f} ms, p90 {timeline['gap_p90_ms']:.1f} ms, "
                f"{timeline['gap_percent_of_span']:.1f} % of their span"
            )
            cpu |= {f"daemon_{name}": value for name, value in timeline.items()}
        cpu |= again_figures(daemon, local_floor, core_seconds, core_memo_cpu, n)
        print(
            f"peak worker RSS, daemon:       {daemon_memory.peak_child_mib:8.1f} MiB per process, "
            f"{daemon_memory.peak_tree_mib:.1f} MiB for the daemon and its pool"
        )
        print(
            f"  written to storage:          {daemon.write_bytes / 2**20:8.1f} MiB by the daemon and its pool "
            f"({daemon.write_bytes / n / 1024:.1f} KiB per target: the database's log and checkpoints, the "
            f"blobs); no-change re-run {daemon.rerun_write_bytes / n / 1024:.1f} KiB per target"
        )
        cpu |= {
            "daemon_written_kib_per_target": round(daemon.write_bytes / n / 1024, 1),
            "daemon_rerun_written_kib_per_target": round(daemon.rerun_write_bytes / n / 1024, 2),
        }
        figures = (
            create_figures
            | {
                "daemon_seconds": round(daemon_seconds, 3),
                "daemon_ratio": round(daemon_seconds / local_floor, 2),
                "daemon_rerun_seconds": round(daemon_rerun_seconds, 3),
                "daemon_rerun_percent_of_full": round(100 * daemon_rerun_seconds / daemon_seconds, 2),
                "daemon_peak_worker_rss_mib": round(daemon_memory.peak_child_mib, 1),
                "daemon_peak_tree_rss_mib": round(daemon_memory.peak_tree_mib, 1),
                "targets": n,
                "applications": applications,
                "clusters": clusters,
                "cores": cores,
                "batch_size": options.batch_size or None,
                "core_only_seconds": round(core_seconds, 3),
                "core_renders_per_second": round(n / core_seconds, 1),
                "core_memo_seconds": round(core_memo_seconds, 3),
                "core_memo_cpu_seconds": round(core_memo_cpu, 3),
                "local_ratio_to_memo_core": round(local_seconds / (core_memo_seconds / cores), 2),
                "local_processes": cores,
                "local_seconds": round(local_seconds, 3),
                "local_ratio": round(local_seconds / local_floor, 2),
                "local_rerun_seconds": round(local_rerun_seconds, 3),
                "local_rerun_ratio": round(local_rerun_seconds / local_floor, 2),
                "local_rerun_percent_of_full": round(100 * local_rerun_seconds / local_seconds, 2),
                "local_peak_worker_rss_mib": round(local_memory.peak_child_mib, 1),
                "local_peak_tree_rss_mib": round(local_memory.peak_tree_mib, 1),
                "daemon_farm_cpu_seconds": round(daemon.farm_cpu_seconds, 2),
                "daemon_farm_cpu_ms_per_target": farm_cpu_per_target_ms(
                    daemon.farm_cpu_seconds, core_memo_cpu, n
                ),
            }
            | cpu
            | growth_figures("local", local_growth[0], local_rerun_growth[0], n)
        )
        print(
            "farm CPU per target beyond the render, through the daemon: "
            f"{figures['daemon_farm_cpu_ms_per_target']:.3f} ms"
        )
        if not options.no_plan:
            figures |= bench_plan(work, options.clusters)
        if options.local_only:
            figures |= core_again(catalog, targets, core_seconds, core_memo_cpu)
            figures |= file_create_figures(work, "_after")
            figures["bench_seconds"] = round(time.perf_counter() - started, 1)
            print(json.dumps(figures, sort_keys=True))
            return 0

        # Celery executor: PostgreSQL database, Redis broker, one worker with N pool processes.
        queue = f"farm-bench-{uuid.uuid4().hex[:12]}"
        with bench_database(options.postgres) as database_url:
            celery_env = (
                _base_env(source)
                | {
                    "FARM_HOME": str(work / "celery-home"),
                    "FARM_DATABASE_URL": database_url,
                    "FARM_OBJECT_STORE": str(work / "celery-objects"),
                    "FARM_BROKER_URL": options.broker,
                    "FARM_CELERY_QUEUE": queue,
                }
                | batch
            )
            celery = Farm(celery_env, work, database_url=database_url)
            celery.run("db", "upgrade")
            celery.run("keys", "generate")
            celery.run("keys", "trust", str(work / "celery-home" / "keys" / "signing.pub"))
            try:
                with celery_worker(celery_env, work, queue, options.celery_processes) as worker_pid:
                    celery_objects = work / "celery-objects"
                    with store_growth(celery_objects, lambda: postgres_bytes(database_url)) as growth:
                        celery_seconds, celery_memory = celery.timed_run(
                            catalog,
                            "celery",
                            {"succeeded": n},
                            sampler_root=worker_pid,
                            cpu_roots=(worker_pid,),
                        )
                    celery_cpu_seconds, celery_farm_cpu = (
                        celery.last_cpu_seconds,
                        celery.last_farm_cpu_seconds,
                    )
                    first = (celery_seconds, celery_farm_cpu, celery.last_database_cpu_seconds)
                    with store_growth(celery_objects, lambda: postgres_bytes(database_url)) as rerun_growth:
                        celery_rerun_seconds, _ = celery.timed_run(catalog, "celery", {"cached": n})
                    celery_rerun_cpu_seconds = celery.last_cpu_seconds
                    retag_catalog(catalog)  # the same fleet, all new outputs, for the daemon's full run
                    celery_daemon = _daemon_runs(
                        celery_env,
                        work,
                        catalog,
                        n,
                        "celery",
                        sampler_root=worker_pid,
                        database_url=database_url,
                    )
                    history = celery_history(celery, catalog, n, worker_pid, options.history_runs, first)
            finally:
                forget_queue(options.broker, queue)
        celery_floor = core_seconds / options.celery_processes
        print(
            f"farm run, celery ({options.celery_processes} procs):    {celery_seconds:8.2f} s  "
            f"ratio {celery_seconds / celery_floor:.2f}"
        )
        print(
            f"  no-change re-run:            {celery_rerun_seconds:8.2f} s  "
            f"ratio {celery_rerun_seconds / celery_floor:.2f}"
        )
        figures |= cpu_figures("celery", celery_cpu_seconds, celery_rerun_cpu_seconds, core_seconds)
        celery_daemon_seconds, celery_daemon_rerun_seconds = (
            celery_daemon.seconds,
            celery_daemon.rerun_seconds,
        )
        print(
            f"farm run, celery, daemon:      {celery_daemon_seconds:8.2f} s  "
            f"ratio {celery_daemon_seconds / celery_floor:.2f} (planning in a daemon started beforehand)"
        )
        print(
            f"  no-change re-run:            {celery_daemon_rerun_seconds:8.2f} s  "
            f"ratio {celery_daemon_rerun_seconds / celery_floor:.2f}, "
            f"{100 * celery_daemon_rerun_seconds / celery_daemon_seconds:.1f} % of the full run through the daemon"
        )
        print(
            "farm CPU per target beyond the render, Celery through the daemon: "
            f"{farm_cpu_per_target_ms(celery_daemon.farm_cpu_seconds, core_memo_cpu, n):.3f} ms "
            f"(the daemon, the worker and farm run); PostgreSQL's backends "
            f"{1000 * celery_daemon.database_cpu_seconds / n:.3f} ms per target"
        )
        figures |= cpu_figures(
            "celery_daemon", celery_daemon.cpu_seconds, celery_daemon.rerun_cpu_seconds, core_seconds
        )
        assert celery_memory is not None
        print(
            f"peak worker RSS, celery:       {celery_memory.peak_child_mib:8.1f} MiB per process, "
            f"{celery_memory.peak_tree_mib:.1f} MiB for the worker and its pool"
        )
        figures |= core_again(catalog, targets, core_seconds, core_memo_cpu)
        figures |= file_create_figures(work, "_after")

    figures |= {
        "celery_processes": options.celery_processes,
        "celery_seconds": round(celery_seconds, 3),
        "celery_ratio": round(celery_seconds / celery_floor, 2),
        "celery_rerun_seconds": round(celery_rerun_seconds, 3),
        "celery_rerun_ratio": round(celery_rerun_seconds / celery_floor, 2),
        "celery_daemon_seconds": round(celery_daemon_seconds, 3),
        "celery_daemon_ratio": round(celery_daemon_seconds / celery_floor, 2),
        "celery_daemon_rerun_seconds": round(celery_daemon_rerun_seconds, 3),
        "celery_daemon_rerun_percent_of_full": round(
            100 * celery_daemon_rerun_seconds / celery_daemon_seconds, 2
        ),
        "celery_daemon_farm_cpu_seconds": round(celery_daemon.farm_cpu_seconds, 2),
        "celery_daemon_farm_cpu_ms_per_target": farm_cpu_per_target_ms(
            celery_daemon.farm_cpu_seconds, core_memo_cpu, n
        ),
        "celery_daemon_database_cpu_ms_per_target": round(1000 * celery_daemon.database_cpu_seconds / n, 3),
        "celery_peak_worker_rss_mib": round(celery_memory.peak_child_mib, 1),
        "celery_peak_tree_rss_mib": round(celery_memory.peak_tree_mib, 1),
        "celery_farm_cpu_seconds": round(celery_farm_cpu, 2),
        "celery_farm_cpu_ms_per_target": farm_cpu_per_target_ms(celery_farm_cpu, core_memo_cpu, n),
        "bench_seconds": round(time.perf_counter() - started, 1),
    }
    figures |= growth_figures("celery", growth[0], rerun_growth[0], n) | history
    print(json.dumps(figures, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
