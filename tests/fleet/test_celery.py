"""Fleet runs on real Celery workers: Redis broker, PostgreSQL database, worker subprocesses.

Every test starts ``celery -A workers.celery_app worker`` as a subprocess in its own session
(process group), with FARM_* variables pointing at a fresh PostgreSQL database, a temporary object
folder and signing key, Redis at 127.0.0.1:6379 and a queue of its own, and drives ``farm`` as a
subprocess with the same variables. Teardown kills every worker's process group and removes the
test queue's keys from Redis. A missing Redis is a test failure, not a skip.

The subprocesses import the farm from a copy of its source taken once per session, the way one
release is deployed to the planner and every worker. The action key covers a digest of the core's
source, so an edit to the working tree between planning and rendering would otherwise (rightly)
fail the jobs with ``action_key_mismatch``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
from chart_repository import ChartRepository
from conftest_store import DatabaseFactory
from sqlalchemy import func, select

from farm.identity.fingerprint import core_version, versioned_queue
from farm.settings import load_settings
from farm.store import models
from farm.store.context import Storage, open_storage
from farm.store.db import session_scope

from .conftest import helm_environment, helm_runs, make_catalog, no_helm_environment, write_helm_app

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("FARM_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
WORKER_CONCURRENCY = 2
# Generous deadlines for waits on other processes; a healthy run takes a few seconds.
DEADLINE_SECONDS = 180.0
COMMAND_TIMEOUT_SECONDS = 300.0
FINAL_STATES = {"succeeded", "failed", "cached"}  # of a target
OPEN_JOB_STATES = {"planned", "queued", "running"}


@pytest.fixture(scope="session")
def redis_broker() -> str:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.RedisError as error:
        pytest.fail(f"Redis is not reachable at {REDIS_URL} ({error}); the Celery tests need it running")
    finally:
        client.close()
    return REDIS_URL


@pytest.fixture(scope="session")
def farm_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One snapshot of the farm's packages for every subprocess of the session (PYTHONPATH)."""
    root = tmp_path_factory.mktemp("farm-source")
    for package in ("farm", "workers", "migrations"):
        shutil.copytree(ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def wait_until(
    condition: Callable[[], bool],
    what: str,
    *,
    poll: float = 0.05,
    check: Callable[[], None] | None = None,
    describe: Callable[[], str] | None = None,
) -> None:
    """Poll ``condition`` until it holds; ``check`` may raise early (e.g. a worker died)."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        if check is not None:
            check()
        if time.monotonic() > deadline:
            details = describe() if describe is not None else ""
            raise AssertionError(f"gave up after {DEADLINE_SECONDS:.0f}s waiting for {what}\n{details}")
        time.sleep(poll)


@dataclass
class CeleryFarm:
    """FARM_* settings for one test, its worker processes and handles on its database."""

    root: Path
    env: dict[str, str]
    queue: str
    storage: Storage
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start_worker(self, core: str | None = None) -> subprocess.Popen[bytes]:
        """A worker of this source's core, or (``core``) one that believes its core version is
        ``core``, as a worker of another release would during a rolling upgrade."""
        index = len(self.workers)
        log = open(self.root / f"worker-{index}.log", "wb")  # noqa: SIM115 - closed by the child's exit
        # Patched before anything imports it, so the planner's, the worker's and the queue's
        # view of the core version are all the other release's.
        launcher = (
            "import sys, farm.identity.fingerprint as f; "
            + (f"f.core_version = lambda: {core!r}; " if core else "")
            + "from celery.__main__ import main; sys.argv[0] = 'celery'; sys.exit(main())"
        )
        command = [
            sys.executable,
            "-c",
            launcher,
            "-A",
            "workers.celery_app",
            "worker",
            f"--concurrency={WORKER_CONCURRENCY}",
            "-Q",
            versioned_queue(self.queue, core or core_version()),
            "-n",
            f"{self.queue}-{index}@%h",
            "--without-gossip",
            "--without-mingle",
            "--loglevel=INFO",
        ]
        process = subprocess.Popen(
            command, env=self.env, cwd=self.root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        self.workers.append(process)
        return process

    def start_farm_worker(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """``farm worker ARGS`` (the command a deployment runs), logging to worker-<index>.log."""
        index = len(self.workers)
        log = open(self.root / f"worker-{index}.log", "wb")  # noqa: SIM115 - closed by the child's exit
        process = subprocess.Popen(
            [sys.executable, "-m", "farm", "worker", "-c", str(WORKER_CONCURRENCY), *args],
            env={**self.env, **(env or {})},
            cwd=self.root,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self.workers.append(process)
        return process

    def worker_log(self, index: int) -> str:
        return (self.root / f"worker-{index}.log").read_text(errors="replace")

    def describe(self, run_id: str) -> str:
        logs = "\n".join(f"--- worker {i}:\n{self.worker_log(i)[-6000:]}" for i in range(len(self.workers)))
        codes = sorted({t.error_code or "" for t in self.targets(run_id) if t.state == "failed"})
        jobs = sorted(job.state for job in self.jobs(run_id))
        return f"target counts {self.counts(run_id)}, jobs {jobs}, error codes {codes}\n{logs}"

    def check_workers_alive(self) -> None:
        for index, process in enumerate(self.workers):
            if process.returncode is None and process.poll() is not None:
                raise AssertionError(
                    f"worker {index} exited with status {process.returncode}:\n{self.worker_log(index)}"
                )

    @staticmethod
    def kill(process: subprocess.Popen[bytes]) -> None:
        """SIGKILL the worker's whole process group: the main process and its pool children."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def farm(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``farm ARGS`` to completion while checking the workers stay alive."""
        process = subprocess.Popen(
            [sys.executable, "-m", "farm", *args],
            env=self.env,
            cwd=self.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + COMMAND_TIMEOUT_SECONDS
        while process.poll() is None:
            try:
                self.check_workers_alive()
                if time.monotonic() > deadline:
                    raise AssertionError(f"farm {' '.join(args)} did not finish")
            except AssertionError:
                process.kill()
                process.communicate()
                raise
            time.sleep(0.05)
        stdout, stderr = process.communicate()
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)

    def farm_json(self, *args: str, status: int | None = 0) -> dict:
        result = self.farm(*args, "--json")
        if status is not None:
            assert result.returncode == status, result.stdout + result.stderr
        return json.loads(result.stdout)

    def counts(self, run_id: str) -> dict[str, int]:
        """Targets of the run by state."""
        with session_scope(self.storage.sessions) as session:
            rows = session.execute(
                select(models.RenderTarget.state, func.count())
                .where(models.RenderTarget.run_id == run_id)
                .group_by(models.RenderTarget.state)
            )
            return {state: count for state, count in rows}

    def targets(self, run_id: str) -> list[models.RenderTarget]:
        with session_scope(self.storage.sessions) as session:
            return list(
                session.scalars(select(models.RenderTarget).where(models.RenderTarget.run_id == run_id))
            )

    def jobs(self, run_id: str) -> list[models.RenderJob]:
        with session_scope(self.storage.sessions) as session:
            return list(session.scalars(select(models.RenderJob).where(models.RenderJob.run_id == run_id)))

    def shutdown(self) -> None:
        for process in self.workers:
            self.kill(process)
        self.storage.close()
        _forget_queue(self.queue)


def _forget_queue(queue: str) -> None:
    """Remove the test queue's keys, and unacked messages bound for it, from the shared Redis."""
    client = redis.Redis.from_url(REDIS_URL)
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


@pytest.fixture
def celery_farm(
    tmp_path: Path, databases: DatabaseFactory, key_dir: Path, redis_broker: str, farm_source: Path
) -> Iterator[CeleryFarm]:
    trusted = tmp_path / "trusted_signers"
    trusted.write_text((key_dir / "signing.pub").read_text())
    queue = f"farm-test-{uuid.uuid4().hex[:12]}"
    farm_env = {
        "FARM_HOME": str(tmp_path / ".farm"),
        "FARM_DATABASE_URL": databases.migrated("postgresql"),
        "FARM_OBJECT_STORE": str(tmp_path / "objects"),
        "FARM_SIGNING_KEY": str(key_dir / "signing.key"),
        "FARM_TRUSTED_SIGNERS": str(trusted),
        "FARM_BROKER_URL": redis_broker,
        "FARM_CELERY_QUEUE": queue,
    }
    env = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    env.update(farm_env)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = str(farm_source)  # the subprocesses run in tmp_path, so '' is not the repo
    settings = load_settings(
        home=farm_env["FARM_HOME"],
        database_url=farm_env["FARM_DATABASE_URL"],
        object_store=farm_env["FARM_OBJECT_STORE"],
    )
    farm = CeleryFarm(tmp_path, env, queue, open_storage(settings))
    try:
        yield farm
    finally:
        farm.shutdown()


def _celery_workers(jobs: list[models.RenderJob]) -> set[str]:
    return {job.claimed_by or "" for job in jobs if job.state == "succeeded"}


def test_a_full_run_completes_on_celery_workers(celery_farm: CeleryFarm, tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path / "catalog")
    celery_farm.start_worker()
    summary = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery")
    assert summary["state"] == "completed"
    assert summary["counts"]["succeeded"] == 11 and summary["failures"] == {}
    assert sum(summary["counts"].values()) == 11
    jobs = celery_farm.jobs(summary["run_id"])
    assert {job.state for job in jobs} == {"succeeded"} and len(jobs) == 4  # one batch per application
    assert all(job.attempts == 1 for job in jobs)
    assert all(target.output_digest for target in celery_farm.targets(summary["run_id"]))
    # Rendered by the Celery worker's pool processes, not by the farm command itself.
    assert all(name.startswith("celery@") for name in _celery_workers(jobs))
    verify = celery_farm.farm("verify", "--run", summary["run_id"])
    assert verify.returncode == 0, verify.stdout + verify.stderr
    output = celery_farm.farm("output", "app-2/cluster-b")
    assert output.returncode == 0 and "host: app-2.example.com" in output.stdout


def test_a_worker_whose_signing_key_is_not_trusted_fails_the_jobs_with_keys_untrusted_and_the_run_completes(
    celery_farm: CeleryFarm, tmp_path: Path
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=2, clusters=("cluster-a",))
    Path(celery_farm.env["FARM_TRUSTED_SIGNERS"]).write_text("")  # the worker's key is trusted no more
    celery_farm.start_worker()
    summary = celery_farm.farm_json(
        "run", str(catalog.root), "--executor", "celery", "--timeout", "120", status=1
    )
    assert summary["state"] == "completed_with_failures"
    assert summary["counts"]["failed"] == 2 and list(summary["failures"]) == ["keys.untrusted"]
    assert not any(target.output_digest for target in celery_farm.targets(summary["run_id"]))


def test_a_celery_run_handed_to_the_farm_daemon_is_planned_there_and_rendered_by_the_worker(
    celery_farm: CeleryFarm, tmp_path: Path
) -> None:
    catalog = make_catalog(tmp_path / "catalog")
    celery_farm.start_worker()
    started = celery_farm.farm("daemon", "start", "--idle", "300")
    assert started.returncode == 0, started.stderr
    try:
        summary = celery_farm.farm_json("run", str(catalog.root))  # Celery: the broker is set
        assert summary["state"] == "completed"
        assert summary["counts"]["succeeded"] == 11
        assert all(
            name.startswith("celery@") for name in _celery_workers(celery_farm.jobs(summary["run_id"]))
        )
        status = celery_farm.farm("daemon", "status")
        assert "1 commands served" in status.stdout, status.stdout
        log = (tmp_path / ".farm" / "daemon.log").read_text()
        assert f"farm run {catalog.root} --json in {tmp_path}: exit 0" in log
    finally:
        celery_farm.farm("daemon", "stop")


def test_incremental_runs_on_celery_render_only_what_changed(celery_farm: CeleryFarm, tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path / "catalog")
    celery_farm.start_worker()
    first = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery")
    assert first["counts"]["succeeded"] == 11
    second = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery")
    assert second["state"] == "completed"
    assert second["counts"]["cached"] == 11 and second["counts"]["succeeded"] == 0
    catalog.write_app("app-1", image="ghcr.io/example/app:v1.1.0")
    third = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery")
    assert third["counts"]["succeeded"] == 3 and third["counts"]["cached"] == 8
    rendered = {
        (t.application, t.cluster_profile)
        for t in celery_farm.targets(third["run_id"])
        if t.state == "succeeded"
    }
    assert rendered == {("app-1", c) for c in ("cluster-a", "cluster-b", "cluster-c")}
    diff = celery_farm.farm_json("diff", second["run_id"], third["run_id"])
    assert diff == {
        "added": [],
        "removed": [],
        "changed": ["app-1/cluster-a", "app-1/cluster-b", "app-1/cluster-c"],
        "fixed": [],
        "failed": [],
        "unchanged": 8,
    }


def test_a_broken_application_fails_only_its_own_targets_on_celery(
    celery_farm: CeleryFarm, tmp_path: Path
) -> None:
    catalog = make_catalog(tmp_path / "catalog")
    catalog.break_app("app-3")
    celery_farm.start_worker()
    summary = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery", status=1)
    assert summary["state"] == "completed_with_failures"
    assert summary["counts"]["succeeded"] == 8 and summary["counts"]["failed"] == 3
    assert list(summary["failures"]) == ["property.invalid"]
    failures = summary["failures"]["property.invalid"]
    assert {(f["application"], f["cluster"]) for f in failures} == {
        ("app-3", c) for c in ("cluster-a", "cluster-b", "cluster-c")
    }
    assert all('component "app-3"' in f["message"] for f in failures)
    targets = celery_farm.targets(summary["run_id"])
    assert {t.application for t in targets if t.state == "succeeded"} == {"app-0", "app-1", "app-2"}
    assert all(t.error_code == "property.invalid" for t in targets if t.state == "failed")


def test_a_celery_worker_with_helm_on_its_path_renders_a_helm_template_application(
    celery_farm: CeleryFarm, tmp_path: Path, chart_repository: ChartRepository
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a", "cluster-b"))
    write_helm_app(catalog, "charted", chart_repository.url)
    environment = helm_environment(tmp_path)
    celery_farm.env.update(environment)
    celery_farm.start_worker()
    summary = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery")
    assert summary["state"] == "completed"
    assert summary["counts"]["succeeded"] == 4 and sum(summary["counts"].values()) == 4
    assert all(name.startswith("celery@") for name in _celery_workers(celery_farm.jobs(summary["run_id"])))
    output = celery_farm.farm("output", "charted/cluster-a")
    assert output.returncode == 0, output.stderr
    assert "kind: Deployment" in output.stdout and "image: ghcr.io/example/web:1.2.0" in output.stdout
    assert len(helm_runs(environment, "pull")) == 1  # fetched once, at planning
    asked = helm_runs(environment)
    assert len(asked) == 2  # one chart render per target of the helm application, from its archive
    assert all("--repo" not in argv and argv[2].endswith("/chart.tgz") for argv in asked)


def test_a_celery_worker_without_helm_fails_the_chart_targets_saying_a_helm_binary_is_needed(
    celery_farm: CeleryFarm, tmp_path: Path, chart_repository: ChartRepository
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=1, clusters=("cluster-a", "cluster-b"))
    write_helm_app(catalog, "charted", chart_repository.url)
    celery_farm.env.update(no_helm_environment(tmp_path))
    celery_farm.start_worker()
    summary = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery", status=1)
    assert summary["counts"]["succeeded"] == 2 and summary["counts"]["failed"] == 2
    failures = summary["failures"]["chart.render_needed"]
    assert {f["application"] for f in failures} == {"charted"}
    assert all("needs a helm binary (helm template)" in f["message"] for f in failures)
    assert all("the fleet workers run the helm on their PATH" in f["message"] for f in failures)


def test_a_run_s_jobs_travel_a_few_per_message_and_each_is_recorded_once(
    celery_farm: CeleryFarm, tmp_path: Path
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=27)  # 27 jobs
    celery_farm.env["FARM_CELERY_JOBS_PER_MESSAGE"] = "2"
    celery_farm.start_worker()
    summary = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery")
    assert summary["state"] == "completed" and summary["counts"]["succeeded"] == 80, summary
    jobs = celery_farm.jobs(summary["run_id"])
    assert len(jobs) == 27 and {job.state for job in jobs} == {"succeeded"}
    assert all(job.attempts == 1 for job in jobs)
    received = re.findall(r"Task farm\.render_jobs\[[^\]]+\] received", celery_farm.worker_log(0))
    # messages of two jobs while 16 or more are left (a quarter per worker, as if 2 workers), then one
    assert len(received) == 6 + 15, celery_farm.worker_log(0)[-3000:]
    verify = celery_farm.farm("verify", "--run", summary["run_id"])
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_worker_killed_mid_batch_loses_no_target_and_writes_no_output_twice(
    celery_farm: CeleryFarm, tmp_path: Path
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=27)  # 27 x 3 clusters minus one excluded = 80
    celery_farm.env["FARM_CELERY_JOBS_PER_MESSAGE"] = "2"  # the kill strands messages of two jobs too
    planned = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery", "--no-wait")
    run_id = planned["run_id"]
    assert planned["counts"]["queued"] == 80
    assert len(celery_farm.jobs(run_id)) == 27  # a batch per application

    worker = celery_farm.start_worker()
    wait_until(
        lambda: bool(set(celery_farm.counts(run_id)) & FINAL_STATES),
        "the first batch to be recorded",
        poll=0.01,
        check=celery_farm.check_workers_alive,
        describe=lambda: celery_farm.describe(run_id),
    )
    celery_farm.kill(worker)
    assert celery_farm.counts(run_id).get("failed", 0) == 0, celery_farm.describe(run_id)

    at_kill = celery_farm.jobs(run_id)
    done_at_kill = sum(job.state == "succeeded" for job in at_kill)
    open_at_kill = [job for job in at_kill if job.state in OPEN_JOB_STATES]
    assert done_at_kill >= 1 and open_at_kill, "the kill must land in the middle of the run"
    stranded = {job.id: job.claimed_by for job in at_kill if job.state == "running"}
    # a batch is recorded whole or not at all: a stranded batch has no target recorded
    for target in celery_farm.targets(run_id):
        if target.job_id in stranded:
            assert target.state == "queued", (target.application, target.cluster_profile, target.state)

    celery_farm.start_worker()
    reconcile = celery_farm.farm("reconcile", "--timeout", "0")
    assert reconcile.returncode == 0, reconcile.stdout + reconcile.stderr
    sent = re.fullmatch(r"re-sent (\d+) jobs?\n", reconcile.stdout)
    assert sent is not None, reconcile.stdout
    assert int(sent.group(1)) >= len(stranded)

    wait_until(
        lambda: not {job.state for job in celery_farm.jobs(run_id)} & OPEN_JOB_STATES,
        "every job of the run to finish",
        check=celery_farm.check_workers_alive,
        describe=lambda: celery_farm.describe(run_id),
    )
    status = celery_farm.farm_json("status", run_id, status=None)
    assert status["state"] == "completed", status

    # No target lost: every target rendered exactly once, each with an output.
    targets = celery_farm.targets(run_id)
    assert len(targets) == 80
    assert {target.state for target in targets} == {"succeeded"}
    assert all(target.output_digest for target in targets)
    # Every attempt is recorded: a job stranded in running by the kill was claimed again.
    jobs = celery_farm.jobs(run_id)
    for job in jobs:
        if job.id in stranded:
            assert job.attempts >= 2, (job.id, job.attempts)
            assert job.claimed_by != stranded[job.id]

    # Every output present and its signed evidence verifies.
    verify = celery_farm.farm("verify", "--run", run_id)
    assert verify.returncode == 0, verify.stdout + verify.stderr

    # No output written twice: one cache entry and one evidence record per action key (each
    # names its target), one output row per distinct content digest.
    keys = {target.action_key for target in targets}
    digests = {target.output_digest for target in targets}
    assert len(keys) == 80
    with session_scope(celery_farm.storage.sessions) as session:
        cache_rows = session.execute(
            select(models.ActionCacheEntry.action_key, models.ActionCacheEntry.output_digest)
        ).all()
        evidence = session.execute(
            select(models.EvidenceRecord.action_key, models.EvidenceRecord.target_id)
        ).all()
        output_rows = set(session.scalars(select(models.RenderOutput.digest)))
    assert sorted(key for key, _ in cache_rows) == sorted(keys)
    assert {target.action_key: target.output_digest for target in targets} == dict(cache_rows)
    assert sorted(evidence) == sorted((target.action_key, target.id) for target in targets)
    assert output_rows == digests


def test_a_worker_of_another_core_leaves_a_job_to_a_worker_of_its_planned_core(
    celery_farm: CeleryFarm, tmp_path: Path
) -> None:
    catalog = make_catalog(tmp_path / "catalog")
    other = celery_farm.start_worker(core="0.0.0+older-release")
    planned = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery", "--no-wait")
    run_id = planned["run_id"]
    time.sleep(3)  # the other core's worker is up and would have taken a job of its queue by now
    assert celery_farm.counts(run_id) == {"queued": 11}, celery_farm.describe(run_id)
    assert {job.state for job in celery_farm.jobs(run_id)} == {"queued"}

    celery_farm.start_worker()
    wait_until(
        lambda: not {job.state for job in celery_farm.jobs(run_id)} & OPEN_JOB_STATES,
        "every job of the run to finish on the matching worker",
        check=celery_farm.check_workers_alive,
        describe=lambda: celery_farm.describe(run_id),
    )
    assert celery_farm.counts(run_id) == {"succeeded": 11}, celery_farm.describe(run_id)
    assert not [t.error_code for t in celery_farm.targets(run_id) if t.error_code]
    assert other.poll() is None, "the other core's worker must not have died"
    assert "Task farm.render_job" not in celery_farm.worker_log(0), "the other core's worker got a job"


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _scrape(port: int) -> dict[str, float]:
    """Samples of the farm's metrics from a real /metrics endpoint, by name and labels."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()) if k != "le")
            if sample.name.startswith("farm_") and "le" not in sample.labels:
                samples[f"{sample.name}{{{labels}}}"] = sample.value
    return samples


def test_a_worker_serves_metrics_and_logs_json_lines_with_run_and_job_ids(
    celery_farm: CeleryFarm, tmp_path: Path
) -> None:
    catalog = make_catalog(tmp_path / "catalog")
    port = _free_port()
    celery_farm.start_farm_worker("--metrics-port", str(port), env={"FARM_LOG_FORMAT": "json"})
    wait_until(
        lambda: _scrape_or_none(port) is not None,
        "the worker's metrics endpoint",
        poll=0.2,
        check=celery_farm.check_workers_alive,
    )
    planned = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery", "--no-wait")
    run_id = planned["run_id"]
    wait_until(
        lambda: not {job.state for job in celery_farm.jobs(run_id)} & OPEN_JOB_STATES,
        "every job of the run to finish",
        check=celery_farm.check_workers_alive,
        describe=lambda: celery_farm.describe(run_id),
    )
    # A job's row is final before its worker observes the job's time and logs its end: wait for both.
    wait_until(
        lambda: _scrape(port).get("farm_job_seconds_count{}") == 4 and _every_job_logged(celery_farm),
        "the worker to observe and log the end of every job",
        poll=0.2,
        check=celery_farm.check_workers_alive,
    )
    samples = _scrape(port)
    assert samples["farm_jobs{state=succeeded}"] == 4
    assert samples["farm_jobs{state=queued}"] == 0 and samples["farm_queue_depth{}"] == 0
    assert samples["farm_render_seconds_count{}"] == 11  # observed in the pool processes
    assert samples["farm_job_seconds_count{}"] == 4
    assert samples["farm_render_seconds_sum{}"] > 0

    job_ids = {job.id for job in celery_farm.jobs(run_id)}
    lines = _json_log_lines(celery_farm)
    job_lines = [line for line in lines if line["logger"] == "farm.fleet.jobs"]
    assert len(job_lines) == 8, lines  # claimed and finished, per job
    assert {line["job_id"] for line in job_lines} == job_ids
    assert {line["run_id"] for line in job_lines} == {run_id}
    assert all({"time", "level", "message"} <= set(line) for line in lines)


def _json_log_lines(farm: CeleryFarm) -> list[dict]:
    """The worker's complete JSON log lines (the last one may still be being written)."""
    complete = farm.worker_log(0).split("\n")[:-1]
    return [json.loads(line) for line in complete if line.startswith("{")]


def _every_job_logged(farm: CeleryFarm) -> bool:
    """Whether the worker has logged the claim and the end of all four jobs."""
    lines = _json_log_lines(farm)
    return len([line for line in lines if line["logger"] == "farm.fleet.jobs"]) >= 8


def _scrape_or_none(port: int) -> dict[str, float] | None:
    try:
        return _scrape(port)
    except OSError:
        return None


EXAMPLE_FLEET = ROOT / "examples" / "fleet"


def _board(farm: CeleryFarm) -> dict[tuple[str, str], str]:
    from farm.store import qualification as records

    with session_scope(farm.storage.sessions) as session:
        return {(s.cluster_profile, s.selection): s.state for s in records.subjects(session)}


def test_farm_qualify_on_celery_renders_every_subject_on_a_worker_of_the_versioned_queue(
    celery_farm: CeleryFarm, tmp_path: Path
) -> None:
    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE_FLEET, root)
    celery_farm.start_worker()  # it consumes <queue>.<core version> only
    results = celery_farm.farm_json("qualify", str(root), "--executor", "celery")
    assert {r["state"] for r in results} == {"qualified"} and len(results) == 4
    assert ("prod-nginx", "ingress-class=internal") in {(r["cluster"], r["selection"]) for r in results}
    for result in results:
        jobs = celery_farm.jobs(result["run_id"])
        assert jobs and all(job.claimed_by.startswith("celery@") for job in jobs if job.claimed_by)
    assert set(_board(celery_farm).values()) == {"qualified"}
    verify = celery_farm.farm("verify", "--all")
    assert verify.returncode == 0 and "4 qualification statement(s) checked" in verify.stdout, verify.stdout


def test_requalify_on_run_sends_qualification_tasks_to_the_versioned_queue_and_a_worker_qualifies(
    celery_farm: CeleryFarm, tmp_path: Path
) -> None:
    root = tmp_path / "fleet"
    shutil.copytree(EXAMPLE_FLEET, root)
    # no FARM_QUALIFICATION_CATALOG: a qualification task names the stored snapshot it renders
    celery_farm.env |= {"FARM_QUALIFICATION_ON_RUN": "requalify"}
    celery_farm.start_worker()
    celery_farm.farm_json("qualify", str(root), "--executor", "celery")
    cluster = root / "clusters" / "prod-nginx.yaml"
    cluster.write_text(cluster.read_text().replace("letsencrypt-prod", "letsencrypt-other"))

    summary = celery_farm.farm_json("run", str(root), "--executor", "celery")
    assert summary["state"] == "completed"
    shutil.rmtree(root)  # the worker qualifies what the run recorded, not what a folder holds
    # The run marked both values stale and sent one farm.qualification.qualify task each.
    wait_until(
        lambda: set(_board(celery_farm).values()) == {"qualified"},
        "the worker to qualify the stale subjects again",
        poll=0.2,
        check=celery_farm.check_workers_alive,
        describe=lambda: f"board {_board(celery_farm)}\n{celery_farm.worker_log(0)[-6000:]}",
    )
    log = celery_farm.worker_log(0)
    assert log.count("farm.qualification.qualify") >= 2, log[-4000:]
    with session_scope(celery_farm.storage.sessions) as session:
        events = session.execute(
            select(models.QualificationSubject.selection, models.QualificationEvent.to_state)
            .join(
                models.QualificationSubject,
                models.QualificationSubject.id == models.QualificationEvent.subject_id,
            )
            .where(models.QualificationEvent.cause == "fleet run")
        ).all()
    assert sorted(events) == [("ingress-class=internal", "stale"), ("ingress-class=public", "stale")]
