"""Laying text out costs work in proportion to the text, not to its square (issue 24, item 16).

fpdf2 2.8.9 did two things quadratic in a piece of text: its line breaker asked
the line built so far for its width after every character, summing the widths of
all the line's characters again (so a line of L characters read L²/2 widths),
and, whenever fallback fonts are set (always, in docshelf's renderer), it split
a run of text into fragments by slicing off one character at a time (copying
the rest of the run each time). These tests count that work deterministically —
font width reads, the length of text handed to the splitter — instead of timing
it; ``python -m bench render`` times it.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fpdf import FPDF
from fpdf.fonts import TTFFont

from docshelf.converters.render import fontcache
from docshelf.converters.render.fonts import system_fonts
from docshelf.converters.render.pdf import render_markdown_pdf

FONTS = system_fonts()
pytestmark = pytest.mark.skipif(
    FONTS.sans is None or FONTS.mono is None, reason="DejaVu Sans and Sans Mono are not installed"
)

SENTENCE = (
    "the shelf lists every document at once and builds its formats after a reader asks for "
    "them while the catalog stays current with each change made to the folder"
)
WORDS = SENTENCE.split()


def prose(words: int, joiner: Callable[[int], str] = lambda n: " ") -> str:
    """``words`` words of plain prose, joined by what ``joiner`` gives for each position."""
    cycle = itertools.cycle(WORDS)
    return "".join(next(cycle) + joiner(n) for n in range(words)).strip() + "."


class CountingWidths(defaultdict[int, Any]):
    """A font's character-width table (``TTFFont.cw``) that counts its reads."""

    reads = 0

    def __getitem__(self, code: int) -> Any:
        self.reads += 1
        return super().__getitem__(code)


@pytest.fixture
def width_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], int]]:
    """Reads of the width tables of every font a rendering embeds, from here on."""
    tables: list[CountingWidths] = []
    lend = fontcache._lend

    def counting(*args: Any) -> TTFFont:
        font = lend(*args)
        font.cw = CountingWidths(font.cw.default_factory, font.cw)
        tables.append(font.cw)
        return font

    monkeypatch.setattr(fontcache, "_lend", counting)
    yield lambda: sum(table.reads for table in tables)


CASES = {
    # One paragraph of ~3,000 words: docshelf's own line breaking.
    "prose": prose(3000),
    # No-break spaces: every line is left to fpdf2's line breaker.
    "no-break spaces": prose(3000, lambda n: "\u00a0" if n % 4 == 0 else " "),
    # Table cells: fpdf2's multi_cell.
    "table cells": "| a | b |\n| --- | --- |\n"
    + "".join(f"| {prose(60)} | {prose(40)} |\n" for _ in range(25)),
}


@pytest.mark.parametrize("markdown", CASES.values(), ids=CASES.keys())
def test_laying_out_text_reads_each_character_width_a_bounded_number_of_times(
    markdown: str, width_reads: Callable[[], int]
) -> None:
    render_markdown_pdf(markdown)
    # Summing each line again for every character read ~50 widths a character
    # (lines of ~100 characters); measuring each character once reads one or two.
    assert width_reads() <= 3 * len(markdown), (width_reads(), len(markdown))


def test_a_long_run_of_text_reaches_fpdf2s_character_splitter_in_bounded_pieces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "Ǆ" is in DejaVu Sans, not in DejaVu Sans Mono: code holding it needs the
    # fallback font, so its run goes through fpdf2's character-at-a-time split.
    code = prose(20000, lambda n: " Ǆ " if n % 50 == 0 else " ")
    handed: list[int] = []
    split = FPDF._parse_chars

    def measuring(self: FPDF, text: str, markdown: bool, **kwargs: Any) -> Any:
        if markdown or self.text_shaping or self._fallback_font_ids:  # its per-character path
            handed.append(len(text))
        return split(self, text, markdown, **kwargs)

    monkeypatch.setattr(FPDF, "_parse_chars", measuring)
    render_markdown_pdf(f"`{code}`\n")
    assert sum(handed) >= len(code)
    # Each call slices the rest of its text once a character: quadratic in what
    # it is handed, so it must be handed little at a time (a few KB), not 140 KB.
    assert max(handed) <= 4096, max(handed)
