"""What changed between two runs, target by target: added, removed, changed, fixed, failed."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from farm.core.errors import bound_message
from farm.store.context import Storage
from farm.store.db import read_scope
from farm.store.runs import run_by_id, targets_of_run


@dataclass(frozen=True)
class TargetOutput:
    application: str
    cluster: str
    state: str
    output_digest: str | None
    error_code: str | None = None
    error_message: str | None = None

    @property
    def failed(self) -> bool:
        return self.error_code is not None


def run_outputs(storage: Storage, run_id: str) -> dict[tuple[str, str], TargetOutput]:
    with read_scope(storage.sessions) as session:
        if run_by_id(session, run_id) is None:
            raise LookupError(f"run {run_id} does not exist")
        return {
            (row.application, row.cluster_profile): TargetOutput(
                row.application,
                row.cluster_profile,
                row.state,
                row.output_digest,
                row.error_code,
                row.error_message,
            )
            for row in targets_of_run(session, run_id)
        }


@dataclass(frozen=True)
class FailedTarget:
    """A target that failed in the second run; ``before`` is what it was in the first:
    ``rendered``, ``failed`` (with ``before_code``) or ``absent``."""

    target: tuple[str, str]
    error_code: str
    message: str
    before: str
    before_code: str | None = None

    def as_json(self) -> dict[str, str | None]:
        return {
            "target": f"{self.target[0]}/{self.target[1]}",
            "error_code": self.error_code,
            "message": self.message,
            "before": self.before,
            "before_error_code": self.before_code,
        }


@dataclass(frozen=True)
class RunDiff:
    """Targets by what happened between two runs. A target that failed in the second run is
    ``failed`` (never ``changed``, ``added`` or ``unchanged``); one that failed in the first and
    rendered in the second is ``fixed``. ``changed`` compares two rendered outputs only."""

    added: list[tuple[str, str]]
    removed: list[tuple[str, str]]
    changed: list[tuple[str, str]]
    unchanged: int
    failed: list[FailedTarget] = field(default_factory=list)
    fixed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        """Anything a CI check should stop on: a difference or a failure."""
        return bool(self.added or self.removed or self.changed or self.failed or self.fixed)


def _failed_target(target: tuple[str, str], after: TargetOutput, before: TargetOutput | None) -> FailedTarget:
    if before is None:
        was = "absent"
    else:
        was = "failed" if before.failed else "rendered"
    return FailedTarget(
        target,
        after.error_code or "unknown",
        bound_message(after.error_message or ""),
        was,
        before.error_code if before is not None else None,
    )


def diff_runs(storage: Storage, run_a: str, run_b: str) -> RunDiff:
    before, after = run_outputs(storage, run_a), run_outputs(storage, run_b)
    failed = [_failed_target(t, after[t], before.get(t)) for t in sorted(after) if after[t].failed]
    failing = {f.target for f in failed}
    added = sorted(set(after) - set(before) - failing)
    removed = sorted(set(before) - set(after))
    common = sorted((set(before) & set(after)) - failing)
    fixed = [t for t in common if before[t].failed]
    changed = [
        t for t in common if not before[t].failed and before[t].output_digest != after[t].output_digest
    ]
    return RunDiff(added, removed, changed, len(common) - len(changed) - len(fixed), failed, fixed)


def _output_of(storage: Storage, run_id: str, target: tuple[str, str]) -> TargetOutput:
    """The output of ``target`` in ``run_id``; LookupError naming both when the run has no such target."""
    output = run_outputs(storage, run_id).get(target)
    if output is None:
        raise LookupError(f"run {run_id} has no target {target[0]}/{target[1]}")
    return output


def unified_output_diff(storage: Storage, run_a: str, run_b: str, target: tuple[str, str]) -> str:
    """The unified diff of ``target``'s output from ``run_a`` to ``run_b``; LookupError when either
    run does not exist or has no such target."""
    before, after = _output_of(storage, run_a, target), _output_of(storage, run_b, target)

    def text(output: TargetOutput) -> list[str]:
        if output.output_digest is None:
            return []
        return storage.objects.get(output.output_digest).decode().splitlines(keepends=True)

    name = f"{target[0]}/{target[1]}"
    return "".join(difflib.unified_diff(text(before), text(after), f"{run_a}/{name}", f"{run_b}/{name}"))
