"""A child process under ordinary file permissions, even when the tests run as root.

Root reads and writes any folder whatever its mode, so "the data folder is not
writable" or "this sub-folder cannot be read" cannot be reproduced by ``chmod`` alone
when the suite runs as root (a container, CI).
Dropping the capabilities that let root ignore a folder's mode from the child's
bounding set, just before it starts, makes it one more user to whom ``chmod 555``
applies: after ``exec`` a root process has only what the bounding set allows
(capabilities(7), "Transformation of capabilities during execve()"). Linux only.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

PR_CAPBSET_DROP = 24  # <linux/prctl.h>
# CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER (<linux/capability.h>)
PERMISSION_OVERRIDES = (1, 2, 3)


def ordinary_permissions() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes a root child obey file modes; None when not root."""
    if os.geteuid() != 0:
        return None
    libc = ctypes.CDLL(None, use_errno=True)

    def drop() -> None:
        for capability in PERMISSION_OVERRIDES:
            if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                error = ctypes.get_errno()
                raise OSError(error, os.strerror(error))

    return drop
