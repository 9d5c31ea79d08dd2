"""Read queries of the API (dashboard): paged runs list."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from farm.store.models import FleetRun, RenderOutput


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
