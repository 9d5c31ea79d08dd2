"""Stopping the command of this process from another thread, at points where stopping is safe.

The farm daemon runs ``farm run`` in its main thread; when the client goes away (Ctrl-C), another
thread asks the command to stop. An exception thrown into the command at a random point (as a
signal does) could land inside a lock of ``concurrent.futures`` or a database transaction and
hang the daemon, so the command checks instead, where nothing is half-done: between the waits of
the local pool and of the completion polling. It stops as Ctrl-C stops it (KeyboardInterrupt):
jobs not yet started stay queued, as when ``farm run`` itself is interrupted.
"""

from __future__ import annotations

import threading

_requested = threading.Event()


def request_stop() -> None:
    _requested.set()


def clear_stop_request() -> None:
    _requested.clear()


def stop_if_requested() -> None:
    """Raise KeyboardInterrupt when a stop was requested."""
    if _requested.is_set():
        raise KeyboardInterrupt
