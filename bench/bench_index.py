"""Catalog first, measured: how soon a shelf is listed, how fast its formats follow.

Every figure comes from real ``docshelf serve`` / ``docshelf index`` processes
on temporary shelves, timed from the process start as a client sees it. The
targets are those of the issue "Catalog first" (DESIGN D11-D13):

* fresh shelf of 5,000 files (3,000 Markdown, 1,500 text, 500 PDFs from the
  shared corpus): complete ``resources/list`` <= 5 s after process start;
  50,000 files <= 15 s;
* warm restart with 50,000 unchanged files: first ``resources/list`` page
  <= 1 s after start, catalog reconciled (``/readyz``) <= 5 s;
* background text/Markdown/JSON building >= 150 Markdown files/s and
  >= 300 PDF pages/s;
* first read (all formats, PDF rendered on demand) of a 10-page Markdown
  document <= 1.5 s;
* store size for 10,000 small text files <= 10 % of rendering every PDF at
  index time (``DOCSHELF_RENDER=eager``, what every earlier release did).

Run ``python -m bench index`` (``--quick`` for a smoke run with smaller shelves
and no PASS/FAIL). See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.docshelf_process import child_env, docshelf_command, free_port, stop  # noqa: E402
from bench.modern_client import ModernClient  # noqa: E402
from bench.shared import CORPUS_PDF  # noqa: E402
from bench.ten_pages import ten_page_markdown  # noqa: E402

WORDS = "The shelf lists every file at once and builds its formats after. " * 6


@dataclass
class Row:
    name: str
    figure: float
    unit: str
    target: float | None = None
    at_most: bool = True  # the target is a ceiling (seconds, bytes); else a floor (rates)
    note: str = ""

    @property
    def verdict(self) -> str:
        if self.target is None:
            return ""
        ok = self.figure <= self.target if self.at_most else self.figure >= self.target
        return "PASS" if ok else "FAIL"

    def line(self) -> str:
        target = ""
        if self.target is not None:
            sign = "<=" if self.at_most else ">="
            target = f"{sign} {self.target:g} {self.unit}"
        figure = f"{self.figure:>10.2f} {self.unit:<9}"
        return f"{self.name:<58} {figure} {target:<16} {self.verdict:<4} {self.note}"


# -- shelves ----------------------------------------------------------------------------------


def _pdf_pages() -> dict[str, int]:
    listing = CORPUS_PDF / "files.json"
    if not listing.is_file():
        return {}
    files = json.loads(listing.read_text())
    files = files.get("data", files) if isinstance(files, dict) else files
    pages = {}
    for entry in files:
        path = CORPUS_PDF / Path(entry.get("path", "")).name
        if path.is_file() and not entry.get("encrypted") and entry.get("pages"):
            pages[path.name] = int(entry["pages"])
    return pages


def make_shelf(
    root: Path, *, markdown: int = 0, text: int = 0, pdfs: int = 0, other: int = 0
) -> int:
    """Files in folders of 500; returns the PDF pages it holds."""
    root.mkdir(parents=True)
    corpus = sorted(_pdf_pages().items())
    pages = 0
    counter = 0

    def place(name: str) -> Path:
        nonlocal counter
        folder = root / f"part-{counter // 500:03}"
        folder.mkdir(exist_ok=True)
        counter += 1
        return folder / name

    for n in range(markdown):
        place(f"note-{n:05}.md").write_text(
            f"# Note {n}\n\n{WORDS}\n\n## Details\n\n- one\n- two\n"
        )
    for n in range(text):
        place(f"plain-{n:05}.txt").write_text(f"plain text file {n}\n")
    originals = root.parent / f".{root.name}-corpus"
    for n in range(pdfs if corpus else 0):
        name, count = corpus[n % len(corpus)]
        original = originals / name
        if not original.exists():  # one copy each, then hard links: distinct paths, little disk
            originals.mkdir(exist_ok=True)
            shutil.copyfile(CORPUS_PDF / name, original)
        os.link(original, place(f"paper-{n:05}-{name}"))
        pages += count
    for n in range(other):
        place(f"blob-{n:05}.dat").write_bytes(n.to_bytes(4, "big") * 8)
    return pages


# -- a served process -------------------------------------------------------------------------


@dataclass
class Served:
    base: str
    started: float
    process: subprocess.Popen[bytes]
    client: ModernClient  # MCP requests, one kept-alive connection

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"


@contextmanager
def served(shelf: Path, data: Path, **env: str) -> Iterator[Served]:
    port = free_port()
    data.mkdir(parents=True, exist_ok=True)
    command = docshelf_command(
        "serve", "--root", str(shelf), "--data-dir", str(data), "--port", str(port)
    )
    log = (data / f"serve-{port}.log").open("wb")
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=child_env(**env))
    base = f"http://127.0.0.1:{port}"
    client = ModernClient(f"{base}/mcp", timeout=120)
    try:
        yield Served(base, started, process, client)
    finally:
        client.close()
        stop(process, timeout=30)
        log.close()


def _call(server: Served, method: str, params: dict[str, object]) -> dict:
    """One 2026-07-28 request (``_meta``, headers), its JSON-RPC answer."""
    response: dict = server.client.modern(method, params).json()
    return response


def _until(predicate: Callable[[], bool], timeout: float, step: float = 0.02) -> None:
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"not reached in {timeout:.0f} s")
        time.sleep(step)


def first_page_after(server: Served, http: httpx.Client) -> float:
    """Seconds from process start to the first answered ``resources/list`` with a resource."""

    def answered() -> bool:
        try:
            result = _call(server, "resources/list", {}).get("result", {})
        except httpx.TransportError:
            return False
        return bool(result.get("resources"))

    _until(answered, 120)
    return time.perf_counter() - server.started


def complete_list_after(server: Served, http: httpx.Client, expected: int) -> float:
    """Seconds from process start until a client paging ``resources/list`` gets every file.

    Polls the cheap ``/readyz`` until the catalog is current, then pages through the
    whole list once (timed), so the figure is not inflated by re-paging a partial list.
    """
    ready_after(server, http)
    seen, cursor = 0, None
    while True:
        params: dict[str, object] = {"cursor": cursor} if cursor else {}
        result = _call(server, "resources/list", params).get("result", {})
        seen += len(result.get("resources", []))
        cursor = result.get("nextCursor")
        if not cursor:
            break
    if seen < expected:
        raise AssertionError(f"the list held {seen} of {expected} files once ready")
    return time.perf_counter() - server.started


def _readyz(server: Served, http: httpx.Client) -> dict:
    try:
        response = http.get(f"{server.base}/readyz", timeout=5)
    except httpx.TransportError:
        return {"ready": False, "conversion_backlog": -1}
    return response.json() if response.status_code in (200, 503) else {"ready": False}


def ready_after(server: Served, http: httpx.Client) -> float:
    _until(lambda: bool(_readyz(server, http).get("ready")), 300, step=0.05)
    return time.perf_counter() - server.started


def drained_after(server: Served, http: httpx.Client, timeout: float = 1800) -> float:
    """Seconds from process start until the conversion backlog is empty."""
    _until(lambda: _readyz(server, http).get("conversion_backlog") == 0, timeout, step=0.2)
    return time.perf_counter() - server.started


def store_bytes(data: Path) -> tuple[int, int]:
    """(apparent bytes, bytes on disk) of the representation store."""
    apparent = on_disk = 0
    for path in (data / "representations").rglob("*"):
        info = path.lstat()
        on_disk += info.st_blocks * 512
        if path.is_file():
            apparent += info.st_size
    return apparent, on_disk


# -- the scenarios ----------------------------------------------------------------------------


def fresh_and_warm(
    work: Path, files: int, *, target_fresh: float, warm: bool, quick: bool
) -> list[Row]:
    rows = []
    shelf = work / f"fresh-{files}"
    md, txt, pdf = files * 3 // 5, files * 3 // 10, files // 10  # the mix
    mix = f"{md:,} md, {txt:,} txt, {pdf:,} pdf"
    make_shelf(shelf, markdown=md, text=txt, pdfs=pdf)
    data = work / f"data-{files}"
    with httpx.Client() as http:
        with served(shelf, data) as server:
            seconds = complete_list_after(server, http, files)
            rows.append(
                Row(
                    f"fresh {files:,} files: complete list",
                    seconds,
                    "s",
                    None if quick else target_fresh,
                    note=mix,
                )
            )
        if warm:  # the same files, unchanged; conversion of the rest goes on behind
            with served(shelf, data) as server:
                first = first_page_after(server, http)
                ready = ready_after(server, http)
            rows.append(
                Row(f"warm {files:,} files: first list page", first, "s", None if quick else 1.0)
            )
            rows.append(
                Row(
                    f"warm {files:,} files: catalog reconciled (/readyz)",
                    ready,
                    "s",
                    None if quick else 5.0,
                )
            )
    return rows


def build_seconds(shelf: Path, data: Path, http: httpx.Client) -> float:
    """Seconds from the catalog being current to an empty conversion backlog."""
    with served(shelf, data) as server:
        catalogued = ready_after(server, http)
        drained = drained_after(server, http)
    return max(drained - catalogued, 1e-9)


def background_rates(work: Path, markdown: int, pdf_copies: int, quick: bool) -> list[Row]:
    rows = []
    with httpx.Client() as http:
        shelf = work / "rate-md"
        make_shelf(shelf, markdown=markdown)
        rate = markdown / build_seconds(shelf, work / "rate-md-data", http)
        rows.append(
            Row(
                f"background build: {markdown:,} Markdown files",
                rate,
                "files/s",
                None if quick else 150,
                at_most=False,
            )
        )
        shelf = work / "rate-pdf"
        pages = make_shelf(shelf, pdfs=pdf_copies)
        if pages:
            rate = pages / build_seconds(shelf, work / "rate-pdf-data", http)
            rows.append(
                Row(
                    f"background build: {pdf_copies} corpus PDFs ({pages:,} pages)",
                    rate,
                    "pages/s",
                    None if quick else 300,
                    at_most=False,
                )
            )
        else:
            rows.append(
                Row(
                    "background build: PDF pages (no shared corpus)",
                    float("nan"),
                    "pages/s",
                    note="skipped: ../shared/corpus missing",
                )
            )
    return rows


def first_read(work: Path, repeats: int, quick: bool) -> list[Row]:
    times = []
    for attempt in range(repeats):
        shelf = work / f"ten-pages-{attempt}"
        shelf.mkdir()
        (shelf / "guide.md").write_text(ten_page_markdown())
        with httpx.Client() as http, served(shelf, work / f"ten-pages-data-{attempt}") as server:
            ready_after(server, http)
            started = time.perf_counter()
            answer = _call(server, "resources/read", {"uri": f"docshelf://{shelf.name}/guide.md"})
            times.append(time.perf_counter() - started)
            kinds = [c["mimeType"] for c in answer["result"]["contents"]]
            assert "application/pdf" in kinds, kinds
    return [
        Row(
            "first read, all formats, 10-page Markdown (median)",
            statistics.median(times),
            "s",
            None if quick else 1.5,
            note=f"{repeats} fresh processes",
        )
    ]


def store_size(work: Path, files: int, eager_sample: int, quick: bool) -> list[Row]:
    def index(shelf: Path, data: Path, render: str) -> None:
        done = subprocess.run(
            docshelf_command("index", "--root", str(shelf), "--data-dir", str(data)),
            env=child_env(DOCSHELF_RENDER=render),
            capture_output=True,
            timeout=3600,
        )
        if done.returncode:
            raise RuntimeError(done.stderr.decode(errors="replace"))

    lazy_shelf = work / "small-text"
    make_shelf(lazy_shelf, text=files)
    index(lazy_shelf, work / "small-lazy", "lazy")
    lazy_apparent, lazy_disk = store_bytes(work / "small-lazy")
    eager_shelf = work / "small-text-eager"
    make_shelf(eager_shelf, text=eager_sample)
    index(eager_shelf, work / "small-eager", "eager")
    eager_apparent, eager_disk = store_bytes(work / "small-eager")
    scale = files / eager_sample
    ratio = lazy_apparent / (eager_apparent * scale)
    disk_ratio = lazy_disk / (eager_disk * scale)
    return [
        Row(f"store, {files:,} small text files, lazy (apparent)", lazy_apparent / 1e6, "MB"),
        Row(
            f"store, eager on {eager_sample:,} files x{scale:g} (apparent)",
            eager_apparent * scale / 1e6,
            "MB",
            note="what earlier releases stored",
        ),
        Row("store size: lazy / eager (apparent bytes)", ratio * 100, "%", None if quick else 10),
        Row(
            "store size: lazy / eager (bytes on disk)",
            disk_ratio * 100,
            "%",
            note=f"{lazy_disk / 1e6:.1f} MB vs {eager_disk * scale / 1e6:.1f} MB on disk",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench index", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--quick", action="store_true", help="small shelves, no PASS/FAIL (CI smoke)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary shelves")
    args = parser.parse_args(argv)
    quick = args.quick
    work = Path(tempfile.mkdtemp(prefix="docshelf-bench-index-"))
    kind = "quick" if quick else "full"
    load = os.getloadavg()[0]
    print(f"docshelf catalog-first benchmark ({kind}); {os.cpu_count()} cores; load {load:.1f}")
    rows: list[Row] = []
    try:
        if quick:
            rows += fresh_and_warm(work, 500, target_fresh=5, warm=True, quick=True)
            rows += background_rates(work, 200, 13, quick=True)
            rows += first_read(work, 1, quick=True)
            rows += store_size(work, 300, 30, quick=True)
        else:
            rows += fresh_and_warm(work, 5_000, target_fresh=5, warm=False, quick=False)
            rows += fresh_and_warm(work, 50_000, target_fresh=15, warm=True, quick=False)
            rows += background_rates(
                work, 3_000, 130, quick=False
            )  # 10 of each: start-up amortised
            rows += first_read(work, 3, quick=False)
            rows += store_size(work, 10_000, 500, quick=False)
    finally:
        for row in rows:
            print(row.line())
        if args.keep:
            print(f"shelves kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    failed = [r for r in rows if r.verdict == "FAIL"]
    print(f"{len(rows) - len(failed)} of {len(rows)} rows without a FAIL")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
