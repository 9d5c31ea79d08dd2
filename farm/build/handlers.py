"""Every handler of the core's registry, imported with this module.

The local pool's forkserver preloads it (``farm.execution.warmup``) and the Celery worker imports
it before its pool forks: each render child then starts with every handler loaded, and its first
renders import nothing (on ``bench/fleet.py``'s mix the first render of a fresh child took 17 ms,
the next ones under 1 ms; loading all of them takes about 30 ms, once, in the parent). A handler
that does not load is left to the render that needs it, which fails as before.
"""

from __future__ import annotations

from farm.core.registry import seal

seal()  # loads every row's handler; a problem it finds is not raised here (the render meets it)
