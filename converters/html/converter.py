"""HTML sources.

Derived: text/markdown (see :mod:`converters.html.markdown`), and from that Markdown
text/plain (the visible text), application/json (sections, links, tables) and
application/pdf (rendered; images are never fetched).
"""

from __future__ import annotations

from collections.abc import Mapping

from docshelf.converters.assemble import assemble
from docshelf.converters.base import (
    APPLICATION_JSON,
    APPLICATION_PDF,
    TEXT_MARKDOWN,
    TEXT_PLAIN,
    ConversionResult,
    base_mime_type,
)
from docshelf.converters.document import document_json, from_markdown
from docshelf.converters.html.markdown import html_to_markdown
from docshelf.converters.markdown.converter import markdown_facts
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.parts import section_segments
from docshelf.converters.render import render_markdown_pdf
from docshelf.converters.textutil import check_size, decode_text, markdown_heading

HTML_MIME_TYPES = frozenset({"text/html", "application/xhtml+xml"})
HTML_EXTENSIONS = frozenset({".html", ".htm", ".xhtml"})
#: ``<meta name=...>`` values kept as metadata.
META_NAMES = ("author", "description", "keywords", "generator")


class HtmlConverter:
    """Converts HTML pages."""

    name = "html"
    version = "3"

    def accepts(self, mime_type: str, extension: str) -> bool:
        return base_mime_type(mime_type) in HTML_MIME_TYPES or extension in HTML_EXTENSIONS

    def convert(self, data: bytes, mime_type: str, filename: str) -> ConversionResult:
        check_size(data)
        return convert_html(decode_text(data), mime_type)


def convert_html(
    source: str,
    mime_type: str,
    *,
    title: str | None = None,
    description: str | None = None,
    language: str | None = None,
    metadata: Mapping[str, str] | None = None,
    title_heading: bool = True,
) -> ConversionResult:
    """Derive the formats of an HTML document (also used for DOCX via mammoth).

    Explicit facts win over what the page declares (``<title>``, meta
    description, ``<html lang>``, meta author/keywords/generator). The title
    heads the Markdown as a ``#`` heading when the body has no ``h1``, unless
    ``title_heading`` is false (the body shows it otherwise: a Word title).
    """
    page = html_to_markdown(source)
    title = title or page.title or page.first_h1
    markdown = page.markdown
    if title and title_heading and page.first_h1 is None:
        markdown = f"{markdown_heading(1, title)}\n\n{markdown}"
    document = parse_markdown(markdown)
    declared = {name: page.meta[name] for name in META_NAMES if name in page.meta}
    facts = markdown_facts(
        document,
        title=title,
        description=description or page.meta.get("description"),
        language=language or page.language,
        metadata={**declared, **(metadata or {})},
    )
    return assemble(
        mime_type,
        facts,
        {
            TEXT_PLAIN: lambda: document.text.encode("utf-8"),
            TEXT_MARKDOWN: lambda: markdown.encode("utf-8"),
            APPLICATION_JSON: lambda: document_json(from_markdown(facts, document)),
            APPLICATION_PDF: lambda: render_markdown_pdf(
                markdown,
                title=facts.title,
                author=facts.metadata.get("author"),
                language=facts.language,
            ),
        },
        lambda: section_segments(document.sections),
    )
