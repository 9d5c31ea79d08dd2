"""Work an API request starts and does not wait for: the run trigger's executor, a qualification."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


def start_in_background(
    what: str, work: Callable[[], object], record_failure: Callable[[str], None]
) -> threading.Thread:
    """Run ``work`` on a daemon thread. If it raises, the failure is recorded with its message
    (``record_failure``) and logged as one line, never as a traceback on the server's stderr."""

    def guarded() -> None:
        try:
            work()
        except Exception as exc:  # noqa: BLE001 - the thread's last stop: record, log, end
            message = str(exc) or type(exc).__name__
            try:
                record_failure(message)
            except Exception as again:  # noqa: BLE001 - the store itself may be what failed
                log.error("%s failed: %s (the failure could not be recorded: %s)", what, message, again)
                return
            log.error("%s failed: %s", what, message)

    thread = threading.Thread(target=guarded, name=what, daemon=True)
    thread.start()
    return thread
