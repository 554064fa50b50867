"""docshelf's faster layout gives fpdf2's own lines and PDFs, exactly.

:mod:`converters.render.linebreak` finds where plain-text lines end without
fpdf2's per-character loop, and :mod:`converters.render.measure` measures
fragments incrementally; both promise fpdf2's results float for float. Random
paragraphs compare the lines, real documents the bytes of the rendered PDF.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from fpdf.enums import Align, WrapMode
from fpdf.line_break import Fragment, MultiLineBreak

from bench.bench_render import old_renderer
from bench.ten_pages import ten_page_markdown
from docshelf.converters.render.document import ShelfPDF
from docshelf.converters.render.fonts import CORE_FONTS, system_fonts
from docshelf.converters.render.linebreak import PlainLineBreak
from docshelf.converters.render.pdf import render_markdown_pdf

FONTS = system_fonts()
needs_dejavu = pytest.mark.skipif(
    FONTS.sans is None or FONTS.mono is None, reason="DejaVu Sans and Sans Mono are not installed"
)

WORDS = ["a", "of", "the", "lorem", "ipsum", "Größe", "café", "∑", "—", "i", "mm", "long-winded"]


def random_fragments(pdf: ShelfPDF, rng: random.Random) -> list[Fragment]:
    """A paragraph as write_html hands it over: runs of several faces, sizes and links,
    single and double spaces, long words, now and then a newline or a no-break space."""
    fragments: list[Fragment] = []
    for _ in range(rng.randint(1, 12)):
        family = "docshelf-sans" if rng.random() < 0.85 else "docshelf-mono"
        pdf.set_font(family, rng.choice(["", "", "B", "I", "BI"]), rng.choice([10, 10, 9, 16, 8.5]))
        words = [*WORDS, "x" * rng.randint(1, 60)]
        text = "".join(
            rng.choice(words) + rng.choice([" ", " ", " ", "  ", ""])
            for _ in range(rng.randint(0, 80))
        )
        if rng.random() < 0.2:
            text = " " + text
        if rng.random() < 0.05:
            text += "\n more"
        if rng.random() < 0.03:
            text += "\u00a0kept together"
        if not text:
            continue
        link = rng.choice([None, None, "https://example.org/"])
        for fragment in pdf._preload_font_styles(text, False):
            fragment.link = link
            fragments.append(fragment)
    return fragments


def lines_of(breaker: type[MultiLineBreak], fragments: list[Fragment], **options: Any) -> list[Any]:
    """Every line the breaker yields, as comparable values (or the error it raises)."""
    lines: list[Any] = []
    breaking = breaker(fragments, margins=(1.0, 1.0), wrapmode=WrapMode.WORD, **options)
    while True:
        try:
            line = breaking.get_line()
        except Exception as exc:  # fpdf2 raises when not one character fits
            return [*lines, (type(exc), str(exc))]
        if line is None:
            return [*lines, (breaking.fragment_index, breaking.character_index)]
        parts = tuple((tuple(f.characters), f.graphics_state, f.k, f.link) for f in line.fragments)
        lines.append((parts, *line[1:]))


@needs_dejavu
def test_plain_line_breaking_gives_fpdf2s_lines_for_random_paragraphs() -> None:
    for seed in range(150):
        rng = random.Random(seed)
        pdf = ShelfPDF(FONTS)
        pdf.add_page()
        fragments = random_fragments(pdf, rng)
        width = rng.choice([5, 12, 30, 60, 100, 174, 174]) + rng.random()
        max_width: float | Callable[[float], float] = width
        if rng.random() < 0.3:  # a region whose width depends on the line's height
            max_width = lambda height, width=width: width - height * 0.1  # noqa: E731
        options = {
            "max_width": max_width,
            "align": rng.choice([Align.L, Align.J, Align.R]),
            "skip_leading_spaces": rng.random() < 0.5,
            "first_line_indent": rng.choice([0, 0, 5.5]),
            "line_height": rng.choice([1, 1.25]),
        }
        plain = [Fragment(list(f.characters), f.graphics_state, f.k, f.link) for f in fragments]
        expected = lines_of(MultiLineBreak, plain, **options)
        assert lines_of(PlainLineBreak, fragments, **options) == expected, f"seed {seed}"


DOCUMENTS: dict[str, tuple[str, dict[str, Any]]] = {
    "ten pages": (ten_page_markdown(), {"title": "Field notes"}),
    "core fonts": (ten_page_markdown()[:6000], {"fonts": CORE_FONTS}),
    "soft hyphens, no-break spaces, a word wider than the page": (
        "Hyph\u00adenation every\u00adwhere. " * 60
        + "\n\nkept\u00a0together " * 50
        + "\n\n"
        + "x" * 400
        + "\n",
        {},
    ),
    "a table with long cells": (
        "| a | b |\n| --- | --- |\n" + ("| " + "long cell text " * 30 + "| short |\n") * 3,
        {},
    ),
    # "Ǆ" is not in DejaVu Sans Mono: the code goes to fpdf2's splitter in pieces.
    "a long code span needing the fallback font": (
        "`" + "".join(f"word{n} Ǆ " if n % 40 == 0 else f"word{n} " for n in range(3000)) + "`\n",
        {},
    ),
    "right to left": ("# مرحبا\n\nسلام عليكم، هذا نص عربي. English **bold** too.\n", {}),  # noqa: RUF001
}


@needs_dejavu
@pytest.mark.parametrize("document", DOCUMENTS.values(), ids=DOCUMENTS.keys())
def test_rendered_pdf_is_byte_identical_to_fpdf2s_own_layout(
    document: tuple[str, dict[str, Any]],
) -> None:
    markdown, options = document
    with old_renderer():
        expected = render_markdown_pdf(markdown, **options)
    assert render_markdown_pdf(markdown, **options) == expected
