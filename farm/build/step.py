"""Rendering one request: lock check, chart fulfilment and the core's render, in a bounded child.

Errors of a render are values (``RenderOutcome``): a bad input fails its own target with the
core's stable code and message; a handler bug fails it as ``render.internal_error`` with its
traceback for the log; the bounds stop a render that takes too long or too much memory
(``render.timeout``, ``render.memory``, ``render.crashed``).

This module imports no storage: ``farm build`` uses it as the workers do, and starts fast.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from farm.build.bounded import BoundExceeded, InFlight, RenderBounds, run_bounded, start_bounded
from farm.build.charts import HelmVersionMismatch, render_with_charts
from farm.core.charts import ChartRender, ChartRenderNeeded
from farm.core.errors import CoreError
from farm.core.render import render
from farm.core.request import RenderRequest
from farm.core.yamlio import DocumentMemo
from farm.profiles import ProfileError
from farm.profiles.locks import check_request_locks

if TYPE_CHECKING:
    from farm.settings import FarmSettings

INTERNAL_ERROR = "render.internal_error"


@dataclass(frozen=True)
class RenderOutcome:
    """What one render gave, as a value the bounded render child sends back to its caller."""

    manifests: bytes | None = None
    warnings: tuple[str, ...] = ()
    app_name: str = ""
    code: str = ""
    message: str = ""
    cacheable: bool = False
    crash: str = ""  # the traceback of a handler bug, logged by the caller
    seconds: float = 0.0


# The documents this render child parsed: a batch's application is parsed once, and each
# ClusterProfile once per child (the child lives across jobs). Owned here, bounded by the memo.
_PARSED = DocumentMemo()


@dataclass(frozen=True)
class RenderJob:
    """One render to do: the request (its charts, if any, are archives it holds)."""

    request: RenderRequest


def render_one(job: RenderJob) -> RenderOutcome:
    """Lock check and render of one request; its errors are values (runs in the render child)."""
    started = time.perf_counter()
    charts: dict[str, ChartRender] = {}
    request = job.request
    try:
        check_request_locks(request, _PARSED)  # before anything is rendered or written
        rendered = render_with_charts(render, request, answers=charts, memo=_PARSED)
    except MemoryError:
        raise  # the child reports it as render.memory
    except ProfileError as error:
        return RenderOutcome(code=error.code, message=error.message, cacheable=True)
    except ChartRenderNeeded as error:  # depends on the worker (no helm), not on the inputs
        return RenderOutcome(code=error.code, message=error.message)
    except HelmVersionMismatch as error:  # likewise: another worker, with the request's helm, renders it
        return RenderOutcome(code=error.code, message=error.message)
    except CoreError as error:
        # a chart render can fail for a reason outside the inputs (helm could not run), so a
        # failure that went through one is not cached against the action key
        return RenderOutcome(code=error.code, message=error.message, cacheable=not charts)
    except Exception as error:  # a handler bug fails its own target, never the batch
        return RenderOutcome(
            code=INTERNAL_ERROR, message=f"{type(error).__name__}: {error}", crash=traceback.format_exc()
        )
    return RenderOutcome(
        manifests=rendered.manifests,
        warnings=tuple(rendered.warnings),
        app_name=rendered.app_name,
        seconds=time.perf_counter() - started,
    )


def render_requests(jobs: Sequence[RenderJob], bounds: RenderBounds) -> list[RenderOutcome | BoundExceeded]:
    """Every job rendered in this process's render child, each within ``bounds``, in order."""
    return run_bounded(list(jobs), render_one, bounds)


def start_renders(jobs: Sequence[RenderJob], bounds: RenderBounds) -> InFlight:
    """``render_requests``, begun: the render child renders while the caller goes on;
    ``outcomes()`` of the result collects them."""
    return start_bounded(list(jobs), render_one, bounds)


def render_bounds(settings: FarmSettings) -> RenderBounds:
    """The bounds of one render (``FARM_RENDER_TIMEOUT_SECONDS``, ``FARM_RENDER_MEMORY_MIB``)."""
    return RenderBounds(settings.render_timeout_seconds, settings.render_memory_mib * 1024 * 1024)
