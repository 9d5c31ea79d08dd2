"""How a process that claims jobs names itself in their rows."""

from __future__ import annotations

import os
import socket


def worker_name(prefix: str = "local") -> str:
    """``PREFIX@HOST:PID``: which process on which machine holds a job's claim."""
    return f"{prefix}@{socket.gethostname()}:{os.getpid()}"
