"""What a check of ``farm verify --all`` is handed and what it yields."""

from __future__ import annotations

from dataclasses import dataclass

from farm.evidence.keys import TrustedSigners
from farm.evidence.verify import Failure
from farm.store.context import Storage
from farm.store.db import Session


@dataclass(frozen=True)
class Context:
    storage: Storage
    session: Session
    trusted: TrustedSigners


@dataclass(frozen=True)
class Finding:
    kind: str  # what the summary counts it under: "output", "failure cache row", "blob: document", ...
    failure: Failure | None = None
    warning: Failure | None = None  # reported, but no failure (an orphan blob)
    passed: str = ""  # printed as ``ok   <passed>`` when it passed (each output, as --run prints)
