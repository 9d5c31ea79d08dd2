"""What a person may type for a run: its full id, a unique prefix of it, or ``latest`` (the
newest run of any kind). Every command that takes a run id resolves it here."""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.orm import Session

from farm.store.models import FleetRun

LATEST = "latest"
SHOWN_CANDIDATES = 5
_HEX = re.compile(r"^[0-9a-f]+$")


class RunIdError(LookupError):
    """No run, or more than one, answers to what was typed; the message says which and what to do."""


class AmbiguousRunId(RunIdError):
    """More than one run's id begins with what was typed: ``candidates`` holds at most
    ``SHOWN_CANDIDATES`` of them."""

    def __init__(self, message: str, candidates: list[str]) -> None:
        super().__init__(message)
        self.candidates = candidates


def resolve_run_id(session: Session, typed: str) -> str:
    """The id of the one run ``typed`` names: an id, a unique prefix of one, or ``latest``."""
    if typed == LATEST:
        newest = session.scalar(
            select(FleetRun.id).order_by(FleetRun.created_at.desc(), FleetRun.id.desc()).limit(1)
        )
        if newest is None:
            raise RunIdError("no run is recorded yet, so none is the latest: run `farm run CATALOG` first")
        return newest
    if session.get(FleetRun, typed) is not None:
        return typed
    candidates = _ids_starting_with(session, typed.lower()) if _HEX.match(typed.lower()) else []
    if not candidates:
        raise RunIdError(
            f"run {typed} does not exist (give a run id, a unique prefix of one, or latest; farm runs lists them)"
        )
    if len(candidates) > 1:
        shown = ", ".join(candidates[:SHOWN_CANDIDATES]) + (
            " …" if len(candidates) > SHOWN_CANDIDATES else ""
        )
        raise AmbiguousRunId(
            f"run id prefix {typed!r} is ambiguous: runs {shown} begin with it; give more of the id",
            candidates[:SHOWN_CANDIDATES],
        )
    return candidates[0]


def _ids_starting_with(session: Session, prefix: str) -> list[str]:
    statement = (
        select(FleetRun.id)
        .where(FleetRun.id.startswith(prefix, autoescape=True))
        .order_by(FleetRun.id)
        .limit(SHOWN_CANDIDATES + 1)
    )
    return list(session.scalars(statement))
