"""Per-application batched jobs, on SQLite and PostgreSQL: a job renders a batch of its
application's targets, records every result in one transaction, and keeps its guarantees under
takeovers, duplicate deliveries, cached failures and forged requests."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from conftest_store import DatabaseFactory
from sqlalchemy import func, select, update
from stored_blobs import overwrite_blob, stored_bytes

import farm.build.step as step
import farm.fleet.jobs as jobs
from farm.build.bounded import stop_render_children
from farm.build.fetch import FORGED_REQUEST
from farm.catalog import load_catalog
from farm.core.errors import CoreError
from farm.fleet.jobs import run_job
from farm.fleet.planner import plan_run
from farm.fleet.progress import run_summary
from farm.fleet.reconcile import stale_jobs
from farm.fleet.service import plan_catalog
from farm.store import audit, models
from farm.store.db import session_scope
from farm.store.objects import STORE_FULL, ObjectStoreUnavailableError
from farm.store.runs import claim_job, targets_of_run

from .conftest import Catalog, FleetEnv, fill_filesystem, open_fleet_env

BARE_PROFILE = """apiVersion: launcher.gokure.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: {name}
spec: {{}}
"""


def _count(env: FleetEnv, model: type) -> int:
    with session_scope(env.storage.sessions) as session:
        return session.scalar(select(func.count()).select_from(model)) or 0


def _targets(env: FleetEnv, run_id: str) -> dict[tuple[str, str], models.RenderTarget]:
    with session_scope(env.storage.sessions) as session:
        return {(t.application, t.cluster_profile): t for t in targets_of_run(session, run_id)}


def _run_all(env: FleetEnv, queued: list[tuple[str, str]], worker: str = "w1") -> list[jobs.JobOutcome]:
    return [
        run_job(env.storage, env.signer, job_id, worker=worker, expected_batch_key=key)
        for job_id, key in queued
    ]


def test_a_job_is_one_application_and_a_batch_of_its_targets(fleet_env: FleetEnv, catalog: Catalog) -> None:
    snapshot = load_catalog(catalog.root)
    planned = plan_run(fleet_env.storage, snapshot, source="tests", batch_size=2)
    with session_scope(fleet_env.storage.sessions) as session:
        job_rows = list(
            session.scalars(select(models.RenderJob).where(models.RenderJob.run_id == planned.run_id))
        )
    # 4 applications x 3 clusters minus one exclusion = 11 targets; batches of at most 2 per application
    assert sorted(job.target_count for job in job_rows) == [1, 1, 1, 2, 2, 2, 2]
    assert {job.application for job in job_rows} == {f"app-{i}" for i in range(4)}
    assert planned.total == 11 and planned.cached == 0
    _run_all(fleet_env, planned.queued)
    summary = run_summary(fleet_env.storage, planned.run_id)
    assert (summary.state, summary.counts) == ("completed", {"succeeded": 11})


def test_a_broken_target_fails_alone_and_its_batch_siblings_render(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    (catalog.root / "clusters" / "cluster-b.yaml").write_text(BARE_PROFILE.format(name="cluster-b"))
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    outcomes = _run_all(fleet_env, planned.queued)
    assert all(outcome.state == "succeeded" for outcome in outcomes)  # a job records failures too
    targets = _targets(fleet_env, planned.run_id)
    for (application, cluster), target in targets.items():
        if cluster == "cluster-b":
            assert target.state == "failed" and target.error_code and target.output_digest is None
            assert "expose" in (target.error_message or ""), target.error_message
        else:
            assert target.state == "succeeded" and target.output_digest, (application, cluster)
    summary = run_summary(fleet_env.storage, planned.run_id)
    assert summary.state == "completed_with_failures" and summary.failed == 4


def test_a_cached_failure_is_reported_again_without_a_render(fleet_env: FleetEnv, catalog: Catalog) -> None:
    catalog.break_app("app-1")
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _run_all(fleet_env, first.queued)
    failed = {k: t for k, t in _targets(fleet_env, first.run_id).items() if t.state == "failed"}
    assert {app for app, _ in failed} == {"app-1"}

    _, second = plan_catalog(fleet_env.storage, catalog.root)
    assert second.queued == [] and second.cached == second.total  # nothing to render
    summary = run_summary(fleet_env.storage, second.run_id)
    assert summary.counts == {"cached": 8, "cached_failure": 3}
    assert summary.state == "completed_with_failures"
    for key, target in _targets(fleet_env, second.run_id).items():
        if key in failed:
            assert (target.state, target.error_code, target.error_message) == (
                "cached",
                failed[key].error_code,
                failed[key].error_message,
            )
            assert target.job_id is None


def test_internal_errors_are_never_cached(
    fleet_env: FleetEnv, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(request: object, **options: object) -> None:
        raise ZeroDivisionError("a handler bug")

    monkeypatch.setattr(step, "render", crash)
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _run_all(fleet_env, first.queued)
    assert {t.error_code for t in _targets(fleet_env, first.run_id).values()} == {step.INTERNAL_ERROR}
    assert _count(fleet_env, models.FailedAction) == 0
    monkeypatch.undo()
    stop_render_children()  # renders run in a child forked while the crash was patched in
    _, second = plan_catalog(fleet_env.storage, catalog.root)
    assert second.cached == 0 and len(second.queued) == len(first.queued)


def test_a_cluster_profile_edit_re_renders_exactly_its_targets(fleet_env: FleetEnv, catalog: Catalog) -> None:
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _run_all(fleet_env, first.queued)
    catalog.write_cluster("cluster-b", ingress_class="traefik")
    _, second = plan_catalog(fleet_env.storage, catalog.root)
    _run_all(fleet_env, second.queued)
    targets = _targets(fleet_env, second.run_id)
    rendered = sorted(key for key, target in targets.items() if target.state == "succeeded")
    assert rendered == [(f"app-{i}", "cluster-b") for i in range(4)]
    assert all(t.state == "cached" for key, t in targets.items() if key[1] != "cluster-b")
    assert b"traefik" in fleet_env.storage.objects.get(targets[("app-0", "cluster-b")].output_digest or "")


def test_a_request_pack_whose_bytes_do_not_match_its_digest_fails_its_applications_targets_as_forged(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    victim = _targets(fleet_env, planned.run_id)[("app-2", "cluster-a")]
    assert victim.request_pack is not None
    objects = Path(fleet_env.settings.object_store)
    pack = stored_bytes(objects, victim.request_pack)
    overwrite_blob(objects, victim.request_pack, pack.replace(b"cluster-a", b"cluster-b"))
    _run_all(fleet_env, planned.queued)
    targets = _targets(fleet_env, planned.run_id)
    failed = {key: t for key, t in targets.items() if t.state == "failed"}
    assert sorted(failed) == sorted(key for key in targets if key[0] == "app-2")
    forged = failed[("app-2", "cluster-a")]
    assert (forged.error_code, forged.output_digest) == (FORGED_REQUEST, None)
    assert victim.request_digest in (forged.error_message or "")
    assert victim.request_pack in (forged.error_message or "")


def test_a_pack_holding_other_bytes_under_a_targets_request_digest_fails_that_target_as_forged(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    victim = _targets(fleet_env, planned.run_id)[("app-2", "cluster-a")]
    assert victim.request_pack is not None and victim.request_digest is not None
    lines = fleet_env.storage.objects.get(victim.request_pack).split(b"\n")
    forged_lines = [
        line.replace(b"cluster-a", b"cluster-b") if line.startswith(victim.request_digest.encode()) else line
        for line in lines
    ]
    assert forged_lines != lines
    forged_pack = fleet_env.storage.objects.put(b"\n".join(forged_lines))  # a well-stored blob of its own
    with session_scope(fleet_env.storage.sessions) as session:
        session.execute(
            update(models.RenderTarget)
            .where(models.RenderTarget.id == victim.target_id)
            .values(request_pack=forged_pack)
        )
    _run_all(fleet_env, planned.queued)
    targets = _targets(fleet_env, planned.run_id)
    forged = targets[("app-2", "cluster-a")]
    assert (forged.state, forged.error_code, forged.output_digest) == ("failed", FORGED_REQUEST, None)
    assert "does not match its digest" in (forged.error_message or "")
    assert victim.request_digest in (forged.error_message or "")
    assert [k for k, t in targets.items() if t.state == "failed"] == [("app-2", "cluster-a")]


def test_a_message_naming_another_batch_fails_its_targets_and_renders_nothing(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    job_id, _ = planned.queued[0]
    outcome = run_job(fleet_env.storage, fleet_env.signer, job_id, worker="w1", expected_batch_key="0" * 64)
    assert outcome.failed >= 1 and outcome.rendered == 0
    assert {result.error_code for result in outcome.results} == {jobs.FORGED_MESSAGE}
    assert _count(fleet_env, models.RenderOutput) == 0


def test_a_duplicate_delivery_of_a_batch_is_skipped_and_writes_nothing_twice(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    job_id, key = planned.queued[0]
    first = run_job(fleet_env.storage, fleet_env.signer, job_id, worker="w1", expected_batch_key=key)
    evidence = _count(fleet_env, models.EvidenceRecord)
    again = run_job(fleet_env.storage, fleet_env.signer, job_id, worker="w2", expected_batch_key=key)
    assert (first.state, again.state) == ("succeeded", "skipped")
    assert _count(fleet_env, models.EvidenceRecord) == evidence


def test_a_re_delivered_batch_skips_what_a_twin_already_rendered(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    """Two runs of one catalog plan the same keys; when the second run's batch runs, the first
    run's twin has rendered them: they are recorded as cached, with no new render or evidence."""
    _, first = plan_catalog(fleet_env.storage, catalog.root)
    _, second = plan_catalog(fleet_env.storage, catalog.root)  # planned before anything rendered
    assert second.cached == 0
    _run_all(fleet_env, first.queued)
    evidence = _count(fleet_env, models.EvidenceRecord)
    outcomes = _run_all(fleet_env, second.queued)
    assert sum(outcome.rendered for outcome in outcomes) == 0
    assert sum(outcome.cached for outcome in outcomes) == second.total
    assert _count(fleet_env, models.EvidenceRecord) == evidence
    assert run_summary(fleet_env.storage, second.run_id).counts == {"cached": second.total}


def _stale_job_ids(fleet_env: FleetEnv) -> set[str]:
    """Requeue every running job at once (as a reconciler past its timeout) and name them."""
    stale = stale_jobs(fleet_env.storage, timeout=timedelta(seconds=-1))
    return {job for jobs in stale.values() for job, _ in jobs}


@pytest.mark.parametrize("then_fail", [False, True], ids=["success", "failure"])
def test_a_worker_whose_claim_was_taken_over_reports_skipped_and_records_nothing(
    fleet_env: FleetEnv, catalog: Catalog, monkeypatch: pytest.MonkeyPatch, then_fail: bool
) -> None:
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    job_id, key = planned.queued[0]
    render = step.render
    taken: list[bool] = []

    def taken_over(request: object, **options: object) -> object:
        """While w1 renders its first target, the reconciler re-queues its job and w2 claims it."""
        if not taken and job_id in _stale_job_ids(fleet_env):
            taken.append(True)
            with session_scope(fleet_env.storage.sessions) as session:
                assert claim_job(session, job_id, worker="w2") is not None
        if then_fail:
            raise CoreError("refused after the takeover")
        return render(request, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(step, "render", taken_over)
    outcome = run_job(fleet_env.storage, fleet_env.signer, job_id, worker="w1", expected_batch_key=key)
    assert outcome.state == "skipped"
    with session_scope(fleet_env.storage.sessions) as session:
        job = session.get(models.RenderJob, job_id)
        assert job is not None and (job.state, job.claimed_by, job.attempts) == ("running", "w2", 2)
    assert {t.state for t in _targets(fleet_env, planned.run_id).values()} == {"queued"}
    for model in (models.EvidenceRecord, models.ActionCacheEntry, models.FailedAction):
        assert _count(fleet_env, model) == 0  # w1's rows were rolled back

    monkeypatch.undo()  # the reconciler hands the job on again; every target ends exactly once
    stop_render_children()  # renders run in a child forked while the takeover was patched in
    stale_jobs(fleet_env.storage, timeout=timedelta(seconds=-1))
    _run_all(fleet_env, planned.queued, worker="w3")
    summary = run_summary(fleet_env.storage, planned.run_id)
    assert summary.state == "completed" and summary.counts == {"succeeded": planned.total}


def test_jobs_recorded_together_record_those_still_claimed_and_skip_those_taken_over(
    fleet_env: FleetEnv, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call's consecutive jobs are recorded in one transaction: while w1 renders its second job,
    the reconciler re-queues both jobs w1 holds and w2 claims the first; w1 then records its
    last two jobs and nothing of the first two (the transaction is recorded again without them)."""
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    assert len(planned.queued) == jobs.RECORD_GROUP_JOBS == 4  # one group: every job of the run
    first_job = planned.queued[0][0]
    render = step.render
    applications: list[bytes] = []

    def taken_over(request: object, **options: object) -> object:
        app = request.app  # type: ignore[attr-defined]
        if app not in applications:
            applications.append(app)
            if len(applications) == 2:  # the second job's first render: the first job is waiting
                _stale_job_ids(fleet_env)  # w1's two claims back to queued (and all resent)
                with session_scope(fleet_env.storage.sessions) as session:
                    assert claim_job(session, first_job, worker="w2") is not None
        return render(request, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(step, "render", taken_over)
    outcomes = jobs.run_jobs(fleet_env.storage, fleet_env.signer, planned.queued, worker="w1")
    assert [outcome.job_id for outcome in outcomes] == [job_id for job_id, _ in planned.queued]
    assert [outcome.state for outcome in outcomes] == ["skipped", "skipped", "succeeded", "succeeded"]
    recorded = sum(outcome.rendered for outcome in outcomes)
    assert recorded == sum(len(o.results) for o in outcomes[2:]) > 0
    with session_scope(fleet_env.storage.sessions) as session:
        states = {
            job.id: (job.state, job.claimed_by)
            for job in session.scalars(
                select(models.RenderJob).where(models.RenderJob.run_id == planned.run_id)
            )
        }
    assert states[first_job] == ("running", "w2")
    assert states[planned.queued[1][0]][0] == "queued"
    targets = _targets(fleet_env, planned.run_id).values()
    assert sum(1 for t in targets if t.state == "succeeded") == recorded
    assert _count(fleet_env, models.EvidenceRecord) == recorded  # nothing of the first two jobs

    monkeypatch.undo()  # the reconciler hands the two jobs on again; every target ends exactly once
    stop_render_children()
    stale_jobs(fleet_env.storage, timeout=timedelta(seconds=-1))
    _run_all(fleet_env, planned.queued[:2], worker="w3")
    summary = run_summary(fleet_env.storage, planned.run_id)
    assert summary.state == "completed" and summary.counts == {"succeeded": planned.total}
    assert _count(fleet_env, models.EvidenceRecord) == planned.total


PACKAGE = """apiVersion: launcher.gokure.dev/v1alpha1
kind: Package
metadata:
  name: app-0
spec:
  parameters:
    - {name: tag, type: string, default: v1.0.0}
"""


def test_gc_keeps_every_document_a_planned_run_still_needs(fleet_env: FleetEnv, catalog: Catalog) -> None:
    """kurel.yaml and values files are named only by the snapshot manifest: a sweep with no grace
    period between planning and rendering must not take them, or their targets could never render."""
    folder = catalog.root / "applications" / "app-0"
    (folder / "kurel.yaml").write_text(PACKAGE)
    (folder / "values.yaml").write_text("tag: v2.0.0\n")
    (folder / "values").mkdir()
    (folder / "values" / "cluster-b.yaml").write_text("tag: v3.0.0\n")
    (folder / "app.yaml").write_text((folder / "app.yaml").read_text().replace(":v1.0.0", ":${tag}"))
    _, planned = plan_catalog(fleet_env.storage, catalog.root)
    with session_scope(fleet_env.storage.sessions) as session:
        report = audit.sweep(session, fleet_env.storage.objects, dry_run=False, grace=timedelta(0))
    assert report.removed == [] and report.missing == {}
    _run_all(fleet_env, planned.queued)
    targets = _targets(fleet_env, planned.run_id)
    assert {t.state for t in targets.values()} == {"succeeded"}
    output = fleet_env.storage.objects.get(targets[("app-0", "cluster-b")].output_digest or "")
    assert b"ghcr.io/example/app:v3.0.0" in output


def test_a_batch_whose_blobs_the_store_refuses_records_nothing_and_is_queued_again(
    tmp_path: Path, database_url: str, catalog: Catalog, small_filesystem: Path
) -> None:
    """Blob before row: when the store refuses a batch's blobs, nothing of the batch is recorded
    and the job goes back to the queue; once the store has room, the same job records everything."""
    env = open_fleet_env(tmp_path, database_url, small_filesystem / "objects")
    try:
        _, planned = plan_catalog(env.storage, catalog.root)  # its request packs are stored
        job_id, key = planned.queued[0]
        fill_filesystem(small_filesystem)
        with pytest.raises(ObjectStoreUnavailableError) as refused:
            run_job(env.storage, env.signer, job_id, worker="w1", expected_batch_key=key)
        assert refused.value.code == STORE_FULL
        for model in (models.EvidenceRecord, models.ActionCacheEntry, models.RenderOutput):
            assert _count(env, model) == 0, model
        with session_scope(env.storage.sessions) as session:
            job = session.get(models.RenderJob, job_id)
            assert job is not None and job.state == "queued"
        assert {t.state for t in _targets(env, planned.run_id).values()} == {"queued"}

        (small_filesystem / "filler").unlink()
        outcome = run_job(env.storage, env.signer, job_id, worker="w2", expected_batch_key=key)
        assert outcome.state == "succeeded" and outcome.rendered > 0
        assert _count(env, models.EvidenceRecord) == outcome.rendered
    finally:
        env.storage.close()


def test_jobs_run_in_turn_record_each_job_in_order_and_skip_one_already_done(
    fleet_env: FleetEnv, catalog: Catalog
) -> None:
    """``run_jobs`` renders each job while the one before it is recorded; every job still ends as
    it would alone, in the order given, and a job finished elsewhere meanwhile is skipped."""
    planned = plan_run(fleet_env.storage, load_catalog(catalog.root), source="tests", batch_size=2)
    done_elsewhere, key = planned.queued[2]
    run_job(fleet_env.storage, fleet_env.signer, done_elsewhere, worker="w2", expected_batch_key=key)
    outcomes = jobs.run_jobs(fleet_env.storage, fleet_env.signer, planned.queued, worker="w1")
    assert [outcome.job_id for outcome in outcomes] == [job_id for job_id, _ in planned.queued]
    assert [outcome.state for outcome in outcomes] == [
        "skipped" if job_id == done_elsewhere else "succeeded" for job_id, _ in planned.queued
    ]
    summary = run_summary(fleet_env.storage, planned.run_id)
    assert (summary.state, summary.counts) == ("completed", {"succeeded": planned.total})
    for (application, _), target in _targets(fleet_env, planned.run_id).items():
        assert f"name: {application}".encode() in fleet_env.storage.objects.get(target.output_digest or "")
    assert _count(fleet_env, models.EvidenceRecord) == planned.total


def test_a_store_failure_while_the_next_job_renders_gives_both_claims_back_and_a_retry_records_each_its_own(
    tmp_path: Path, database_url: str, catalog: Catalog, small_filesystem: Path
) -> None:
    """The first job's blobs are refused while the second job renders: both jobs go back to the
    queue with nothing recorded, the render child's unread outcomes are dropped, and the retry
    renders each target's own output."""
    env = open_fleet_env(tmp_path, database_url, small_filesystem / "objects")
    try:
        _, planned = plan_catalog(env.storage, catalog.root)
        first_two = planned.queued[:2]
        fill_filesystem(small_filesystem)
        with pytest.raises(ObjectStoreUnavailableError):
            jobs.run_jobs(env.storage, env.signer, first_two, worker="w1")
        with session_scope(env.storage.sessions) as session:
            states = [session.get(models.RenderJob, job_id) for job_id, _ in first_two]
            assert [job.state if job else None for job in states] == ["queued", "queued"]
        for model in (models.EvidenceRecord, models.ActionCacheEntry, models.RenderOutput):
            assert _count(env, model) == 0, model

        (small_filesystem / "filler").unlink()
        outcomes = jobs.run_jobs(env.storage, env.signer, planned.queued, worker="w2")
        assert {outcome.state for outcome in outcomes} == {"succeeded"}
        for (application, _), target in _targets(env, planned.run_id).items():
            assert f"name: {application}".encode() in env.storage.objects.get(target.output_digest or "")
        assert run_summary(env.storage, planned.run_id).counts == {"succeeded": planned.total}
    finally:
        env.storage.close()


def test_a_call_of_several_jobs_on_postgresql_probes_its_runs_completion_once_after_its_last_job(
    tmp_path: Path, databases: DatabaseFactory, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL a recorded job's run is probed for completion after the commit: once per
    call, after its last job (the jobs it still holds keep the run open until then), and the run
    is finished when the call returns. (SQLite finishes the run in its last job's transaction.)"""
    import psycopg

    env = open_fleet_env(tmp_path, databases.migrated("postgresql"), tmp_path / "objects")
    try:
        planned = plan_run(env.storage, load_catalog(catalog.root), source="tests", batch_size=2)
        assert len(planned.queued) > 2
        probes: list[str] = []
        execute = psycopg.Cursor.execute

        def counted(cursor, query, *args, **kwargs):  # noqa: ANN001, ANN202 - the driver's own signature
            if str(query).startswith("SELECT EXISTS (SELECT 1 FROM render_jobs WHERE render_jobs.run_id"):
                probes.append(str(query))
            return execute(cursor, query, *args, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "execute", counted)  # counts, and runs every statement
        jobs.run_jobs(env.storage, env.signer, planned.queued, worker="w1")
        monkeypatch.undo()
        assert len(probes) == 1
        summary = run_summary(env.storage, planned.run_id)
        assert (summary.state, summary.counts) == ("completed", {"succeeded": planned.total})
    finally:
        env.storage.close()
