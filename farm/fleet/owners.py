"""Who executes a run, and whether that process still lives.

A run executed by a blocking executor (the local pool, the daemon) records its owner as
``HOST/BOOT/PID/START``: the host name, the kernel's boot id, the process id and the process's
start time in clock ticks since boot (``/proc/PID/stat``, field 22). The pair (pid, start time)
names one process for the life of the machine even when pids are reused, and the boot id tells a
run owned before a reboot. An owner on another host cannot be judged from here and is never
called gone (the embedded default's database is a file on this machine; a shared database's runs
go to Celery, whose reconciler finds stale jobs).

No lease and no heartbeat: a heartbeat would be a write every few seconds into the SQLite file the
run's own workers write to, and a lease can only be judged after it expires; the process table
answers at once and exactly.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

PROC = Path("/proc")


def _boot_id() -> str:
    try:
        return (PROC / "sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "-"


def _start_ticks(pid: int) -> str | None:
    """The start time of process ``pid`` (None when there is no such process, or a zombie)."""
    try:
        stat = (PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    fields = stat.rsplit(b")", 1)[1].split()  # the name, in parentheses, may hold spaces
    if fields[0] == b"Z":  # killed, not yet reaped by its parent: gone
        return None
    return fields[19].decode()


def process_owner() -> str:
    """This process as a run's owner: ``HOST/BOOT/PID/START``."""
    return owner_of(os.getpid())


def owner_of(pid: int) -> str:
    """Process ``pid`` of this machine as ``HOST/BOOT/PID/START`` (START ``-`` when unreadable)."""
    return f"{socket.gethostname()}/{_boot_id()}/{pid}/{_start_ticks(pid) or '-'}"


def released(owner: str) -> str:
    """``owner`` as it lets go of a run it no longer executes although its process lives on (the
    farm daemon, whose command was interrupted): read as gone, so the run shows ``interrupted`` and
    the next ``farm run`` finishes it, as after the end of a ``farm run`` of its own."""
    host, boot, pid, _start = owner.split("/")
    return f"{host}/{boot}/{pid}/{RELEASED}"


RELEASED = "released"


def owner_is_gone(owner: str) -> bool:
    """Whether the process ``owner`` names has ended (or ``released`` the run): same host and
    another boot, or no process with that pid and start time. An owner of another host, or whose
    start time was unreadable (``-``: no ``/proc``), is never gone."""
    parts = owner.split("/")
    if len(parts) != 4 or not parts[2].isdigit() or parts[3] == "-":
        return False
    host, boot, pid, start = parts
    if start == RELEASED:
        return True
    if host != socket.gethostname():
        return False
    if boot != _boot_id():
        return True
    return _start_ticks(int(pid)) != start
