"""The check kinds of ``farm verify --all``, in the order they run: the one place a kind is added.

A check is a function ``(Context) -> Iterator[Finding]``: one finding per thing it checked (an
output, a row, a blob), carrying the kind it is summed under and its failure (None when it
passed) or a warning. It reads the store through ``farm/store`` functions and streams: it yields
as it goes, so a check over 100,000 rows holds a page of them, not all.

To add a kind (a publish record, say): write ``def check_publish_records(context) -> Iterator[
Finding]`` in its own module and append ``Check("publish records", check_publish_records)`` to
``CHECKS`` below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from farm.publish.verify import check_publish_records
from farm.verification import checks
from farm.verification.findings import Context, Finding


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[Context], Iterator[Finding]]


CHECKS: tuple[Check, ...] = (
    Check("outputs", checks.outputs),
    Check("targets", checks.targets),
    Check("runs", checks.runs),
    Check("evidence envelopes", checks.evidence_envelopes),
    Check("failure cache", checks.failure_cache),
    Check("audit records", checks.audit_records),
    Check("qualification", checks.qualification),
    Check("publish records", check_publish_records),
    Check("blobs", checks.blobs),
    Check("references", checks.references),
    Check("orphans", checks.orphans),
)

__all__ = ["CHECKS", "Check", "Context", "Finding"]
