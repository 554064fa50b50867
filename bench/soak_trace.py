"""What grew in a traced soak: ``python -m bench.soak_trace DIR``.

``python -m bench soak --trace DIR`` runs the serving processes with
``bench/tracing/sitecustomize.py``, which writes tracemalloc snapshots and
counts of live objects by type to ``DIR`` as the soak goes. This reads them
back, per serving process: RSS against what tracemalloc traces over time (if
RSS grows and the traced memory does not, the growth is outside Python's
allocations: a C library, or the allocator keeping freed memory), the object
types whose counts grew, and the allocation sites whose memory grew between a
third of the run and its end, with their tracebacks.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tracemalloc
from pathlib import Path

# Frames of the tracer itself, left out of every comparison.
_OWN = [
    tracemalloc.Filter(False, tracemalloc.__file__),
    tracemalloc.Filter(False, "*/bench/tracing/*"),
]


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def over_time(lines: list[dict]) -> str:
    rows = [
        f"{'min':>6} {'RSS MB':>8} {'traced MB':>10} {'malloc used':>12} {'malloc free':>12} "
        f"{'SQLite MB':>10} {'objects':>9} {'blocks':>9} {'threads':>7}"
    ]
    for line in lines:
        rows.append(
            f"{line['seconds'] / 60:6.1f} {line['rss_mb']:8.1f} {line['traced_mb']:10.1f} "
            f"{line.get('malloc_used_mb', math.nan):12.1f} "
            f"{line.get('malloc_free_mb', math.nan):12.1f} "
            f"{line.get('sqlite_mb', math.nan):10.1f} "
            f"{line['gc_objects']:9,} {line.get('blocks', 0):9,} {line['threads']:7}"
        )
    return "\n".join(rows)


def grown_types(first: dict, last: dict, top: int) -> str:
    names = set(first["types"]) | set(last["types"])
    growth = sorted(
        ((last["types"].get(n, 0) - first["types"].get(n, 0), n) for n in names), reverse=True
    )
    return "\n".join(
        f"  {diff:+8,}  {name} ({first['types'].get(name, 0):,} → {last['types'].get(name, 0):,})"
        for diff, name in growth[:top]
        if diff > 0
    )


def grown_sites(first: Path, last: Path, top: int, frames: int) -> str:
    before = tracemalloc.Snapshot.load(str(first)).filter_traces(_OWN)
    after = tracemalloc.Snapshot.load(str(last)).filter_traces(_OWN)
    out = []
    for stat in after.compare_to(before, "traceback")[:top]:
        if stat.size_diff <= 0:
            break
        out.append(
            f"  {stat.size_diff / 1024:+10.1f} KiB, {stat.count_diff:+,} blocks "
            f"(now {stat.size / 1024:.1f} KiB in {stat.count:,})"
        )
        for line in stat.traceback.format(limit=frames, most_recent_first=True):
            out.append(f"      {line}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak_trace", description=__doc__)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--top", type=int, default=15, help="allocation sites shown (15)")
    parser.add_argument("--frames", type=int, default=8, help="frames per traceback (8)")
    args = parser.parse_args(argv)
    for log in sorted(args.directory.glob("*.jsonl")):
        pid = log.stem
        lines = _lines(log)
        snaps = sorted(args.directory.glob(f"{pid}-*.snap"))
        if len(lines) < 2:
            print(f"process {pid}: fewer than two samples")
            continue
        start = len(lines) // 3
        print(f"=== serving process {pid}: {len(lines)} samples")
        print(over_time(lines))
        print(f"object types that grew from minute {lines[start]['seconds'] / 60:.1f} to the end:")
        print(grown_types(lines[start], lines[-1], args.top))
        if len(snaps) > start and len(snaps) >= 2:
            print("allocation sites that grew over the same span (innermost frame first):")
            print(grown_sites(snaps[start], snaps[-1], args.top, args.frames))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
