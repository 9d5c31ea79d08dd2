"""``farm gc --keep-runs N`` / ``--older-than DURATION``: old runs' rows go, never what a kept run,
the caches, an audit or a qualification names, nor a fleet's latest complete run."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from farm.cli import app as cli
from farm.execution.inline import InlineExecutor
from farm.fleet.service import finish_fleet_run, plan_catalog
from farm.store.db import session_scope
from farm.store.models import (
    ActionCacheEntry,
    AuditRecord,
    EvidenceRecord,
    FleetRun,
    QualificationRun,
    QualificationSubject,
    RenderJob,
    RenderOutput,
    RenderTarget,
    Trigger,
    utcnow,
)
from farm.store.retention import Retention, prune_runs

from .conftest import Catalog, FleetEnv


def _run(fleet_env: FleetEnv, catalog: Catalog) -> str:
    executor = InlineExecutor(fleet_env.storage, fleet_env.signer, "test-worker")
    snapshot, planned = plan_catalog(fleet_env.storage, catalog.root, executor=executor)
    finish_fleet_run(fleet_env.storage, snapshot, planned, executor, trigger=Trigger.CLI)
    return planned.run_id


def _count(fleet_env: FleetEnv, model: type, *where: object) -> int:
    with session_scope(fleet_env.storage.sessions) as session:
        return session.scalar(select(func.count()).select_from(model).where(*where)) or 0


def _run_ids(fleet_env: FleetEnv) -> set[str]:
    with session_scope(fleet_env.storage.sessions) as session:
        return set(session.scalars(select(FleetRun.id)))


def test_gc_keep_runs_prunes_old_runs_cached_rows_and_jobs_and_keeps_rendered_targets_outputs_and_caches(
    fleet_env: FleetEnv, catalog: Catalog, tmp_path: Path
) -> None:
    rendered = _run(fleet_env, catalog)  # 11 targets rendered, each with its evidence
    unchanged = [_run(fleet_env, catalog) for _ in range(3)]  # 11 cache hits each
    evidence, cache, outputs = (
        _count(fleet_env, m) for m in (EvidenceRecord, ActionCacheEntry, RenderOutput)
    )

    result = CliRunner().invoke(cli, ["gc", "--keep-runs", "2"], env=fleet_env.environ())

    assert result.exit_code == 0, result.output
    assert (
        "pruned 2 run(s): removed 11 target row(s) no evidence names, 4 job row(s), 1 run row(s)"
        in result.output
    )
    assert _run_ids(fleet_env) == {rendered, *unchanged[1:]}  # the rendered run keeps its signed rows
    assert _count(fleet_env, RenderTarget, RenderTarget.run_id == rendered) == 11
    assert _count(fleet_env, RenderJob, RenderJob.run_id == rendered) == 0
    assert (evidence, cache, outputs) == tuple(
        _count(fleet_env, m) for m in (EvidenceRecord, ActionCacheEntry, RenderOutput)
    )
    again = _run(fleet_env, catalog)  # the caches still answer every target
    assert _count(fleet_env, RenderTarget, RenderTarget.run_id == again, RenderTarget.state == "cached") == 11
    verify = CliRunner().invoke(cli, ["verify", "--all"], env=fleet_env.environ())
    assert verify.exit_code == 0, verify.output


def test_gc_older_than_keeps_the_latest_complete_run_and_the_runs_an_audit_or_a_qualification_names(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    audited, qualified, pruned, latest = (_run(fleet_env, catalog) for _ in range(4))
    with session_scope(fleet_env.storage.sessions) as session:
        subject = QualificationSubject(
            cluster_profile="cluster-gone", selection="", state="qualified", since=utcnow()
        )
        session.add(subject)
        session.flush()
        session.add(
            QualificationRun(
                subject_id=subject.id,
                subject_digest="b" * 64,
                state="passed",
                created_at=utcnow(),
                fleet_run_id=qualified,
            )
        )
        session.add(
            AuditRecord(
                envelope_digest="a" * 64,
                run_id=audited,
                signer_keyid=fleet_env.signer.keyid,
                audited=1,
                nondeterministic=0,
                drifted=0,
            )
        )
    later = utcnow() + timedelta(days=2)
    with session_scope(fleet_env.storage.sessions) as session:
        report = prune_runs(session, Retention(older_than=timedelta(days=1)), now=later)

    assert report.runs == [pruned]
    assert _run_ids(fleet_env) == {audited, qualified, latest}


def test_gc_refuses_an_older_than_that_is_not_a_duration_with_one_error_line(
    fleet_env: FleetEnv,
) -> None:
    result = CliRunner().invoke(cli, ["gc", "--older-than", "soon"], env=fleet_env.environ())

    assert result.exit_code == 2
    assert "--older-than" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("option", "value"),
    [("--older-than", "1000000d"), ("--older-than", "99999999999d"), ("--grace-seconds", "10" * 10)],
)
def test_gc_refuses_an_age_longer_than_a_date_reaches_back_with_one_error_line(
    fleet_env: FleetEnv, option: str, value: str
) -> None:
    # 1000000d (a "never" typed by hand) reached back before the year 1: an OverflowError traceback
    result = CliRunner().invoke(cli, ["gc", "--dry-run", option, value], env=fleet_env.environ())

    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2
    assert option in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("value", ["-1d", "-90m", "-1000000d"])
def test_gc_refuses_a_negative_older_than_saying_it_is_negative(fleet_env: FleetEnv, value: str) -> None:
    # -1d said 'unknown unit "d"', though 30d is accepted
    result = CliRunner().invoke(cli, ["gc", "--dry-run", "--older-than", value], env=fleet_env.environ())

    assert result.exit_code == 2
    assert f"'{value}' is negative" in result.output
