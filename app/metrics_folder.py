"""The folder where the processes of ``serve --processes N`` keep their metrics.

prometheus-client's multiprocess mode: each process writes its counters, histograms and
live gauges to memory-mapped files in ``PROMETHEUS_MULTIPROC_DIR``, and a scrape of any
of them adds the files up (``app.metrics_host.HostCollector``). The library reads the
variable once, at import, so the supervisor sets it before it starts a child; and it
leaves the folder's lifetime to its user, which this module is:

- every supervisor run gets a folder of its own (``docshelf-metrics-<pid>-*`` in the
  temporary folder, memory-backed on most systems), so counters start from 0 with the
  service, and two supervisors on one machine (replicas sharing a data folder) never add
  up each other's processes;
- a dead child's live gauges are removed (``mark_process_dead``); its counters stay, so
  the host's request count does not drop when a child is restarted;
- the folder is removed when the supervisor ends, and folders left by a supervisor that
  was killed (``kill -9``) are removed by the next one to start on this machine.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

# Imported now, while this process has no PROMETHEUS_MULTIPROC_DIR: the supervisor itself
# keeps its metrics in memory (it has none to give).
from prometheus_client.multiprocess import mark_process_dead

log = logging.getLogger("docshelf.supervisor")

VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
PREFIX = "docshelf-metrics-"
_OWNER = re.compile(rf"^{re.escape(PREFIX)}(\d+)-")


class MetricsFolder:
    """One supervisor run's folder, named in the environment its children inherit."""

    def __init__(self, parent: Path | None = None) -> None:
        self.parent = Path(parent or tempfile.gettempdir())
        self.path: Path | None = None
        self._previous: str | None = None

    def open(self) -> Path:
        """A new, empty folder, set in ``PROMETHEUS_MULTIPROC_DIR`` for the children."""
        self._remove_abandoned()
        self.path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=self.parent))
        self._previous = os.environ.get(VARIABLE)
        os.environ[VARIABLE] = str(self.path)
        log.debug("the processes' metrics are added up in %s", self.path)
        return self.path

    def process_dead(self, pid: int) -> None:
        """A child ended: its live gauges go, its counters stay."""
        if self.path is not None:
            mark_process_dead(pid, str(self.path))

    def close(self) -> None:
        if self.path is None:
            return
        if self._previous is None:
            os.environ.pop(VARIABLE, None)
        else:
            os.environ[VARIABLE] = self._previous
        shutil.rmtree(self.path, ignore_errors=True)
        self.path = None

    def _remove_abandoned(self) -> None:
        """Folders whose supervisor is gone (killed before it could remove its own)."""
        for folder in self.parent.glob(f"{PREFIX}*"):
            owner = _OWNER.match(folder.name)
            if owner is not None and folder.is_dir() and not _alive(int(owner.group(1))):
                shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
