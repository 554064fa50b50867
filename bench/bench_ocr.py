"""OCR: word recall and speed on scanned pages made from known text (issue 26, item 4).

Each text page (a few pages of the shared corpus's PDFs when they are there,
else pages this benchmark writes with fpdf2) is rendered to a greyscale picture
at 150 and at 200 dpi and wrapped in an image-only PDF, as a scanner writes it;
the PDF goes through the product converter with ``Source(ocr=True)``. Word
recall compares the words of the text docshelf serves with the page's own text
(words of letters and digits, lowercased, counted with repeats; hyphenation at
line ends undone on both sides).

Every measurement is a fresh worker process pinned to one thread
(``OMP_THREAD_LIMIT=1``, ONNX Runtime's intra-op threads 1): pages per second
*per core* is pages divided by the CPU seconds the worker and its OCR child
processes spent; peak RSS is the worker's and its largest child's. The other
engine, RapidOCR (``rapidocr-onnxruntime``), reads the same pictures, rendered
as the product renders them (200 dpi), beside it when it is installed.

Targets: word recall >= 95 % on clean 200 dpi pages, >= 1 page/s per core.

Run: ``python -m bench ocr`` (``--quick``: two built pages at 200 dpi only,
nothing judged, for the test of this harness). See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import resource
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.shared import CORPUS_PDF  # noqa: E402

DPIS = (150, 200)
RECALL_TARGET = 0.95
SPEED_TARGET = 1.0  # pages per CPU second
#: Pages taken from the shared corpus: (file, 0-based page numbers). Prose in one
#: and two columns, LaTeX with formulas, a Google Docs page with a table.
CORPUS_PAGES = (
    ("crazyones-pdfa.pdf", (0,)),
    ("multicolumn.pdf", (0, 1)),
    ("pdflatex-4-pages.pdf", (0, 1)),
    ("google-doc-document.pdf", (0,)),
)
_WORD = re.compile(r"[^\W_]+")
_HYPHENATED = re.compile(r"(\w)-\s*\n\s*(\w)")
_SINGLE_THREAD = {"OMP_THREAD_LIMIT": "1", "OMP_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Figures:
    """One engine at one resolution."""

    engine: str
    dpi: int
    pages: int
    recall: float
    pages_per_cpu_second: float
    peak_rss_mb: float
    child_rss_mb: float


def words(text: str) -> Counter[str]:
    """The words of ``text``: letters and digits, lowercased, hyphenation undone."""
    joined = _HYPHENATED.sub(r"\1\2", text.replace("\r\n", "\n"))
    return Counter(word.casefold() for word in _WORD.findall(joined))


def recall(truth: Counter[str], found: Counter[str]) -> tuple[int, int]:
    """Words of ``truth`` found (with repeats), and how many there are."""
    return sum(min(count, found[word]) for word, count in truth.items()), sum(truth.values())


def text_pages(quick: bool) -> list[tuple[str, bytes]]:
    """(name, one-page text PDF) for each page to scan: corpus pages, else built ones."""
    import pypdfium2 as pdfium

    if not quick and CORPUS_PDF.is_dir():
        out = []
        for name, numbers in CORPUS_PAGES:
            path = CORPUS_PDF / name
            if not path.is_file():
                continue
            source = pdfium.PdfDocument(path)
            for number in numbers:
                single = pdfium.PdfDocument.new()
                single.import_pages(source, [number])
                buffer = io.BytesIO()
                single.save(buffer)
                out.append((f"{name} p{number + 1}", buffer.getvalue()))
        if out:
            return out
    return built_pages()[: 2 if quick else None]


def built_pages() -> list[tuple[str, bytes]]:
    """Text pages this benchmark writes: prose, a two-column page, a small-print page."""
    from fpdf import FPDF

    prose = (
        "Scanned documents arrive as pictures of text. The server reads them with optical "
        "character recognition, so that a search finds the words and a reader gets the "
        "paragraphs in order. Invoices, receipts, letters and forms are the usual kind: "
        "numbers such as 2024-03-14, 1,250.00 and 42 matter as much as the words around them. "
    )
    pages = []
    for name, size, columns in (("prose", 11, 1), ("two columns", 10, 2), ("small print", 8, 1)):
        pdf = FPDF(format="A4")
        pdf.set_font("helvetica", size=size)
        pdf.add_page()
        width = (pdf.w - pdf.l_margin - pdf.r_margin) / columns
        for column in range(columns):
            pdf.set_xy(pdf.l_margin + column * width, pdf.t_margin)
            pdf.multi_cell(width - 6, size * 0.5, prose * (4 if columns == 1 else 3))
        pages.append((f"built: {name}", bytes(pdf.output())))
    return pages


def truth_of(pdf: bytes) -> Counter[str]:
    import pypdfium2 as pdfium

    page = pdfium.PdfDocument(pdf)[0]
    return words(page.get_textpage().get_text_range())


def scan(pdf: bytes, dpi: int) -> tuple[bytes, object]:
    """The page as an image-only PDF at ``dpi``, and the picture itself."""
    import pypdfium2 as pdfium

    image = pdfium.PdfDocument(pdf)[0].render(scale=dpi / 72, grayscale=True).to_pil()
    out = io.BytesIO()
    image.save(out, "PDF", resolution=dpi)
    return out.getvalue(), image


def tesseract_rss_mb(image: object, dpi: int) -> float:
    """Peak RSS of one Tesseract child reading ``image`` as docshelf runs it: its VmHWM,
    read from /proc while it runs (a child's rusage counts the pages of the process it
    was spawned from, so it cannot tell Tesseract's own)."""
    from docshelf.converters.ocr.tesseract import installed

    engine = installed()
    if engine is None:
        return 0.0
    picture = io.BytesIO()
    image.convert("L").save(picture, "PPM")  # type: ignore[attr-defined]
    command = [engine.path, "stdin", "stdout", "-l", "eng", "--psm", "3", "--dpi", str(dpi)]
    child = subprocess.Popen(
        [*command, "tsv"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **_SINGLE_THREAD},
    )
    assert child.stdin is not None
    child.stdin.write(picture.getvalue())
    child.stdin.close()
    peak = 0
    status = Path(f"/proc/{child.pid}/status")
    while child.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    return peak / 1024


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# --- one worker: a fresh process per engine and resolution --------------------------------


def worker(engine: str, dpi: int, quick: bool) -> dict[str, object]:
    """Scan every page at ``dpi``, read it with ``engine``; figures and per-page recall."""
    pages = [(name, truth_of(pdf), *scan(pdf, dpi)) for name, pdf in text_pages(quick)]
    read = _docshelf_reader() if engine == "docshelf" else _rapidocr_reader()
    read(pages[0][2], pages[0][3])  # load what loads once per worker (not timed)
    found_total = truth_total = 0
    per_page = []
    started, wall = cpu_seconds(), time.perf_counter()
    for name, truth, scanned, image in pages:
        found, total = recall(truth, words(read(scanned, image)))
        found_total, truth_total = found_total + found, truth_total + total
        per_page.append((name, found, total))
    spent, wall = cpu_seconds() - started, time.perf_counter() - wall
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = tesseract_rss_mb(pages[-1][3], dpi) if engine == "docshelf" else 0.0
    return {
        "engine": engine if engine != "docshelf" else _docshelf_engine(),
        "dpi": dpi,
        "pages": len(pages),
        "recall": found_total / max(truth_total, 1),
        "pages_per_cpu_second": len(pages) / max(spent, 1e-9),
        "pages_per_wall_second": len(pages) / max(wall, 1e-9),
        "peak_rss_mb": own,
        "child_rss_mb": child,
        "per_page": per_page,
    }


def _docshelf_engine() -> str:
    from docshelf.converters.ocr.reading import engine_name

    return f"docshelf ({engine_name()})"


def _docshelf_reader():  # type: ignore[no-untyped-def]
    from docshelf.converters.base import Source
    from docshelf.converters.pdf.converter import PdfConverter

    converter = PdfConverter()

    def read(scanned: bytes, _image: object) -> str:
        result = converter.convert(Source.of("scan.pdf", "application/pdf", scanned, ocr=True))
        representation = result.get("text/plain")
        return representation.data.decode("utf-8") if representation else ""

    return read


def _rapidocr_reader():  # type: ignore[no-untyped-def]
    import numpy as np
    import pypdfium2 as pdfium
    from rapidocr_onnxruntime import RapidOCR

    engine = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1, use_cls=False)

    def read(scanned: bytes, _image: object) -> str:
        # As the product does: the scanned page drawn again at 200 dpi, then read.
        picture = pdfium.PdfDocument(scanned)[0].render(scale=200 / 72, grayscale=True)
        found, _ = engine(np.asarray(picture.to_pil().convert("RGB")), use_cls=False)
        return "\n".join(line[1] for line in found or [])

    return read


# --- the driver ---------------------------------------------------------------------------


def rapidocr_installed() -> bool:
    try:
        import rapidocr_onnxruntime  # noqa: F401
    except (ImportError, OSError):
        return False
    return True


def measure(engine: str, dpi: int, quick: bool) -> dict[str, object]:
    """One worker process's figures."""
    command = [sys.executable, "-m", "bench.bench_ocr", "--worker", engine, str(dpi)]
    done = subprocess.run(
        command + (["--quick"] if quick else []),
        cwd=REPO,
        env={**os.environ, **_SINGLE_THREAD},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{engine} at {dpi} dpi failed:\n{done.stderr}")
    figures: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return figures


def report(runs: Sequence[dict[str, object]], *, judge: bool, other: str | None) -> Iterator[str]:
    yield f"{'engine':<36} dpi  pages  recall  pages/s/core  RSS MB worker (OCR child)"
    for run in runs:
        yield (
            f"{run['engine']:<36} {run['dpi']:>3}  {run['pages']:>5}  {run['recall']:>6.1%}"
            f"  {run['pages_per_cpu_second']:>12.2f}  {run['peak_rss_mb']:>6.0f} "
            f"({run['child_rss_mb']:.0f})"
        )
    if other:
        yield other
    yield ""
    yield "per page (found/words):"
    for run in runs:
        pages = ", ".join(f"{n} {f}/{t}" for n, f, t in run["per_page"])  # type: ignore[attr-defined]
        yield f"  {run['engine']} {run['dpi']} dpi: {pages}"
    if not judge:
        return
    chosen = next(
        run for run in runs if str(run["engine"]).startswith("docshelf") and run["dpi"] == 200
    )
    recall_ok = float(chosen["recall"]) >= RECALL_TARGET  # type: ignore[arg-type]
    speed_ok = float(chosen["pages_per_cpu_second"]) >= SPEED_TARGET  # type: ignore[arg-type]
    yield ""
    verdict = {True: "PASS", False: "FAIL"}
    yield (
        f"{verdict[recall_ok]}  word recall on clean 200 dpi pages >= 95 %: {chosen['recall']:.1%}"
    )
    yield f"{verdict[speed_ok]}  >= 1 page/s per core: {chosen['pages_per_cpu_second']:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench ocr", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two built pages, 200 dpi, no verdict")
    parser.add_argument("--worker", nargs=2, metavar=("ENGINE", "DPI"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        engine, dpi = args.worker
        print(json.dumps(worker(engine, int(dpi), args.quick)))
        return 0
    from docshelf.converters.ocr import ocr_unavailable

    reason = ocr_unavailable()
    if reason:
        print(f"OCR cannot run here: {reason}")
        return 1
    dpis = (200,) if args.quick else DPIS
    runs = [measure("docshelf", dpi, args.quick) for dpi in dpis]
    other = None
    if rapidocr_installed():
        for dpi in dpis:
            runs.append(measure("rapidocr", dpi, args.quick))
            runs[-1]["engine"] = "RapidOCR 1.4 (other engine)"
    else:
        other = "RapidOCR: not installed (pip install rapidocr-onnxruntime to compare)"
    print(f"OCR benchmark: {runs[0]['pages']} scanned pages, one thread per worker")
    for line in report(runs, judge=not args.quick, other=other):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
