"""Crash recovery on the embedded default: ``kill -9`` of ``farm run``, of one of its pool workers
and of the daemon. A run whose owner is gone is never shown running; the next ``farm run`` on the
home finishes it, and every target is rendered (recorded with its evidence) exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import func, select

from farm.fleet.owners import owner_is_gone, owner_of, process_owner
from farm.fleet.progress import run_summary
from farm.fleet.recovery import WORKER_DIED, fail_broken_pool, release_broken_pool
from farm.fleet.service import plan_catalog
from farm.settings import load_settings
from farm.store import models
from farm.store.context import Storage, open_storage
from farm.store.db import read_scope, session_scope
from farm.store.runs import claim_job

from .conftest import Catalog, FleetEnv, make_catalog

FARM = [sys.executable, "-m", "farm"]
# jobs enough (a job per application) that a run is still at work after the few jobs each test
# waits for, with what the pool has queued: with a dozen, a loaded machine finished the run
# before the kill landed (or before its pool's workers were looked for)
APPS = 60
TARGETS = APPS * 3 - 1  # every app on three clusters, one pair excluded

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    """One job per target, so a run has many jobs to be killed in the middle of."""
    base = {name: value for name, value in os.environ.items() if not name.startswith("FARM_")}
    return base | {"FARM_HOME": str(home), "FARM_DAEMON": "off", "FARM_BATCH_SIZE": "1"}


@pytest.fixture
def storage(home: Path, env: dict[str, str]) -> Iterator[Storage]:
    """The home, created and migrated by a farm command first: the test reads it while runs write."""
    assert _farm(env, "db", "upgrade").returncode == 0
    opened = open_storage(load_settings(home=home))
    yield opened
    opened.close()


def _farm(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FARM, *args], env=env, capture_output=True, text=True, timeout=240)


@contextmanager
def _held_after_jobs(storage: Storage, at_least: int, process: subprocess.Popen) -> Iterator[str]:
    """The id of the run in the home once ``at_least`` of its jobs have finished, and fewer than all.

    The block runs while this test holds the database's write lock: the run can neither record
    another job nor complete until it ends, so a kill inside it always lands mid-run. Polls take
    the lock for a moment each, which the run's writers wait out on their busy timeout."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        with session_scope(storage.sessions) as session:  # BEGIN IMMEDIATE: the write lock
            run_id = session.scalar(select(models.FleetRun.id))
            done = session.scalar(
                select(func.count()).where(models.RenderJob.state == models.JobState.SUCCEEDED.value)
            )
            jobs = session.scalar(select(func.count()).select_from(models.RenderJob))
            if run_id is not None and done >= at_least:
                assert done < jobs, f"the run finished all its {jobs} jobs before the test could hold it"
                yield run_id
                return
        time.sleep(0.005)
    raise AssertionError(f"no run finished {at_least} jobs (exit status {process.poll()})")


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(b")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _descendants(pid: int) -> list[str]:
    """Every process under ``pid`` (children, theirs, …), each named as a run's owner is
    (``HOST/BOOT/PID/START``), so a reused pid is not taken for one of them."""
    found, frontier = [], [pid]
    while frontier:
        frontier = [child for parent in frontier for child in _children(parent)]
        found += [owner_of(child) for child in frontier]
    return found


def _assert_all_end(processes: list[str]) -> None:
    """Every process of ``processes`` ends soon after their owner was killed: none is left
    waiting for work that will never come (the pool's workers, their render children, the
    forkserver)."""
    deadline = time.monotonic() + 60
    alive = processes
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [process for process in alive if not owner_is_gone(process)]
    assert not alive, f"left behind after their owner was killed: {alive}"


def _assert_rendered_once(storage: Storage, run_id: str) -> None:
    """Every target of the run is final, recorded once, with one evidence record per action key."""
    with read_scope(storage.sessions) as session:
        states = dict(
            session.execute(
                select(models.RenderTarget.state, func.count())
                .where(models.RenderTarget.run_id == run_id)
                .group_by(models.RenderTarget.state)
            ).all()
        )
        run = session.get(models.FleetRun, run_id)
        evidence = session.execute(
            select(models.EvidenceRecord.action_key, func.count()).group_by(models.EvidenceRecord.action_key)
        ).all()
        open_jobs = session.scalar(
            select(func.count()).where(
                models.RenderJob.run_id == run_id, models.RenderJob.state.in_(("queued", "running"))
            )
        )
    assert run is not None and run.state == "completed", run and run.state
    assert states == {"succeeded": TARGETS}
    assert open_jobs == 0
    assert len(evidence) == TARGETS and {count for _, count in evidence} == {1}


def _runs(env: dict[str, str]) -> list[dict]:
    result = _farm(env, "runs", "--json")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_a_killed_farm_run_is_shown_interrupted_and_the_next_run_finishes_it(
    tmp_path: Path, home: Path, env: dict[str, str], storage: Storage
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=APPS)
    log = (tmp_path / "killed.log").open("w")
    process = subprocess.Popen(
        [*FARM, "run", str(catalog.root), "--json", "--processes", "1"], env=env, stdout=log, stderr=log
    )
    with _held_after_jobs(storage, 3, process) as run_id:
        left = _descendants(process.pid)
        assert len(left) >= 3, left  # the forkserver, a pool worker, its render child at least
        process.send_signal(signal.SIGKILL)
        process.wait()
    _assert_all_end(left)
    assert [(run["id"], run["state"]) for run in _runs(env)] == [(run_id, "interrupted")]
    status = _farm(env, "status", run_id, "--json")
    assert json.loads(status.stdout)["state"] == "interrupted"

    again = _farm(env, "run", str(catalog.root), "--json", "--processes", "1")
    assert again.returncode == 0, again.stderr
    assert f"warning: run {run_id} was interrupted" in again.stderr
    assert "Traceback" not in again.stderr
    assert json.loads(again.stdout)["counts"]["cached"] == TARGETS  # the killed run rendered them
    _assert_rendered_once(storage, run_id)
    assert {run["state"] for run in _runs(env)} == {"completed"}


def test_a_killed_pool_worker_does_not_stop_the_run(
    tmp_path: Path, home: Path, env: dict[str, str], storage: Storage
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=APPS)
    process = subprocess.Popen(
        [*FARM, "run", str(catalog.root), "--json", "--processes", "2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with _held_after_jobs(storage, 2, process) as run_id:
        workers = [worker for server in _children(process.pid) for worker in _children(server)]
        assert workers, "the pool's workers were not found"
        os.kill(workers[0], signal.SIGKILL)
    out, err = process.communicate(timeout=240)
    assert "Traceback" not in err and "BrokenProcessPool" not in err, err
    assert process.returncode == 0, err
    assert json.loads(out)["state"] == "completed"
    _assert_rendered_once(storage, run_id)


def test_a_killed_daemon_s_run_is_finished_by_the_next_farm_run(
    tmp_path: Path, home: Path, env: dict[str, str], storage: Storage
) -> None:
    catalog = make_catalog(tmp_path / "catalog", apps=APPS)
    daemon_env = env | {"FARM_DAEMON": "on"}
    started = _farm(daemon_env, "daemon", "start", "--idle", "300")
    assert started.returncode == 0, started.stderr
    status = json.loads(_farm(daemon_env, "daemon", "status", "--json").stdout)
    daemon = int(status["pid"])
    client = subprocess.Popen(
        [*FARM, "run", str(catalog.root), "--json"],
        env=daemon_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with _held_after_jobs(storage, 3, client) as run_id:
            left = _descendants(daemon)
            os.kill(daemon, signal.SIGKILL)
        _, err = client.communicate(timeout=240)
    finally:
        if client.poll() is None:
            client.kill()
    assert "Traceback" not in err, err
    _assert_all_end(left)
    again = _farm(env, "run", str(catalog.root), "--json", "--processes", "1")
    assert again.returncode == 0, again.stderr
    _assert_rendered_once(storage, run_id)
    assert {run["state"] for run in _runs(env)} == {"completed"}


def test_an_owner_is_gone_once_its_process_ended_or_its_machine_rebooted() -> None:
    me = process_owner()
    host, boot, pid, start = me.split("/")
    assert int(pid) == os.getpid() and not owner_is_gone(me)
    assert owner_is_gone(f"{host}/{boot}/{pid}/{int(start) + 1}")  # that pid, another process
    assert owner_is_gone(f"{host}/another-boot/{pid}/{start}")
    assert not owner_is_gone(f"another-host/{boot}/{pid}/{int(start) + 1}")  # not judged from here
    assert owner_is_gone(f"{host}/{boot}/{2**22 + 7}/1")  # past pid_max: no such process
    assert not owner_is_gone(f"{host}/{boot}/{2**22 + 7}/-")  # start unreadable (no /proc): not judged


def test_a_pool_that_breaks_again_fails_its_open_jobs_with_worker_died_and_the_run_completes(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    with session_scope(fleet_env.storage.sessions) as session:
        assert claim_job(session, planned.queued[0][0], worker="local@gone:1") is not None
    assert release_broken_pool(fleet_env.settings, planned.queued) == 1  # the claim back to the queue
    fail_broken_pool(
        fleet_env.settings, planned.queued, "A process in the process pool was terminated abruptly"
    )
    summary = run_summary(fleet_env.storage, planned.run_id)
    assert summary.state == "completed_with_failures"
    assert summary.counts == {"failed": 11} and list(summary.failures) == [WORKER_DIED]
