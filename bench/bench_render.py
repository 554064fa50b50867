"""Rendering CPU: the first lazy render of a ten-page Markdown document in a worker.

The target is issue 24's (item 16): the first lazy render of a 10-page Markdown
document costs **at most 300 ms of CPU** in a conversion worker that has warmed
up (``storage.conversion._warm_up``, run before a worker takes tasks). The
document is :func:`bench.ten_pages.ten_page_markdown` (prose in long and short
paragraphs, lists, a table, a code block; ten A4 pages).

Each measurement is a fresh process, as a worker is: it imports what the
conversion forkserver preloads (``storage.conversion``, the renderer and fpdf2;
a worker forks with them imported), runs the worker's warm-up, then converts the
document as a read that asks for the PDF does (``storage.conversion.convert_file``
with only ``application/pdf`` wanted: read, hash, parse, render, store), then a
second time. The phases are timed with ``time.process_time``. A process without
the warm-up gives what the first render costs when nothing was paid in advance.

The renderer as it was before issue 24 and as it is now run side by side,
alternating, in the same way: the old one (fpdf2's own fragments and line
breaking, each font face parsed when a document first uses it) is restored in
the measuring process by :func:`old_renderer`. Both must produce the same PDF
bytes; the text of every page (PDFium's) is compared too.

Run: ``python -m bench render`` (``--rounds N``, default 5; ``--quick``: one
round, nothing judged; ``--profile`` adds a cProfile of one first render;
``--fonts`` adds the earlier comparison of fonts parsed per document against
once per process). See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.ten_pages import ten_page_markdown  # noqa: E402

#: Issue 24, item 16: CPU of the first lazy render of a 10-page Markdown document.
TARGET_MS = 300.0
VARIANTS = ("old", "new")


@contextmanager
def old_renderer() -> Iterator[None]:
    """The renderer as it was before issue 24: fpdf2's own fragments and line breaking,
    and each font face parsed when a document first uses it."""
    from fpdf import FPDF

    from docshelf.converters.render import document, pdf

    shelf_pdf = document.ShelfPDF
    saved = (
        document.measured,
        pdf._parse_common_faces,
        shelf_pdf._plain_fragments,
        shelf_pdf.text_columns,
    )
    document.measured = lambda fragments, widths: list(fragments)  # type: ignore[assignment]
    pdf._parse_common_faces = lambda fonts: None  # type: ignore[assignment]
    shelf_pdf._plain_fragments = lambda self, text: list(  # type: ignore[method-assign]
        FPDF._preload_font_styles(self, text, False)
    )
    shelf_pdf.text_columns = FPDF.text_columns  # type: ignore[method-assign]
    try:
        yield
    finally:
        (
            document.measured,
            pdf._parse_common_faces,
            shelf_pdf._plain_fragments,  # type: ignore[method-assign]
            shelf_pdf.text_columns,  # type: ignore[method-assign]
        ) = saved


def _page_text(data: bytes) -> tuple[int, str]:
    import pypdfium2

    document = pypdfium2.PdfDocument(data)
    try:
        pages = [document[i].get_textpage().get_text_range() for i in range(len(document))]
    finally:
        document.close()
    return len(pages), "\f".join(pages)


def child(variant: str, warm: bool, profile: bool) -> dict[str, object]:
    """One worker-like process: preload, warm up, render the document twice."""
    started = time.process_time()
    from docshelf.converters.render import pdf  # noqa: F401  (the forkserver preloads it)
    from docshelf.storage import conversion
    from docshelf.storage.store import StoreSpec, open_store

    preloaded = time.process_time()
    figures: dict[str, object] = {"preload": preloaded - started}
    with tempfile.TemporaryDirectory() as scratch, _variant(variant):
        shelf = Path(scratch, "shelf")
        shelf.mkdir()
        (shelf / "guide.md").write_text(ten_page_markdown(), encoding="utf-8")
        store = open_store(StoreSpec(str(Path(scratch, "store"))))
        task = conversion.ConversionTask(
            document_id=1,
            shelf="bench",
            root=str(shelf),
            path="guide.md",
            formats=("application/pdf",),
            max_bytes=1 << 26,
        )
        begun = time.process_time()
        if warm:
            conversion._warm_up()  # what every worker runs before it takes a task
        figures["warm_up"] = time.process_time() - begun
        profiler = cProfile.Profile() if profile else None
        for name in ("first", "second"):
            begun = time.process_time()
            if profiler is not None and name == "first":
                profiler.enable()
            outcome = conversion.convert_file(task, store)
            if profiler is not None and name == "first":
                profiler.disable()
            figures[name] = time.process_time() - begun
            if outcome.error_message:
                raise RuntimeError(outcome.error_message)
        (variant_stored,) = outcome.variants
        data = store.get(variant_stored.store_key)
    pages, text = _page_text(data)
    figures.update(
        sha256=hashlib.sha256(data).hexdigest(),
        pages=pages,
        text_sha256=hashlib.sha256(text.encode()).hexdigest(),
        words=len(ten_page_markdown().split()),
    )
    if profiler is not None:
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("cumulative").print_stats(25)
        stats.sort_stats("tottime").print_stats(15)
        figures["profile"] = out.getvalue()
    return figures


@contextmanager
def _variant(variant: str) -> Iterator[None]:
    if variant == "old":
        with old_renderer():
            yield
    else:
        yield


def run_child(variant: str, *, warm: bool = True, profile: bool = False) -> dict[str, float]:
    command = [sys.executable, "-m", "bench.bench_render", "--child", variant]
    command += [] if warm else ["--cold"]
    command += ["--profile"] if profile else []
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per variant")
    parser.add_argument("--quick", action="store_true", help="one round, nothing judged")
    parser.add_argument("--profile", action="store_true", help="cProfile one first render")
    parser.add_argument("--fonts", action="store_true", help="also the font-cache comparison")
    parser.add_argument("--repeat", type=int, default=15, help="conversions each, for --fonts")
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, warm=not args.cold, profile=args.profile)))
        return 0

    if args.quick:
        args.rounds = 1
    runs: dict[str, list[dict[str, float]]] = {variant: [] for variant in VARIANTS}
    cold: list[dict[str, float]] = []
    for _ in range(args.rounds):  # alternate, so that load from others hits both alike
        for variant in VARIANTS:
            runs[variant].append(run_child(variant))
        cold.append(run_child("new", warm=False))
    sample = runs["new"][0]
    print(
        f"First lazy render of bench/ten_pages.py ({sample['words']:,} words, {sample['pages']} "
        f"pages): CPU per phase, fresh process each, median of {args.rounds} (min in brackets)"
    )

    def cell(values: list[float]) -> str:
        return f"{ms(statistics.median(values))} ({ms(min(values))})"

    def column(results: list[dict[str, float]], phase: str) -> list[float]:
        return [result[phase] for result in results]

    phases = [
        ("preload", "imports the forkserver preloads (paid once, not per worker)"),
        ("warm_up", "worker warm-up, storage.conversion._warm_up (before any task)"),
        ("first", "first lazy render after the warm-up (the target)"),
        ("second", "a second render in the same process"),
    ]
    print(f"| {'phase':<66} | {'before issue 24':>20} | {'now':>20} | before/now |")
    print(f"|{'-' * 68}|{'-' * 21}:|{'-' * 21}:|-----------:|")
    for phase, label in phases:
        old, new = column(runs["old"], phase), column(runs["new"], phase)
        ratio = statistics.median(old) / statistics.median(new)
        print(f"| {label:<66} | {cell(old):>20} | {cell(new):>20} | {ratio:9.2f}x |")
    label = "first render without a warm-up (what it would otherwise pay)"
    print(f"| {label:<66} | {'':>20} | {cell(column(cold, 'first')):>20} | {'':>10} |")

    hashes = {variant: {r["sha256"] for r in results} for variant, results in runs.items()}
    texts = {variant: {r["text_sha256"] for r in results} for variant, results in runs.items()}
    same_bytes = len(hashes["old"] | hashes["new"]) == 1
    same_text = len(texts["old"] | texts["new"]) == 1
    print(
        f"same PDF bytes, before and now: {'yes' if same_bytes else 'NO'}; "
        f"same page text (PDFium): {'yes' if same_text else 'NO'}"
    )

    figure = statistics.median(column(runs["new"], "first"))
    over = figure * 1000 - TARGET_MS
    verdict = "PASS" if over <= 0 else f"FAIL by {over:.1f} ms ({over / TARGET_MS:.0%})"
    if args.quick:
        verdict = "(not judged: --quick)"
    print()
    print("| target | figure | target | |")
    print("| --- | ---: | ---: | --- |")
    print(
        f"| first lazy render, 10-page Markdown, warmed worker (CPU) | {ms(figure)} | "
        f"≤ {TARGET_MS:.0f} ms | {verdict} |"
    )
    if args.profile:
        print("\ncProfile of one first render after the warm-up (docshelf):")
        print(run_child("new", profile=True)["profile"])
    if args.fonts:
        print()
        fonts_table(args.repeat)
    return 0 if same_bytes and same_text else 1


# -- fonts parsed per document against once per process (the font cache) -----------------


def fonts_table(repeat: int) -> None:
    """CPU of converting the ten-page document and a one-line file, rendered PDF
    included, with fpdf2 parsing every font file for every document (the renderer
    before :mod:`converters.render.fontcache`) and with fonts parsed once per
    process, alternating in one warm process; both must give the same bytes."""
    from docshelf.converters import convert
    from docshelf.converters.render import fontcache

    documents = {
        "ten-page.md": (ten_page_markdown().encode(), "text/markdown"),
        "tiny.txt": (b"Hello, shelf.\n", "text/plain"),
    }

    @contextmanager
    def fonts_parsed_per_document() -> Iterator[None]:
        cached = fontcache._parsed
        fontcache._parsed = lambda path: None  # type: ignore[assignment]
        try:
            yield
        finally:
            fontcache._parsed = cached

    def render(name: str) -> bytes:
        data, mime_type = documents[name]
        pdf = convert(data, mime_type, name).get("application/pdf")
        assert pdf is not None
        return pdf.data

    def cpu_seconds(name: str) -> float:
        started = time.process_time()
        render(name)
        return time.process_time() - started

    print(f"CPU ms per conversion (parse and rendered PDF), in one warm process; {repeat} each")
    print(f"| {'document':<12} | {'parsed per document':>21} | {'once per process':>21} |")
    print(f"|{'-' * 14}|{'-' * 22}:|{'-' * 22}:|")
    for name in documents:
        with fonts_parsed_per_document():
            before_bytes = render(name)
        after_bytes = render(name)  # warm-up: fills the cache
        assert before_bytes == after_bytes, f"{name}: the font cache changed the PDF"
        before: list[float] = []
        after: list[float] = []
        for _ in range(repeat):
            with fonts_parsed_per_document():
                before.append(cpu_seconds(name))
            after.append(cpu_seconds(name))

        def cell(times: list[float]) -> str:
            return f"{min(times) * 1000:.0f} best, {statistics.median(times) * 1000:.0f} med"

        print(f"| {name:<12} | {cell(before):>21} | {cell(after):>21} |")
    print("same bytes with and without the cache: yes")


if __name__ == "__main__":
    sys.exit(main())
