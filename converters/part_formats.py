"""A part's formats, made from its document's (issue #10).

A part (``?pages=3-5``, ``?section=slug``, :mod:`converters.parts`) is offered in
every derived format, made on demand from what the index already holds: the
document's formats that parts are cut from (:data:`converters.formats.PART_SOURCES`)
and a PDF's original. Pages are cut: the JSON's pages, the Markdown between its
page markers, the PDF's own pages. A section is cut from the Markdown at its
headings and converted as a Markdown file of its own, which gives its other formats.

No I/O, as for every converter: ``load`` hands over a format of the document (or,
asked for by the original's type, the original) when one is needed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from docshelf.converters.base import (
    APPLICATION_JSON,
    APPLICATION_PDF,
    TEXT_MARKDOWN,
    TEXT_PLAIN,
    ConversionResult,
    Source,
)
from docshelf.converters.markdown.converter import MarkdownConverter
from docshelf.converters.parts import (
    PartNotFound,
    PartQuery,
    pages_markdown,
    pdf_page_range,
    section_markdown,
)
from docshelf.converters.pdf.converter import PdfConverter
from docshelf.converters.render import render_markdown_pdf

Load = Callable[[str], bytes]  # a document's format (or its original's type) → its bytes


@dataclass(frozen=True, slots=True)
class PartSpec:
    """A part to make: ``query`` of the document at ``path`` on its shelf (for messages),
    whose file ``name`` and ``mime_type`` tell its kind; ``title`` is the part's."""

    query: PartQuery
    path: str
    name: str
    mime_type: str
    title: str


class PartMaker:
    """Makes the formats of one part. However many formats a read asks for, each source
    is loaded once and a section converted once. :class:`PartNotFound` if the document's
    formats no longer hold the part (it changed under the read)."""

    def __init__(self, spec: PartSpec, load: Load) -> None:
        self.spec = spec
        self._load = load
        self._loaded: dict[str, bytes] = {}
        self._markdown: bytes | None = None  # a section's
        self._converted: ConversionResult | None = None  # a section's Markdown, converted

    def make(self, mime_type: str) -> bytes:
        """The part in ``mime_type``, one of the derived formats."""
        if self.spec.query.pages is None:
            return self._of_section(mime_type)
        first, last = self.spec.query.pages
        producers: Mapping[str, Callable[[int, int], bytes]] = {
            TEXT_PLAIN: lambda first, last: self._page_texts(first, last).encode("utf-8"),
            TEXT_MARKDOWN: lambda first, last: self._pages_markdown(first, last).encode("utf-8"),
            APPLICATION_JSON: self._pages_json,
            APPLICATION_PDF: self._pages_pdf,
        }
        return producers[mime_type](first, last)

    def _source(self, mime_type: str) -> bytes:
        if mime_type not in self._loaded:
            self._loaded[mime_type] = self._load(mime_type)
        return self._loaded[mime_type]

    # -- a section: its Markdown, converted ------------------------------------------------

    def _of_section(self, mime_type: str) -> bytes:
        if self._markdown is None:
            slug = self.spec.query.section or ""
            found = section_markdown(self._source(TEXT_MARKDOWN).decode("utf-8"), slug)
            if found is None:  # the document changed under us: the index is catching up
                raise PartNotFound(f"{self.spec.path} no longer has a section {slug!r}")
            self._markdown = found[1].encode("utf-8")
        if mime_type == TEXT_MARKDOWN:
            return self._markdown
        if self._converted is None:
            source = Source.of("part.md", TEXT_MARKDOWN, self._markdown)
            self._converted = MarkdownConverter().convert(source)
        return bytes(self._converted.producers[mime_type]())

    # -- pages: cut from the document's own --------------------------------------------------

    def _document(self) -> dict[str, Any]:
        document = json.loads(self._source(APPLICATION_JSON))
        if not isinstance(document, dict) or not isinstance(document.get("pages"), list):
            raise PartNotFound("the document's JSON format holds no pages")
        return document

    def _pages(self, document: Mapping[str, Any], first: int, last: int) -> list[dict[str, Any]]:
        return [p for p in document["pages"] if first <= p.get("number", 0) <= last]

    def _page_texts(self, first: int, last: int) -> str:
        pages = self._pages(self._document(), first, last)
        return "\n\n".join(p["text"] for p in pages if p["text"])

    def _pages_markdown(self, first: int, last: int) -> str:
        markdown = pages_markdown(self._source(TEXT_MARKDOWN).decode("utf-8"), first, last)
        return markdown if markdown is not None else self._page_texts(first, last)

    def _pages_pdf(self, first: int, last: int) -> bytes:
        """A PDF source's own pages; any other source's pages (a deck's slides) are not
        pages of its rendered PDF, so their part renders its own Markdown."""
        if PdfConverter().accepts(Source.of(self.spec.name, self.spec.mime_type)):
            return pdf_page_range(self._source(APPLICATION_PDF), first, last)
        return render_markdown_pdf(self._pages_markdown(first, last), title=self.spec.title)

    def _pages_json(self, first: int, last: int) -> bytes:
        """The document's JSON with only these pages and the outline entries that start on
        them: still a ``docshelf.document/v1`` document."""
        document = self._document()
        document["pages"] = self._pages(document, first, last)
        document["outline"] = [
            entry
            for entry in document.get("outline", [])
            if isinstance(entry.get("page"), int) and first <= entry["page"] <= last
        ]
        return json.dumps(document, ensure_ascii=False, indent=2).encode("utf-8")
