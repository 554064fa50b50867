"""Folders a docshelf process really cannot read, even when the tests run as root.

``chmod 000`` binds a user, not root: root reads through it with CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH. As root, the process under test runs under ``setpriv`` with
those two capabilities dropped from its bounding set, so the kernel checks the folder's
mode for it as it would for anyone (still uid 0: it owns, and so reads, its own data
folder and the interpreter under /root). Not as root, nothing is needed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

_DROP = ["--bounding-set", "-dac_override,-dac_read_search"]


def enforcing_permissions() -> list[str]:
    """The command prefix under which a child process cannot read a ``chmod 000`` folder;
    skips the test, saying why, where there is none."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, and setpriv (util-linux) is missing: root reads any folder")
    prefix = [setpriv, *_DROP, "--"]
    with tempfile.TemporaryDirectory() as scratch:
        locked = Path(scratch) / "locked"
        locked.mkdir(mode=0o000)
        probe = subprocess.run(
            [*prefix, sys.executable, "-c", f"import os; os.listdir({str(locked)!r})"],
            capture_output=True,
            text=True,
        )
    if "PermissionError" not in probe.stderr:
        pytest.skip(f"running as root, and setpriv could not drop the capabilities: {probe.stderr}")
    return prefix
