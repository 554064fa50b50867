"""One shape for every media file: a title, a sentence, a table of what is known.

Images, sound and films have no text of their own to show; what a person wants
from one is what it is (a photo taken when, with what; a song by whom, how
long). Each media converter gathers that into a :class:`MediaReport` and this
module writes the four formats from it, the same way for all:

* Markdown: a ``#`` heading only when the file names itself (XMP or EXIF title,
  a song's title tag), then the description, then a two-column table;
* text/plain: the same facts as lines, ``Label: value``;
* JSON: the facts as a program wants them, under ``data``;
* the PDF rendered from the Markdown.

Text found *in* a picture (OCR, :attr:`MediaReport.body`) is the document's
body: after the table, in all formats alike. Text *spoken* in a recording is
not read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from docshelf.converters.assemble import markdown_result
from docshelf.converters.base import ConversionResult, Facts, Source
from docshelf.converters.document import DocumentData
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.parts import section_segments
from docshelf.converters.textutil import (
    collapse_whitespace,
    escape_markdown_line,
    markdown_heading,
    markdown_table,
    summarize,
)


@dataclass(frozen=True, slots=True)
class MediaReport:
    """What a media converter learned, ready to be written out."""

    title: str | None
    description: str
    #: The table, in reading order: (label, value) as a person reads them.
    rows: Sequence[tuple[str, str]]
    #: The JSON ``data``: numbers as numbers, absent facts left out.
    data: Mapping[str, Any]
    #: Flat facts for the index (author, created, ...).
    metadata: Mapping[str, str] = field(default_factory=dict)
    #: Pages OCR could read (1 for a picture with text to read), for :attr:`Facts.ocr_pages`.
    ocr_pages: tuple[int, ...] = ()
    #: Text read in the picture, as paragraphs: the document's body.
    body: Sequence[str] = ()


def media_result(source: Source, report: MediaReport) -> ConversionResult:
    """The four formats of ``report``."""
    title = collapse_whitespace(report.title) if report.title else None
    description = collapse_whitespace(report.description)
    rows = [(label, collapse_whitespace(value)) for label, value in report.rows if value]
    blocks = [markdown_heading(1, title)] if title else []
    blocks.append(escape_markdown_line(description))
    if rows:
        blocks.append(markdown_table(["Property", "Value"], [list(row) for row in rows]))
    blocks += [
        "\n".join(escape_markdown_line(line) for line in paragraph.splitlines())
        for paragraph in report.body
    ]
    markdown = "\n\n".join(block.rstrip("\n") for block in blocks) + "\n"
    lines = [title] if title else []
    lines += [description, "", *(f"{label}: {value}" for label, value in rows)]
    lines += [line for paragraph in report.body for line in ("", paragraph)]
    plain = "\n".join(lines).strip() + "\n"
    model = parse_markdown(markdown)
    facts = Facts(
        title=title,
        description=summarize(description) or description[:200],
        outline=model.headings,
        metadata=dict(report.metadata),
        ocr_pages=report.ocr_pages,
    )
    return markdown_result(
        source,
        facts,
        markdown,
        plain=plain,
        json_view=DocumentData(
            facts=facts, sections=model.sections, tables=model.tables, data=dict(report.data)
        ),
        segments=lambda: section_segments(model.sections),
        pdf_author=report.metadata.get("author"),
    )


def clock(seconds: float) -> str:
    """A duration as h:mm:ss, whole seconds rounded."""
    hours, rest = divmod(round(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def short_duration(seconds: float) -> str:
    """A duration for a sentence: "6.5 s", "0:03:25"."""
    return f"{seconds:.1f} s" if seconds < 60 else clock(seconds)
