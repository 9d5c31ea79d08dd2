"""Read queries of the API (dashboard): paged runs list."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from farm.store.models import FleetRun, RenderOutput, RenderTarget
from farm.store.runs import TARGET_ROW_COLUMNS, TargetRow


def runs_page(session: Session, limit: int, after: tuple[datetime, str] | None = None) -> list[FleetRun]:
    """Runs newest first (by creation time, then id), starting after the ``(created_at, id)`` key."""
    statement = select(FleetRun)
    if after is not None:
        created_at, run_id = after
        statement = statement.where(
            or_(
                FleetRun.created_at < created_at,
                and_(FleetRun.created_at == created_at, FleetRun.id < run_id),
            )
        )
    statement = statement.order_by(FleetRun.created_at.desc(), FleetRun.id.desc()).limit(limit)
    return list(session.scalars(statement))


def output_known(session: Session, digest: str) -> bool:
    """Whether ``digest`` is a recorded render output (the API never serves other blobs by digest)."""
    return session.get(RenderOutput, digest) is not None


def target_of_run(session: Session, run_id: str, target_id: str) -> TargetRow | None:
    """One target of a run by its id, or None."""
    statement = select(*TARGET_ROW_COLUMNS).where(RenderTarget.run_id == run_id, RenderTarget.id == target_id)
    row = session.execute(statement).first()
    return TargetRow(*row) if row else None


def previous_run_of_target(session: Session, run_id: str, application: str, cluster: str) -> str | None:
    """The newest run before ``run_id`` that rendered (application, cluster)."""
    created_at = select(FleetRun.created_at).where(FleetRun.id == run_id).scalar_subquery()
    return session.scalar(
        select(RenderTarget.run_id)
        .join(FleetRun, FleetRun.id == RenderTarget.run_id)
        .where(
            RenderTarget.application == application,
            RenderTarget.cluster_profile == cluster,
            FleetRun.created_at < created_at,
        )
        .order_by(FleetRun.created_at.desc())
        .limit(1)
    )


def target_history(
    session: Session, application: str, cluster: str, limit: int
) -> list[tuple[FleetRun, TargetRow]]:
    """The results of one (application, cluster) across runs, newest run first."""
    statement = (
        select(FleetRun, RenderTarget)
        .join(RenderTarget, RenderTarget.run_id == FleetRun.id)
        .where(RenderTarget.application == application, RenderTarget.cluster_profile == cluster)
        .order_by(FleetRun.created_at.desc(), FleetRun.id.desc())
        .limit(limit)
    )
    return [
        (
            run,
            TargetRow(
                t.application,
                t.cluster_profile,
                t.selection,
                t.state,
                t.output_digest,
                t.error_code,
                t.error_message,
                t.action_key,
                t.request_digest,
                t.id,
                t.job_id,
                t.request_pack,
            ),
        )
        for run, t in session.execute(statement)
    ]
