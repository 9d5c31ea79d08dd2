"""Run retention for ``farm gc --keep-runs N`` / ``--older-than DURATION``: the rows old runs left.

A run is **pruned** when retention does not keep it: it is not among the ``keep_runs`` newest runs
of its fleet and kind, it was created before ``now - older_than`` (each rule applies when given,
both when both are), it has finished, and nothing else names it. Never pruned:

- the latest complete run of kind ``fleet`` of each fleet (the baseline of ``farm plan``,
  ``farm diff`` and the dashboard), and any run not finished;
- a run an audit record (``audit_records.run_id``), a qualification (``qualification_runs
  .fleet_run_id``, ``qualification_evidence.run_id``) or a publish (``publishes.run_id``) names.

Pruning a run deletes its jobs and its cache hits (a cache hit points at an output whose evidence
names the target that rendered it; failed targets stay, so the run's state still derives from its
rows; those that stay no longer name a job), and
the run's row once no target row is left. A rendered target stays with its run: its evidence
record (append-only) names it, the action cache names that record, and ``farm verify`` checks the
record against the row. Outputs, evidence, the action and failure caches, snapshots, audit and
qualification records are never deleted here; the blobs nothing names any more are left to the
orphan sweep (``farm.store.audit.sweep``), which runs after this in the same ``farm gc``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, exists, func, select, update
from sqlalchemy.orm import Session

from farm.store.models import (
    AuditRecord,
    FleetRun,
    JobState,
    Publish,
    QualificationEvidence,
    QualificationRun,
    RenderJob,
    RenderTarget,
    RunKind,
    RunState,
    utcnow,
)
from farm.store.runs import COMPLETE_RUN_STATES, chunks

FINISHED_RUN_STATES = (*COMPLETE_RUN_STATES, RunState.ABORTED.value)


# the rows a pruned run loses: cache hits that served an output (the output's evidence names the
# target that rendered it). Its failed and cached-failed targets stay, so the run's stored state
# still derives from its rows (``farm verify --all``'s run check); failures are few.
def _prunable_targets(chunk: list[str]):  # noqa: ANN202 - a SQL condition on RenderTarget
    return (
        RenderTarget.run_id.in_(chunk)
        & (RenderTarget.state == JobState.CACHED.value)
        & RenderTarget.error_code.is_(None)
    )


@dataclass(frozen=True)
class Retention:
    """What ``farm gc`` keeps: the ``keep_runs`` newest runs of each fleet and kind, and the runs
    younger than ``older_than``; None leaves that rule out."""

    keep_runs: int | None = None
    older_than: timedelta | None = None

    def __post_init__(self) -> None:
        if self.keep_runs is not None and self.keep_runs < 1:
            raise ValueError(f"keep_runs: must be at least 1, got {self.keep_runs}")

    @property
    def prunes(self) -> bool:
        return self.keep_runs is not None or self.older_than is not None


@dataclass
class PruneReport:
    runs: list[str]  # the runs pruned, oldest first
    targets: int = 0  # target rows deleted
    jobs: int = 0  # job rows deleted
    run_rows: int = 0  # run rows deleted (runs left without a target row)


def prunable_runs(session: Session, retention: Retention, *, now: datetime | None = None) -> list[str]:
    """The ids of the runs ``retention`` does not keep, oldest first (see the module docstring)."""
    if not retention.prunes:
        return []
    newest_first = func.row_number().over(
        partition_by=(FleetRun.fleet, FleetRun.kind),
        order_by=(FleetRun.created_at.desc(), FleetRun.id.desc()),
    )
    ranked = select(FleetRun.id, FleetRun.created_at, newest_first.label("rank")).where(
        FleetRun.state.in_(FINISHED_RUN_STATES), ~_named_elsewhere()
    )
    ranked_runs = ranked.subquery()
    statement = select(ranked_runs.c.id).order_by(ranked_runs.c.created_at, ranked_runs.c.id)
    if retention.keep_runs is not None:
        statement = statement.where(ranked_runs.c.rank > retention.keep_runs)
    if retention.older_than is not None:
        statement = statement.where(ranked_runs.c.created_at < (now or utcnow()) - retention.older_than)
    baselines = _baselines(session)
    return [run_id for run_id in session.scalars(statement) if run_id not in baselines]


def _named_elsewhere():  # noqa: ANN202 - a SQL condition on FleetRun
    return (
        exists().where(AuditRecord.run_id == FleetRun.id)
        | exists().where(QualificationRun.fleet_run_id == FleetRun.id)
        | exists().where(QualificationEvidence.run_id == FleetRun.id)
        | exists().where(Publish.run_id == FleetRun.id)
    )


def _baselines(session: Session) -> set[str]:
    """The latest complete fleet run of each fleet."""
    newest_first = func.row_number().over(
        partition_by=FleetRun.fleet, order_by=(FleetRun.created_at.desc(), FleetRun.id.desc())
    )
    ranked = (
        select(FleetRun.id, newest_first.label("rank"))
        .where(FleetRun.kind == RunKind.FLEET.value, FleetRun.state.in_(COMPLETE_RUN_STATES))
        .subquery()
    )
    return set(session.scalars(select(ranked.c.id).where(ranked.c.rank == 1)))


def prune_runs(
    session: Session, retention: Retention, *, dry_run: bool = False, now: datetime | None = None
) -> PruneReport:
    """Delete what ``retention`` does not keep of old runs' rows; the caller commits. With
    ``dry_run``, counts what would go and deletes nothing."""
    report = PruneReport(prunable_runs(session, retention, now=now))
    for chunk in chunks(report.runs):
        unsigned = _prunable_targets(chunk)
        jobs = RenderJob.run_id.in_(chunk)
        if dry_run:
            report.targets += session.scalar(select(func.count()).where(unsigned)) or 0
            report.jobs += session.scalar(select(func.count()).where(jobs)) or 0
            continue
        report.targets += _deleted(session, delete(RenderTarget).where(unsigned))
        # the rows that stay (rendered and failed targets) no longer name the jobs that go
        session.execute(
            update(RenderTarget)
            .where(RenderTarget.run_id.in_(chunk), RenderTarget.job_id.is_not(None))
            .values(job_id=None)
            .execution_options(synchronize_session=False)
        )
        report.jobs += _deleted(session, delete(RenderJob).where(jobs))
        emptied = FleetRun.id.in_(chunk) & ~exists().where(RenderTarget.run_id == FleetRun.id)
        report.run_rows += _deleted(session, delete(FleetRun).where(emptied))
    return report


def _deleted(session: Session, statement) -> int:  # noqa: ANN001 - a DELETE statement
    return int(session.execute(statement.execution_options(synchronize_session=False)).rowcount)  # type: ignore[attr-defined]
