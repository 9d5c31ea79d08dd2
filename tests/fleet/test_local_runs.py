"""Fleet runs with the local executor: incremental re-renders, diffs and failure isolation,
on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sqlalchemy import func, select
from typer.testing import CliRunner

from farm.cli import app as cli
from farm.execution.local import run_local
from farm.fleet.diff import diff_runs
from farm.fleet.owners import process_owner
from farm.fleet.progress import run_summary
from farm.fleet.queries import latest_output
from farm.fleet.service import plan_catalog
from farm.store import models
from farm.store.db import session_scope

from .conftest import Catalog, FleetEnv


def _run(env: FleetEnv, catalog: Catalog) -> tuple[str, dict[str, int]]:
    _, planned = plan_catalog(env.storage, catalog.root)
    run_local(env.settings, planned.queued, processes=2)
    summary = run_summary(env.storage, planned.run_id)
    return planned.run_id, summary.counts


def _rendered_targets(env: FleetEnv, run_id: str) -> set[tuple[str, str]]:
    with session_scope(env.storage.sessions) as session:
        rows = session.execute(
            select(models.RenderTarget.application, models.RenderTarget.cluster_profile).where(
                models.RenderTarget.run_id == run_id, models.RenderTarget.state == "succeeded"
            )
        )
        return set(rows)


def test_second_run_with_no_change_renders_nothing(fleet_env: FleetEnv, catalog: Catalog) -> None:
    first, counts = _run(fleet_env, catalog)
    assert counts == {"succeeded": 11}  # 4 apps x 3 clusters, minus the excluded pair
    second, counts = _run(fleet_env, catalog)
    assert counts == {"cached": 11}
    assert run_summary(fleet_env.storage, second).state == "completed"
    assert diff_runs(fleet_env.storage, first, second).changed == []


def test_changing_one_cluster_profile_rerenders_exactly_its_targets(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    before, _ = _run(fleet_env, catalog)
    catalog.write_cluster("cluster-b", ingress_class="traefik")
    after, counts = _run(fleet_env, catalog)
    expected = {(f"app-{i}", "cluster-b") for i in range(4)}
    assert _rendered_targets(fleet_env, after) == expected
    assert counts == {"succeeded": 4, "cached": 7}
    diff = diff_runs(fleet_env.storage, before, after)
    assert set(diff.changed) == expected and diff.added == [] and diff.removed == []
    assert b"ingressClassName: traefik" in latest_output(fleet_env.storage, "app-2", "cluster-b")


def test_changing_one_application_rerenders_exactly_its_targets(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    before, _ = _run(fleet_env, catalog)
    catalog.write_app("app-1", image="ghcr.io/example/app:v1.1.0")
    after, counts = _run(fleet_env, catalog)
    expected = {("app-1", c) for c in ("cluster-a", "cluster-b", "cluster-c")}
    assert _rendered_targets(fleet_env, after) == expected
    assert counts == {"succeeded": 3, "cached": 8}
    result = CliRunner().invoke(cli, ["diff", before, after, "--json"], env=fleet_env.environ())
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "added": [],
        "removed": [],
        "changed": ["app-1/cluster-a", "app-1/cluster-b", "app-1/cluster-c"],
        "fixed": [],
        "failed": [],
        "unchanged": 8,
    }
    unified = CliRunner().invoke(cli, ["diff", before, after, "--unified"], env=fleet_env.environ())
    assert "-      - image: ghcr.io/example/app:v1.0.0" in unified.stdout
    assert "+      - image: ghcr.io/example/app:v1.1.0" in unified.stdout


def test_a_broken_application_fails_only_its_own_targets(fleet_env: FleetEnv, catalog: Catalog) -> None:
    catalog.break_app("app-3")
    run_id, counts = _run(fleet_env, catalog)
    assert counts == {"succeeded": 8, "failed": 3}
    summary = run_summary(fleet_env.storage, run_id)
    assert summary.state == "completed_with_failures"
    assert list(summary.failures) == ["property.invalid"] or list(summary.failures) == ["transform.failed"]
    messages = {f["message"] for failures in summary.failures.values() for f in failures}
    assert len(messages) == 1 and 'component "app-3"' in messages.pop()
    assert {a for a, _ in _rendered_targets(fleet_env, run_id)} == {"app-0", "app-1", "app-2"}


def test_outputs_are_signed_and_verify(fleet_env: FleetEnv, catalog: Catalog) -> None:
    run_id, _ = _run(fleet_env, catalog)
    result = CliRunner().invoke(cli, ["verify", "--run", run_id], env=fleet_env.environ())
    assert result.exit_code == 0, result.output
    with session_scope(fleet_env.storage.sessions) as session:
        evidence = session.scalar(select(func.count()).select_from(models.EvidenceRecord))
        outputs = session.scalar(select(func.count()).select_from(models.RenderOutput))
        digests = set(
            session.scalars(
                select(models.RenderTarget.output_digest).where(models.RenderTarget.run_id == run_id)
            )
        )
    # Clusters with the same ingress class give the same bytes: one blob per content digest,
    # one signed statement per rendered target.
    assert outputs == len(digests) == 4
    assert evidence == 11


def test_farm_run_json_summary_and_exit_status(fleet_env: FleetEnv, catalog: Catalog) -> None:
    catalog.break_app("app-0")
    result = CliRunner().invoke(
        cli, ["run", str(catalog.root), "--json", "--processes", "2"], env=fleet_env.environ()
    )
    assert result.exit_code == 1  # a run with failed jobs exits 1 so scripts notice
    summary = json.loads(result.stdout)
    assert summary["counts"]["succeeded"] == 9 and summary["counts"]["failed"] == 2
    assert summary["state"] == "completed_with_failures"


def test_the_pool_s_calls_take_every_job_once_in_order_shrinking_towards_the_end() -> None:
    from farm.execution.chunks import job_chunks
    from farm.execution.local import MAX_CHUNK

    queued = [(f"job-{index}", f"key-{index}") for index in range(101)]
    chunks = job_chunks(queued, workers=2, most=MAX_CHUNK)
    assert [job for chunk in chunks for job in chunk] == queued
    sizes = [len(chunk) for chunk in chunks]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == MAX_CHUNK
    assert sizes[-8:] == [1] * 8  # the workers' last calls are single jobs, so they end together
    assert job_chunks(queued[:3], workers=2, most=MAX_CHUNK) == [[job] for job in queued[:3]]


def test_celery_messages_carry_at_most_the_set_number_of_jobs_in_order_single_ones_at_the_end(
    tmp_path: Path,
) -> None:
    from farm.execution.celery import CeleryQueue
    from farm.settings import load_settings

    queued = [(f"job-{index}", f"key-{index}") for index in range(101)]
    settings = load_settings(home=tmp_path, celery_jobs_per_message=4, broker_url="redis://127.0.0.1:1/0")
    messages = CeleryQueue(settings).message_jobs(queued)
    assert [job for message in messages for job in message] == queued
    sizes = [len(message) for message in messages]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == 4
    # a quarter of what is left per worker, as if 4 workers: one job a message once fewer than 32
    # are left, so the workers end together
    left = [len(queued) - sum(sizes[:index]) for index in range(len(sizes))]
    assert [size for size, remaining in zip(sizes, left, strict=True) if remaining < 32] == [1] * 30
    one_each = load_settings(home=tmp_path, celery_jobs_per_message=1, broker_url="redis://127.0.0.1:1/0")
    assert CeleryQueue(one_each).message_jobs(queued) == [[job] for job in queued]


def test_a_pool_worker_whose_owner_is_gone_exits_and_one_whose_owner_cannot_be_judged_stays() -> None:
    host_and_boot = process_owner().rsplit("/", 2)[0]
    gone = f"{host_and_boot}/{2**22 + 7}/1"  # past pid_max: no such process
    script = (
        "import sys, time\n"
        "from farm.execution.local import _leave_with\n"
        "_leave_with(sys.argv[1])\n"
        "time.sleep(float(sys.argv[2]))\n"
        "print('stayed')\n"
    )
    ended = subprocess.run(
        [sys.executable, "-c", script, gone, "20"], capture_output=True, text=True, timeout=60
    )
    assert (ended.returncode, ended.stdout) == (1, "")
    stayed = subprocess.run(  # no start time: the process table cannot tell
        [sys.executable, "-c", script, f"{host_and_boot}/{2**22 + 7}/-", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (stayed.returncode, stayed.stdout) == (0, "stayed\n")
