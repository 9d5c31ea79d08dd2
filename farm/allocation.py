"""Bulk allocation without the cyclic garbage collector.

Loading a catalog and planning a run build a few objects per target (targets, requests, rows)
that all stay alive until the plan is written. CPython's generational collector is triggered by
allocation counts, and each full collection walks every live object, so building 100,000
targets' worth of objects paid for many walks over a growing heap: measured with
``bench/fleet.py``'s planning figures, two thirds of a 100,000-target plan was collection. These
objects hold no reference cycles that need collecting early (they are freed by reference
counting when the plan is done), so the collector is paused while they are built.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off for the block, then back as it was (nested blocks keep it off)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
