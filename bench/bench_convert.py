"""Conversion throughput: docshelf's converters against markitdown, same files, same run.

Converts the shared corpus PDFs (reported in pages/s) and the MCP spec ``.mdx``
pages (MB/s) with docshelf's converters, then with markitdown when it is
installed (``pip install -e '.[bench]'``), and prints a table with the ratios.
The ``pdf-text`` section compares the two PDF text engines (pypdf, PDFium via
pypdfium2) on the same files and checks the full PDF converter against its
throughput target.

Run: ``python -m bench.bench_convert`` or ``python bench/bench_convert.py``
(``--help`` for the options). See ``bench/README.md`` for what is measured.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pypdf
import pypdfium2 as pdfium
from pypdf import PasswordType, PdfReader

from docshelf.converters import convert, find_converter
from docshelf.converters.document import document_json, from_markdown
from docshelf.converters.markdown.converter import markdown_facts
from docshelf.converters.markdown.mdx import mdx_to_markdown
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.textutil import decode_text

# The shared material sits beside the checkout (or where $DOCSHELF_SHARED says).
SHARED = Path(os.environ.get("DOCSHELF_SHARED", Path(__file__).resolve().parents[2] / "shared"))
DEFAULT_PDF_DIR = SHARED / "corpus" / "pdf"
DEFAULT_SPEC_DIR = SHARED / "spec"
MB = 1_000_000
#: Background building of text, Markdown and JSON for PDFs must keep up with this.
PDF_PAGES_PER_SECOND_TARGET = 300.0
SECTIONS = ("all", "convert", "pdf-text")
_WORD = re.compile(r"\w+")

Convert = Callable[[Path, bytes], object]


@dataclass(frozen=True, slots=True)
class Measurement:
    """Seconds spent on the files that converted, and how many failed."""

    seconds: float
    units: float  # pages or MB of the files that converted
    failures: int

    @property
    def rate(self) -> float:
        return self.units / self.seconds if self.seconds > 0 else 0.0


def measure(
    files: Sequence[Path],
    units: Callable[[Path], float],
    run: Convert,
    repeat: int,
    clock: Callable[[], float] = time.perf_counter,
) -> Measurement:
    """Best-of-``repeat`` total time of ``run`` over ``files`` (wall time unless ``clock``)."""
    contents = {path: path.read_bytes() for path in files}
    best: Measurement | None = None
    for _ in range(repeat):
        seconds, done, failures = 0.0, 0.0, 0
        for path in files:
            started = clock()
            try:
                run(path, contents[path])
            except Exception:  # a failing file is counted, not fatal: this is a benchmark
                failures += 1
                continue
            seconds += clock() - started
            done += units(path)
        if best is None or seconds < best.seconds:
            best = Measurement(seconds, done, failures)
    assert best is not None
    return best


def docshelf_pdf(path: Path, data: bytes) -> object:
    return convert(data, "application/pdf", path.name)


def docshelf_markdown(path: Path, data: bytes) -> object:
    return convert(data, "text/markdown", path.name)


def docshelf_markdown_without_pdf(path: Path, data: bytes) -> object:
    """What markitdown does for Markdown (and a bit more): no PDF rendering."""
    document = parse_markdown(mdx_to_markdown(decode_text(data)))
    facts = markdown_facts(document)
    return document.text, document_json(from_markdown(facts, document))


def markitdown_runner() -> tuple[Convert, Convert] | None:
    """markitdown's converters for PDF and Markdown, or None when not installed."""
    try:
        from markitdown import MarkItDown, StreamInfo
    except ImportError:
        return None
    engine = MarkItDown(enable_plugins=False)

    def pdf(path: Path, data: bytes) -> object:
        info = StreamInfo(mimetype="application/pdf", extension=".pdf", filename=path.name)
        return engine.convert_stream(io.BytesIO(data), stream_info=info).markdown

    def markdown(path: Path, data: bytes) -> object:
        info = StreamInfo(
            mimetype="text/markdown", extension=".md", filename=path.name, charset="utf-8"
        )
        return engine.convert_stream(io.BytesIO(data), stream_info=info).markdown

    return pdf, markdown


def pdf_pages(pdfs: Sequence[Path]) -> dict[str, int]:
    """Page counts from the corpus's files.json (by basename), else our converter's."""
    pages: dict[str, int] = {}
    for listing in {path.parent / "files.json" for path in pdfs}:
        if listing.exists():
            for entry in json.loads(listing.read_text(encoding="utf-8"))["data"]:
                pages[Path(entry["path"]).name] = int(entry["pages"])
    for path in pdfs:
        if path.name not in pages:
            facts = convert(path.read_bytes(), "application/pdf", path.name).facts
            pages[path.name] = facts.page_count or 0
    return pages


def readable_pdfs(pdf_dir: Path) -> list[Path]:
    """Corpus PDFs that open without a password (both tools get the same set)."""
    readable = []
    for path in sorted(pdf_dir.glob("*.pdf")):
        reader = PdfReader(path)
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            continue
        readable.append(path)
    return readable


def row(label: str, ours: Measurement, theirs: Measurement | None, unit: str) -> str:
    ours_text = f"{ours.rate:.2f} {unit}"
    if theirs is None:
        return f"| {label:<30} | {ours_text:>14} | {'—':>14} | {'—':>7} |"
    ratio = ours.rate / theirs.rate if theirs.rate else float("inf")
    theirs_text = f"{theirs.rate:.2f} {unit}" + (
        f" ({theirs.failures} failed)" if theirs.failures else ""
    )
    return f"| {label:<30} | {ours_text:>14} | {theirs_text:>14} | {ratio:6.2f}x |"


def pypdf_page_texts(path: Path, data: bytes) -> list[str]:
    """pypdf's text of every page (what docshelf's PDF converter used up to version 1)."""
    reader = PdfReader(io.BytesIO(data), strict=False)
    return [page.extract_text() for page in reader.pages]


def pdfium_page_texts(path: Path, data: bytes) -> list[str]:
    """PDFium's text of every page, through pypdfium2 (what docshelf uses from version 2)."""
    document = pdfium.PdfDocument(data)
    try:
        texts = []
        for index in range(len(document)):
            page = document[index]
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return texts
    finally:
        document.close()


def word_overlap(first: str, second: str) -> float:
    """Words (case-folded) the two texts share, as a share of the longer one's words."""
    a = Counter(_WORD.findall(first.casefold()))
    b = Counter(_WORD.findall(second.casefold()))
    larger = max(sum(a.values()), sum(b.values()))
    return sum((a & b).values()) / larger if larger else 1.0


def pdf_text_section(pdfs: Sequence[Path], pages: dict[str, int], repeat: int) -> bool:
    """Both text engines on the files both can read, then the full converter on all.

    Times are CPU seconds of this process, each file's best of ``repeat``:
    conversion is single-threaded, so on an idle core CPU time is wall time,
    and other jobs on a shared machine move it far less. Returns whether the
    converter meets :data:`PDF_PAGES_PER_SECOND_TARGET`.
    """

    def count_pages(path: Path) -> float:
        return float(pages.get(path.name, 0))

    def best_per_file(files: Sequence[Path], run: Convert) -> tuple[Measurement, list[float]]:
        each = [measure([path], count_pages, run, repeat, time.process_time) for path in files]
        total = Measurement(
            sum(m.seconds for m in each), sum(m.units for m in each), sum(m.failures for m in each)
        )
        return total, [m.seconds for m in each]

    texts: dict[str, dict[Path, str]] = {"pypdf": {}, "pdfium": {}}
    for path in pdfs:  # also the warm-up of both engines
        data = path.read_bytes()
        for name, engine in (("pypdf", pypdf_page_texts), ("pdfium", pdfium_page_texts)):
            try:
                texts[name][path] = "\n".join(engine(path, data))
            except Exception as exc:  # reported and left out of both rates
                print(f"  {name} cannot read {path.name}: {type(exc).__name__}: {exc}")
    common = [path for path in pdfs if path in texts["pypdf"] and path in texts["pdfium"]]
    slow, _ = best_per_file(common, pypdf_page_texts)
    fast, _ = best_per_file(common, pdfium_page_texts)
    shared = sum(
        word_overlap(texts["pypdf"][path], texts["pdfium"][path]) * count_pages(path)
        for path in common
    ) / max(sum(count_pages(path) for path in common), 1.0)
    lowest = min(common, key=lambda p: word_overlap(texts["pypdf"][p], texts["pdfium"][p]))

    docshelf_pdf(pdfs[0], pdfs[0].read_bytes())  # warm-up: imports, glyph tables
    ours, seconds = best_per_file(pdfs, docshelf_pdf)
    per_file = sorted(zip(seconds, pdfs, strict=True), reverse=True)
    readable = [(s, path) for s, path in per_file if path in texts["pdfium"]]
    readable_rate = sum(count_pages(path) for _, path in readable) / sum(s for s, _ in readable)
    passed = ours.rate >= PDF_PAGES_PER_SECOND_TARGET

    print()
    print(f"pdf-text: {len(common)} files both engines read, {int(slow.units)} pages")
    engines = (
        (f"pypdf {pypdf.__version__} extract_text", slow),
        (f"pypdfium2 {pdfium.PYPDFIUM_INFO.version} get_text_range", fast),
    )
    print(f"| {'engine (CPU time)':<36} | {'pages/s':>9} | {'seconds':>8} |")
    print(f"|{'-' * 38}|{'-' * 10}:|{'-' * 9}:|")
    for label, result in engines:
        print(f"| {label:<36} | {result.rate:9.1f} | {result.seconds:8.3f} |")
    ratio = fast.rate / slow.rate if slow.rate else float("inf")
    lowest_share = word_overlap(texts["pypdf"][lowest], texts["pdfium"][lowest])
    print(
        f"PDFium / pypdf: {ratio:.1f}x; words in common (page-weighted): {shared:.1%}, "
        f"lowest {lowest_share:.1%} ({lowest.name})"
    )
    converter = find_converter("application/pdf", "x.pdf")
    version = converter.version if converter is not None else "?"
    verdict = "PASS" if passed else "FAIL"
    print(
        f"docshelf PDF converter v{version} (text+Markdown+JSON), {len(pdfs)} files, "
        f"{int(ours.units)} pages: {ours.rate:.1f} pages/s ({ours.seconds:.2f} s); "
        f"target >= {PDF_PAGES_PER_SECOND_TARGET:.0f} pages/s: {verdict}"
    )
    print(
        f"  the {len(readable)} files PDFium opens: {readable_rate:.1f} pages/s; slowest: "
        + ", ".join(f"{path.name} {s:.3f} s" for s, path in per_file[:3])
    )
    return passed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdf-dir", type=Path, default=DEFAULT_PDF_DIR)
    parser.add_argument("--spec-dir", type=Path, default=DEFAULT_SPEC_DIR)
    parser.add_argument("--repeat", type=int, default=1, help="best of N passes (default 1)")
    parser.add_argument("--section", choices=SECTIONS, default="all", help="what to run")
    args = parser.parse_args(argv)
    logging.getLogger("pdfminer").setLevel(logging.ERROR)

    pdfs = readable_pdfs(args.pdf_dir)
    pages = pdf_pages(pdfs)
    if args.section == "pdf-text":
        pdf_text_section(pdfs, pages, args.repeat)
        return 0
    specs = sorted(args.spec_dir.glob("*/*.mdx"))
    spec_bytes = {path: path.stat().st_size / MB for path in specs}
    total_pages = sum(pages.get(path.name, 0) for path in pdfs)
    print(
        f"PDF corpus: {len(pdfs)} files, {total_pages} pages; MDX: {len(specs)} files, "
        f"{sum(spec_bytes.values()):.3f} MB; best of {args.repeat}"
    )

    def count_pages(path: Path) -> float:
        return float(pages.get(path.name, 0))

    def count_mb(path: Path) -> float:
        return spec_bytes[path]

    docshelf_markdown(specs[0], specs[0].read_bytes())  # warm-up: imports, font discovery
    ours_pdf = measure(pdfs, count_pages, docshelf_pdf, args.repeat)
    ours_md = measure(specs, count_mb, docshelf_markdown, args.repeat)
    ours_md_text = measure(specs, count_mb, docshelf_markdown_without_pdf, args.repeat)

    theirs = markitdown_runner()
    their_pdf = their_md = None
    if theirs is None:
        print("markitdown is not importable (pip install -e '.[bench]'): docshelf figures only")
    else:
        their_pdf = measure(pdfs, count_pages, theirs[0], args.repeat)
        their_md = measure(specs, count_mb, theirs[1], args.repeat)

    print()
    print(f"| {'workload':<30} | {'docshelf':>14} | {'markitdown':>14} | {'ratio':>7} |")
    print(f"|{'-' * 32}|{'-' * 15}:|{'-' * 15}:|{'-' * 8}:|")
    print(row("PDF → text+Markdown+JSON", ours_pdf, their_pdf, "pages/s"))
    print(row("MDX → text+JSON+rendered PDF", ours_md, their_md, "MB/s"))
    print(row("MDX → text+JSON (no PDF)", ours_md_text, their_md, "MB/s"))
    print()
    print(
        f"docshelf: PDF {ours_pdf.seconds:.2f} s, MDX {ours_md.seconds:.2f} s "
        f"({ours_md_text.seconds:.2f} s without rendering)"
    )
    if their_pdf is not None and their_md is not None:
        print(
            f"markitdown: PDF {their_pdf.seconds:.2f} s ({their_pdf.failures} failed), "
            f"MDX {their_md.seconds:.2f} s ({their_md.failures} failed)"
        )
    if args.section == "all":
        pdf_text_section(pdfs, pages, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
