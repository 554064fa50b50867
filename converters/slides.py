"""Slide decks (PPTX, ODP) as documents whose pages are the slides.

A reader cites a slide by its number, so slide N is page N: ``page_count`` is
the number of slides, the JSON lists one page per slide, the Markdown puts a
``<!-- page N -->`` line before each slide (``?pages=3`` cuts slide 3 there,
:func:`converters.parts.pages_markdown`) and the outline has one entry per
slide. Each slide reads as its title (``## Slide N`` when it has none), its
body in reading order, then its speaker notes under ``### Notes``. The format
readers (:mod:`converters.pptx_`, :mod:`converters.odf.odp`) only turn their
slides into :class:`Slide`; everything a deck is beyond that is decided here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from docshelf.converters.assemble import markdown_result
from docshelf.converters.base import (
    ConversionError,
    ConversionResult,
    Facts,
    FailureReason,
    OutlineEntry,
    Segment,
    Source,
)
from docshelf.converters.document import DocumentData, Page
from docshelf.converters.markdown.model import Link, Table, parse_markdown
from docshelf.converters.parts import pages_query
from docshelf.converters.textutil import collapse_whitespace, markdown_heading, summarize

#: Slides one deck may have: a real deck has tens, a few hundred at most.
MAX_SLIDES = 2000
#: How many slide titles the description names.
DESCRIBED_TITLES = 3


@dataclass(frozen=True, slots=True)
class Slide:
    """One slide as the format reader found it.

    ``title`` is plain text (None: the slide has none); ``body`` and ``notes`` are
    Markdown blocks in reading order; ``data`` is what the JSON's ``data`` says of
    the slide besides its number, title and notes (layout, charts, images...).
    """

    title: str | None
    body: Sequence[str] = ()
    notes: Sequence[str] = ()
    data: Mapping[str, Any] = field(default_factory=dict)


def check_slide_count(count: int, kind: str) -> None:
    """Refuse a deck of more than :data:`MAX_SLIDES` slides before reading them."""
    if count > MAX_SLIDES:
        raise ConversionError(
            FailureReason.TOO_LARGE,
            f"the {kind} has {count} slides, over the limit of {MAX_SLIDES}",
        )


def slide_heading(number: int, title: str | None) -> str:
    """``## <title>`` (``## Slide N`` without one)."""
    return markdown_heading(2, title or f"Slide {number}")


def slide_markdown(number: int, slide: Slide) -> str:
    """The Markdown of one slide, without its page marker."""
    blocks = [slide_heading(number, slide.title), *slide.body]
    if slide.notes:
        blocks += ["### Notes", *slide.notes]
    return "\n\n".join(block for block in blocks if block.strip()) + "\n"


def deck_result(
    source: Source,
    slides: Sequence[Slide],
    *,
    title: str | None = None,
    description: str | None = None,
    language: str | None = None,
    metadata: Mapping[str, str] | None = None,
) -> ConversionResult:
    """The result for a deck of ``slides``, with what its file declares.

    Title: ``title``, else the first slide's title. Description: ``description``,
    else "Presentation, N slides: " and the first slides' titles.
    """
    metadata = dict(metadata or {})
    pages: list[Page] = []
    segments: list[Segment] = []
    markdown_parts: list[str] = []
    links: list[Link] = []
    tables: list[Table] = []
    described: list[dict[str, Any]] = []
    for number, slide in enumerate(slides, start=1):
        markdown = slide_markdown(number, slide)
        document = parse_markdown(markdown)
        markdown_parts.append(f"<!-- page {number} -->\n\n{markdown}")
        pages.append(Page(number, document.text))
        segments.append(
            Segment(pages_query(number, number), slide.title or f"Slide {number}", document.text)
        )
        links.extend(document.links)
        tables.extend(document.tables)
        notes = parse_markdown("\n\n".join(slide.notes)).text.strip() if slide.notes else ""
        described.append(
            {"number": number, "title": slide.title, **slide.data}
            | ({"notes": notes} if notes else {})
        )
    titles = [slide.title for slide in slides if slide.title]
    facts = Facts(
        title=collapse_whitespace(title or "") or (titles[0] if titles else None),
        description=summarize(description) or _describe(len(slides), titles),
        page_count=len(slides),
        language=language or None,
        outline=tuple(
            OutlineEntry(slide.title or f"Slide {number}", 1, number)
            for number, slide in enumerate(slides, start=1)
        ),
        metadata=metadata,
    )
    return markdown_result(
        source,
        facts,
        "\n".join(markdown_parts),
        plain="\n\n".join(page.text for page in pages if page.text),
        json_view=DocumentData(
            facts=facts, pages=pages, links=links, tables=tables, data={"slides": described}
        ),
        segments=lambda: tuple(segments),
        pdf_author=metadata.get("author"),
    )


def _describe(count: int, titles: Sequence[str]) -> str:
    described = f"Presentation, {count} slide{'' if count == 1 else 's'}"
    if not titles:
        return described
    return summarize(f"{described}: {'; '.join(titles[:DESCRIBED_TITLES])}") or described
