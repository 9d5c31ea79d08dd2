"""A run's progress while ``farm run`` waits for it: a rich bar on a terminal, a plain line every
few seconds otherwise (a CI log, ``farm run … 2>log``). Both show targets done of all, rendered,
cached and failed, the render rate and the time left.

The counts are read from the run's rows (``farm.fleet.progress.run_progress``): the same
display follows the local pool (called as each job finishes and between) and the Celery workers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from farm.fleet.progress import RunSummary, run_progress
from farm.store.runs import CACHED_FAILURE

if TYPE_CHECKING:
    from rich.progress import Progress

    from farm.store.context import Storage

TERMINAL_REFRESH_SECONDS = 0.25
PLAIN_EVERY_SECONDS = 5.0


@dataclass(frozen=True)
class Counts:
    """What one look at the run shows."""

    done: int
    total: int
    rendered: int
    cached: int
    failed: int

    @classmethod
    def of(cls, summary: RunSummary) -> Counts:
        counts = summary.counts
        return cls(
            done=summary.done,
            total=summary.total,
            rendered=counts.get("succeeded", 0),
            cached=counts.get("cached", 0) + counts.get(CACHED_FAILURE, 0),
            failed=summary.failed,
        )


def rate_and_eta(start: Counts, now: Counts, elapsed: float) -> tuple[float | None, float | None]:
    """Targets finished per second since ``start`` (cache hits recorded at planning excluded),
    and the seconds left at that rate; None while nothing has finished yet."""
    finished = now.done - start.done
    if finished <= 0 or elapsed <= 0:
        return None, None
    rate = finished / elapsed
    return rate, (now.total - now.done) / rate


def describe(counts: Counts, rate: float | None, eta: float | None) -> str:
    """``12/31 targets done: rendered 10, cached 2, failed 0; 4.1 targets/s, ETA 5 s``."""
    pace = f"{rate:.1f} targets/s, ETA {_seconds(eta)}" if rate is not None else "rate -, ETA -"
    return (
        f"{counts.done}/{counts.total} targets done: rendered {counts.rendered}, cached {counts.cached}, "
        f"failed {counts.failed}; {pace}"
    )


def _seconds(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    whole = round(seconds)
    return f"{whole // 60} min {whole % 60} s" if whole >= 60 else f"{whole} s"


class RunProgressDisplay:
    """Shows one run's progress; ``update()`` may be called as often as wanted (it reads the run
    at most every refresh interval). Used as a context manager; ``mode`` is ``terminal``,
    ``plain`` or ``off``."""

    def __init__(
        self,
        storage: Storage,
        run_id: str,
        mode: str,
        stream: TextIO,
        every: float = PLAIN_EVERY_SECONDS,
    ) -> None:
        self._storage, self._run_id, self._mode, self._stream = storage, run_id, mode, stream
        self._every = TERMINAL_REFRESH_SECONDS if mode == "terminal" else every
        self._started = time.monotonic()
        self._last_look = self._started
        self._first: Counts | None = None
        self._last: Counts | None = None
        self._bar: Progress | None = None
        self._task: int | None = None

    def __enter__(self) -> RunProgressDisplay:
        if self._mode == "off":
            return self
        self._first = self._last = Counts.of(run_progress(self._storage, self._run_id))
        if self._first.done == self._first.total:  # nothing to wait for (a no-change re-run)
            self._mode = "off"
        elif self._mode == "terminal":
            self._start_bar(self._first)
        else:
            self._line(self._first)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._mode == "off":
            return
        final = Counts.of(run_progress(self._storage, self._run_id))
        if self._bar is not None:
            self._show_on_bar(final)
            self._bar.stop()
        elif final != self._last:
            self._line(final)

    def update(self) -> None:
        if self._mode == "off" or time.monotonic() - self._last_look < self._every:
            return
        self._last_look = time.monotonic()
        counts = Counts.of(run_progress(self._storage, self._run_id))
        if self._bar is not None:
            self._show_on_bar(counts)
        else:
            self._line(counts)

    def _pace(self, counts: Counts) -> tuple[float | None, float | None]:
        assert self._first is not None
        return rate_and_eta(self._first, counts, time.monotonic() - self._started)

    def _line(self, counts: Counts) -> None:
        self._last = counts
        self._stream.write(f"run {self._run_id}: {describe(counts, *self._pace(counts))}\n")
        self._stream.flush()

    def _start_bar(self, counts: Counts) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("rendering"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            console=Console(file=self._stream, markup=False),
        )
        self._bar.start()
        self._task = self._bar.add_task("run", total=counts.total, completed=counts.done, detail="")
        self._show_on_bar(counts)

    def _show_on_bar(self, counts: Counts) -> None:
        assert self._bar is not None and self._task is not None
        self._last = counts
        rate, eta = self._pace(counts)
        detail = f"rendered {counts.rendered}, cached {counts.cached}, failed {counts.failed}, " + (
            f"{rate:.1f}/s, ETA {_seconds(eta)}" if rate is not None else "-/s, ETA -"
        )
        self._bar.update(self._task, completed=counts.done, detail=detail)
