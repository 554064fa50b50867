"""Which process a job (or a shared HTTP session) belongs to, and whether it is still alive."""

from __future__ import annotations

import os
import socket


def process_owner() -> str:
    """This process's name in ``Job.owner``: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_is_gone(owner: str, me: str) -> bool:
    """Whether the process named ``owner`` can no longer be running its jobs.

    Only processes on this host can be checked; another host's jobs are left
    alone. Our own pid counts as gone: a fresh process has no jobs in memory, so
    a row with its pid comes from an earlier process that had the same pid (a
    restarted container, typically).
    """
    host, _, pid_text = owner.rpartition(":")
    if host != me.rpartition(":")[0] or not pid_text.isdigit():
        return False
    if owner == me:
        return True
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, under another user
        return False
    return False
