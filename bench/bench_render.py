"""Rendering CPU per document: fonts parsed for every document against once per process.

Renders a generated ten-page Markdown document and a one-line text file to PDF
(the representation D12 builds on demand), alternating between fpdf2 parsing
each font file for every document (the renderer before
:mod:`converters.render.fontcache`) and the per-process font cache, in one warm
process. Prints the best and median CPU time of each, and checks that both
produce the same bytes. Needs nothing beside the checkout.

Run: ``python -m bench.bench_render`` (``--repeat N``, default 15).
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pypdf

from docshelf.converters import convert, fontcache

_PARAGRAPH = (
    "Lorem ipsum dolor sit amet, **consectetur** adipiscing elit, sed do eiusmod tempor "
    "incididunt ut labore et *dolore* magna aliqua. Ut enim ad minim veniam, quis nostrud "
    "exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Größe \u2212 Γ ≤ ∑ "
    "café `inline code` and a [link](https://example.org).\n"
)


def ten_page_markdown() -> bytes:
    """About ten A4 pages: headings, paragraphs, lists, code, tables, some math signs."""
    parts = ["# A ten-page document\n"]
    for number in range(1, 27):
        parts.append(f"## Section {number}: measurements and results\n")
        parts.extend([_PARAGRAPH] * 3)
        parts.append("- first item\n- second item with `code`\n- third item\n")
        parts.append("```python\ndef f(x: int) -> int:\n    return x * 2  # comment\n```\n")
        parts.append("| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |\n| 4 | 5 | 6 |\n")
    return "\n".join(parts).encode("utf-8")


DOCUMENTS: dict[str, tuple[bytes, str]] = {
    "ten-page.md": (ten_page_markdown(), "text/markdown"),
    "tiny.txt": (b"Hello, shelf.\n", "text/plain"),
}


@contextmanager
def fonts_parsed_per_document() -> Iterator[None]:
    """The renderer as it was: every font file through fpdf2's ``add_font``."""
    cached = fontcache._parsed
    fontcache._parsed = lambda path: None  # type: ignore[assignment]
    try:
        yield
    finally:
        fontcache._parsed = cached


def render(name: str) -> bytes:
    data, mime_type = DOCUMENTS[name]
    pdf = convert(data, mime_type, name).get("application/pdf")
    assert pdf is not None
    return pdf.data


def cpu_seconds(name: str) -> float:
    """CPU time of converting one of :data:`DOCUMENTS`."""
    started = time.process_time()
    render(name)
    return time.process_time() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="conversions of each kind")
    args = parser.parse_args(argv)
    print(f"CPU ms per conversion (text, Markdown, JSON and the rendered PDF); {args.repeat} each")
    print(f"| {'document':<12} | pages | {'parsed per document':>21} | {'once per process':>21} |")
    print(f"|{'-' * 14}|------:|{'-' * 22}:|{'-' * 22}:|")
    for name in DOCUMENTS:
        with fonts_parsed_per_document():
            before_bytes = render(name)
        after_bytes = render(name)  # warm-up: fills the cache
        assert before_bytes == after_bytes, f"{name}: the font cache changed the PDF"
        pages = len(pypdf.PdfReader(io.BytesIO(after_bytes)).pages)
        before: list[float] = []
        after: list[float] = []
        for _ in range(args.repeat):  # alternate, so that load from others hits both alike
            with fonts_parsed_per_document():
                before.append(cpu_seconds(name))
            after.append(cpu_seconds(name))

        def cell(times: list[float]) -> str:
            return f"{min(times) * 1000:.0f} best, {statistics.median(times) * 1000:.0f} med"

        print(f"| {name:<12} | {pages:>5} | {cell(before):>21} | {cell(after):>21} |")
    print("same bytes with and without the cache: yes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
