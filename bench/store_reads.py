"""Reads per second from a representation store, for ``python -m bench scale`` (issue 27).

The cost of S3 per read, with and without the host's cache, measured in-process on the
store itself (no MCP, no HTTP): what a read adds on top of the folder store. A store is
opened as docshelf opens it, from a :class:`StoreSpec`::

    StoreSpec("/tmp/x/representations")                       # the folder store
    StoreSpec("s3://bucket/prefix")                            # S3, no cache
    StoreSpec("s3://bucket/prefix", "/tmp/x/store-cache", 512 << 20)  # S3, 512 MB cache

(the ``AWS_*`` variables of this process say where S3 is). :func:`store_reads` fills the
store with ``count`` objects of ``size`` bytes, reads each once untimed (so a cache that
holds them all is warm: the timed reads are then all hits), reads them ``rounds`` times
in order, and returns reads/s with the wall and CPU time of this process (the S3 server's CPU is the
caller's to measure, from its pid).
"""

from __future__ import annotations

import os
import time

from docshelf.storage.store import StoreSpec, open_store


def store_reads(
    spec: StoreSpec, *, count: int = 200, size: int = 16 * 1024, rounds: int = 3
) -> dict[str, float]:
    store = open_store(spec)
    keys = [f"be/bench{n:05}/bench-1/text_plain" for n in range(count)]
    payload = os.urandom(size)
    for key in keys:
        store.put(key, payload)
    for key in keys:
        store.get(key)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(rounds):
        for key in keys:
            if len(store.get(key)) != size:
                raise RuntimeError(f"{key}: a short read")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    for key in keys:
        store.delete(key)
    reads = count * rounds
    return {"reads": reads, "reads_per_s": reads / wall, "wall_s": wall, "cpu_s": cpu}
