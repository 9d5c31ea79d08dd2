"""Every render in a worker is bounded in time (FARM_RENDER_TIMEOUT_SECONDS) and memory
(FARM_RENDER_MEMORY_MIB): a render past a bound fails its own target with a stable code, its
siblings in the batch and every other application still render, on the local process pool and
on a Celery worker.

The heavy application is legal: three passthrough ConfigMaps of 40,000 keys each (3.7 MB, under
the catalog's file limit; each object under the API server's one-object limit) that take seconds
and well over 100 MiB to render, beside small applications that take milliseconds.
"""

from __future__ import annotations

import os
import resource
import signal
import time
from pathlib import Path

import pytest

from farm.build.bounded import RENDER_MEMORY, RENDER_TIMEOUT, RenderBounds, run_bounded, start_bounded
from farm.execution.local import run_local
from farm.fleet.jobs import run_job
from farm.fleet.progress import run_summary
from farm.fleet.service import plan_catalog
from farm.settings import load_settings
from farm.store.context import open_storage

from .conftest import Catalog, FleetEnv, make_catalog
from .test_celery import CeleryFarm, celery_farm, farm_source, redis_broker  # noqa: F401

HEAVY_KEYS = 120_000
HEAVY_OBJECTS = 3
HEAVY = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Application
metadata:
  name: heavy
  namespace: apps
spec:
  components:
"""
HEAVY_COMPONENT = """    - name: heavy-{index}
      type: passthrough
      properties:
        object:
          apiVersion: v1
          kind: ConfigMap
          metadata:
            name: big-{index}
          data:
"""


def write_heavy_app(catalog: Catalog) -> None:
    folder = catalog.root / "applications" / "heavy"
    folder.mkdir(parents=True, exist_ok=True)
    per_object = HEAVY_KEYS // HEAVY_OBJECTS
    components = "".join(
        HEAVY_COMPONENT.format(index=index)
        + "".join(
            f"            k{i:07d}: v{i:07d}\n" for i in range(index * per_object, (index + 1) * per_object)
        )
        for index in range(HEAVY_OBJECTS)
    )
    (folder / "app.yaml").write_text(HEAVY + components)


def _bounded_run(env: FleetEnv, catalog: Catalog, tmp_path: Path, **bounds: object) -> dict:
    settings = load_settings(
        home=env.settings.home,
        database_url=env.settings.database_url,
        object_store=env.settings.object_store,
        **bounds,
    )
    storage = open_storage(settings)
    try:
        _, planned = plan_catalog(storage, catalog.root)
        run_local(settings, planned.queued, processes=2)
        summary = run_summary(storage, planned.run_id)
    finally:
        storage.close()
    return {"state": summary.state, "counts": summary.counts, "failures": summary.failures}


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("bound", "code", "message"),
    [
        ({"render_timeout_seconds": 1}, RENDER_TIMEOUT, "the render took longer than 1 s and was stopped"),
        ({"render_memory_mib": 32}, RENDER_MEMORY, "the render needed more than 32 MiB and was stopped"),
    ],
    ids=["time", "memory"],
)
def test_a_render_past_a_bound_fails_alone_with_the_bounds_code(
    fleet_env: FleetEnv, catalog: Catalog, tmp_path: Path, bound: dict, code: str, message: str
) -> None:
    write_heavy_app(catalog)
    summary = _bounded_run(fleet_env, catalog, tmp_path, **bound)
    assert summary["counts"] == {"succeeded": 11, "failed": 3}
    assert list(summary["failures"]) == [code]
    failures = summary["failures"][code]
    assert sorted(f["application"] + "/" + f["cluster"] for f in failures) == [
        "heavy/cluster-a",
        "heavy/cluster-b",
        "heavy/cluster-c",
    ]
    assert {f["message"] for f in failures} == {message}
    assert summary["state"] == "completed_with_failures"


@pytest.mark.timeout(300)
def test_the_heavy_application_renders_within_the_default_bounds(
    fleet_env: FleetEnv, catalog: Catalog, tmp_path: Path
) -> None:
    write_heavy_app(catalog)
    summary = _bounded_run(fleet_env, catalog, tmp_path)
    assert summary["counts"] == {"succeeded": 14} and summary["failures"] == {}


@pytest.mark.timeout(300)
def test_a_job_run_in_the_calling_process_is_bounded_too(fleet_env: FleetEnv, catalog: Catalog) -> None:
    write_heavy_app(catalog)
    settings = load_settings(
        home=fleet_env.settings.home,
        database_url=fleet_env.settings.database_url,
        object_store=fleet_env.settings.object_store,
        render_timeout_seconds=1,  # the heavy render takes about 2 s idle
    )
    storage = open_storage(settings)
    try:
        _, planned = plan_catalog(storage, catalog.root)
        outcomes = [
            run_job(storage, fleet_env.signer, job_id, worker="test", expected_batch_key=key)
            for job_id, key in planned.queued
        ]
        failed = [r for outcome in outcomes for r in outcome.results if r.error_code == RENDER_TIMEOUT]
        assert len(failed) == 3
        assert sum(outcome.rendered for outcome in outcomes) == 11
    finally:
        storage.close()


def _stuck_or_hungry(item: str) -> str:
    if item == "sleep":
        import time

        time.sleep(60)
    if item == "grow":
        hoard = []
        while True:
            hoard.append(bytearray(16 * 1024 * 1024))
    if item == "die":
        import os
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
    return item.upper()


@pytest.mark.timeout(120)
def test_bounded_work_in_order_each_item_past_a_bound_failing_alone() -> None:
    bounds = RenderBounds(seconds=1, memory_bytes=64 * 1024 * 1024)
    outcomes = run_bounded(["a", "sleep", "b", "grow", "c", "die", "d"], _stuck_or_hungry, bounds)
    codes = [getattr(outcome, "code", outcome) for outcome in outcomes]
    assert codes == ["A", "render.timeout", "B", "render.memory", "C", "render.crashed", "D"]
    assert outcomes[5].message == "the render process was killed by signal SIGKILL"


@pytest.mark.timeout(600)
def test_a_render_past_the_time_bound_fails_alone_on_a_celery_worker(
    celery_farm: CeleryFarm,  # noqa: F811
    tmp_path: Path,
) -> None:
    catalog = make_catalog(tmp_path / "catalog")
    write_heavy_app(catalog)
    celery_farm.env["FARM_RENDER_TIMEOUT_SECONDS"] = (
        "1"  # the heavy render takes about 2 s idle, well over 1 s
    )
    celery_farm.start_worker()
    summary = celery_farm.farm_json("run", str(catalog.root), "--executor", "celery", status=1)
    assert summary["counts"]["succeeded"] == 11 and summary["counts"]["failed"] == 3
    assert list(summary["failures"]) == [RENDER_TIMEOUT]
    assert {f["application"] for f in summary["failures"][RENDER_TIMEOUT]} == {"heavy"}
    assert summary["state"] == "completed_with_failures"


def _sized(item: tuple[str, int]) -> bytes:
    name, size = item
    if name == "busy":  # a few milliseconds of work, so the worker would wait for each outcome
        deadline = time.process_time() + size / 1000
        while time.process_time() < deadline:
            pass
        return b"done"
    if name == "slow":
        time.sleep(size / 1000)
        return b"slow"
    return name.encode() * size


def test_bounded_work_keeps_outcomes_larger_than_the_pipe_whole_and_in_order() -> None:
    bounds = RenderBounds(seconds=60, memory_bytes=256 * 1024 * 1024)
    items = [
        ("a", 10),
        ("b", 3 << 20),
        ("c", 5),
        ("d", 700_000),
        ("e", 1 << 20),
        *[("f", 1)] * 100,
        ("g", 2 << 20),
    ]
    outcomes = run_bounded(items, _sized, bounds)
    assert outcomes == [name.encode() * size for name, size in items]


def test_the_time_bound_counts_each_render_of_a_batch_from_its_own_start() -> None:
    bounds = RenderBounds(seconds=2, memory_bytes=64 * 1024 * 1024)
    outcomes = run_bounded([("slow", 400)] * 8, _sized, bounds)  # 3.2 s in all, 0.4 s each
    assert outcomes == [b"slow"] * 8


def _child_pid(item: tuple[str, int]) -> tuple[str, int]:
    import os

    time.sleep(item[1] / 1000)
    return item[0], os.getpid()


def test_a_batch_begun_renders_while_its_worker_is_busy_and_keeps_its_child_past_the_bound() -> None:
    """A batch that ended while the worker did other work for longer than the time bound is
    collected whole, and its render child (which overran nothing) is kept for the next batch."""
    bounds = RenderBounds(seconds=1, memory_bytes=64 * 1024 * 1024)
    begun = start_bounded([("a", 50), ("b", 50)], _child_pid, bounds)
    time.sleep(1.5)  # the worker records another job meanwhile
    outcomes = begun.outcomes()
    assert [name for name, _ in outcomes] == ["a", "b"]
    assert run_bounded([("c", 0)], _child_pid, bounds) == [("c", outcomes[0][1])]


def test_a_batch_abandoned_mid_render_never_answers_for_the_next_one() -> None:
    bounds = RenderBounds(seconds=60, memory_bytes=64 * 1024 * 1024)
    begun = start_bounded([("old", 200)] * 5, _child_pid, bounds)
    begun.abandon()  # the worker's recording failed while this batch rendered
    outcomes = run_bounded([("new", 0), ("newer", 0)], _child_pid, bounds)
    assert [name for name, _ in outcomes] == ["new", "newer"]


def test_a_worker_is_woken_once_per_batch_not_once_per_outcome() -> None:
    bounds = RenderBounds(seconds=60, memory_bytes=64 * 1024 * 1024)
    run_bounded([("busy", 1)], _sized, bounds)  # the render child is started
    before = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
    outcomes = run_bounded([("busy", 3)] * 50, _sized, bounds)
    waits = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - before
    assert outcomes == [b"done"] * 50
    assert waits < 10  # one per outcome was 50 or more


class _Interrupted(Exception):
    pass


def _interrupt(*_: object) -> None:
    raise _Interrupted


@pytest.mark.timeout(60)
def test_a_batch_stopped_from_outside_hands_none_of_its_outcomes_to_the_next_batch() -> None:
    bounds = RenderBounds(seconds=60, memory_bytes=64 * 1024 * 1024)
    previous = signal.signal(signal.SIGALRM, _interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)  # while the child renders the third of ten
        with pytest.raises(_Interrupted):
            run_bounded([("slow", 100)] * 10, _sized, bounds)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    time.sleep(1.2)  # a child left running would have written the rest of its batch by now
    assert run_bounded([("a", 1), ("b", 2)], _sized, bounds) == [b"a", b"bb"]


def test_ctrl_c_to_the_process_group_leaves_an_idle_render_child_to_its_worker() -> None:
    # Ctrl-C of farm run reaches every process of its group: the render child, waiting for its
    # next batch, died of it, and the next batch its worker began (the pool's queued chunk) failed
    # with render.crashed "killed by signal SIGINT", recorded in the interrupted run
    bounds = RenderBounds(seconds=60, memory_bytes=64 * 1024 * 1024)
    ((_, child),) = run_bounded([("a", 0)], _child_pid, bounds)
    os.kill(child, signal.SIGINT)
    time.sleep(0.5)
    assert run_bounded([("b", 0)], _child_pid, bounds) == [("b", child)]
