"""Memory tracing for ``python -m bench soak --trace DIR``; never part of docshelf.

This folder is put on ``PYTHONPATH`` of the server under test only when the soak
runs with ``--trace``, so Python imports this file at start-up in every process
of the tree. In the serving processes alone (multiprocessing's spawn children:
their command line ends with ``--multiprocessing-fork``) it starts tracemalloc
and, every ``$SOAK_TRACE_EVERY`` seconds, writes to ``$SOAK_TRACE_DIR``:

* ``PID-NNN.snap``: a tracemalloc snapshot (``bench.soak_trace`` compares them);
* a line of ``PID.jsonl``: RSS, what tracemalloc traces, threads, and the count
  of live objects per type that the garbage collector tracks.

Tracing costs memory and time of its own: a traced run finds what grows, an
untraced one measures how much.
"""

from __future__ import annotations

import os
import sys

_DIR = os.environ.get("SOAK_TRACE_DIR")


def _trace(directory: str, every: float, frames: int) -> None:
    import gc
    import json
    import math
    import threading
    import time
    import tracemalloc
    from collections import Counter
    from pathlib import Path

    if frames:
        tracemalloc.start(frames)
    pid = os.getpid()
    started = time.monotonic()

    def rss_mb() -> float:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def malloc_mb() -> dict[str, float]:
        """glibc's view (mallinfo2): bytes in use and free-but-kept in its arenas, which hold
        what C code (SQLite's page caches, say) and Python's larger objects allocate."""
        import ctypes

        class Info(ctypes.Structure):
            _fields_ = [
                (name, ctypes.c_size_t)
                for name in [
                    "arena",
                    "ordblks",
                    "smblks",
                    "hblks",
                    "hblkhd",
                    "usmblks",
                    "fsmblks",
                    "uordblks",
                    "fordblks",
                    "keepcost",
                ]
            ]

        try:
            libc = ctypes.CDLL("libc.so.6")
            libc.mallinfo2.restype = Info
            info = libc.mallinfo2()
        except (OSError, AttributeError):
            return {}
        return {
            "malloc_used_mb": info.uordblks / 2**20,
            "malloc_free_mb": info.fordblks / 2**20,
            "malloc_mmap_mb": info.hblkhd / 2**20,
        }

    def sqlite_mb() -> float:
        """What SQLite's own allocator holds in this process (page caches, schemas,
        statements), from the library the ``sqlite3`` module is linked to."""
        import ctypes

        try:
            library = ctypes.CDLL("libsqlite3.so.0")
        except OSError:
            return math.nan
        library.sqlite3_memory_used.restype = ctypes.c_int64
        return float(library.sqlite3_memory_used()) / 2**20

    def loop() -> None:
        for number in range(100_000):
            time.sleep(every)
            if frames:
                snapshot = tracemalloc.take_snapshot()
                snapshot.dump(str(Path(directory) / f"{pid}-{number:03}.snap"))
                del snapshot
            types = Counter(type(o).__qualname__ for o in gc.get_objects())
            current, peak = tracemalloc.get_traced_memory()
            line = {
                "number": number,
                "seconds": time.monotonic() - started,
                "rss_mb": rss_mb(),
                "traced_mb": current / 2**20,
                "traced_peak_mb": peak / 2**20,
                "threads": threading.active_count(),
                **malloc_mb(),
                "sqlite_mb": sqlite_mb(),
                "gc_objects": sum(types.values()),
                "blocks": sys.getallocatedblocks(),  # Python's allocations, all sizes
                "types": dict(types.most_common(80)),
            }
            with open(Path(directory) / f"{pid}.jsonl", "a") as out:
                out.write(json.dumps(line) + "\n")

    threading.Thread(target=loop, name="soak-trace", daemon=True).start()


if _DIR and "--multiprocessing-fork" in sys.argv:
    _trace(
        _DIR,
        float(os.environ.get("SOAK_TRACE_EVERY", "60")),
        int(os.environ.get("SOAK_TRACE_FRAMES", "12")),
    )
