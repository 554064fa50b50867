"""``python -m bench NAME``: run one benchmark (index, convert, live, serve, search, quality,
render, soak, families, ocr, scale, folders, listing)."""

from __future__ import annotations

import sys

BENCHMARKS = {
    "index": "bench.bench_index",
    "convert": "bench.bench_convert",
    "live": "bench.bench_live",
    "serve": "bench.bench_serve",
    "search": "bench.bench_search",
    "quality": "bench.bench_quality",
    "render": "bench.bench_render",
    "soak": "bench.bench_soak",
    "families": "bench.bench_families",
    "ocr": "bench.bench_ocr",
    "scale": "bench.bench_scale",
    "folders": "bench.bench_folders",
    "listing": "bench.bench_listing",
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in BENCHMARKS:
        print(f"usage: python -m bench {{{','.join(BENCHMARKS)}}} [options]", file=sys.stderr)
        return 2
    module = __import__(BENCHMARKS[argv[0]], fromlist=["main"])
    sys.argv = [f"python -m bench {argv[0]}", *argv[1:]]
    result = module.main(argv[1:]) if "argv" in module.main.__code__.co_varnames else module.main()
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
