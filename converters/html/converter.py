"""HTML sources.

Derived: text/markdown (see :mod:`converters.html.markdown`), and from that Markdown
text/plain (the visible text), application/json (sections, links, tables) and
application/pdf (rendered; images are never fetched).
"""

from __future__ import annotations

from collections.abc import Mapping

from docshelf.converters.assemble import parsed_markdown_result
from docshelf.converters.base import (
    ConversionResult,
    Source,
)
from docshelf.converters.declared import declared_text, declared_title
from docshelf.converters.html.markdown import html_to_markdown
from docshelf.converters.markdown.converter import markdown_facts
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.textutil import check_size, decode, markdown_heading

HTML_MIME_TYPES = frozenset({"text/html", "application/xhtml+xml"})
HTML_EXTENSIONS = frozenset({".html", ".htm", ".xhtml"})
#: ``<meta name=...>`` values kept as metadata.
META_NAMES = ("author", "description", "keywords", "generator")


class HtmlConverter:
    """Converts HTML pages."""

    name = "html"
    version = "5"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in HTML_MIME_TYPES or source.extension in HTML_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data)
        decoded = decode(source.data)
        return convert_html(source, decoded.text, metadata=decoded.metadata, web_page=True)


def convert_html(
    source: Source,
    html: str,
    *,
    title: str | None = None,
    description: str | None = None,
    language: str | None = None,
    metadata: Mapping[str, str] | None = None,
    title_heading: bool = True,
    web_page: bool = False,
) -> ConversionResult:
    """Derive the formats of an HTML document (also used for DOCX via mammoth).

    Explicit facts win over what the page declares (``<title>``, meta
    description, ``<html lang>``, meta author/keywords/generator). The title
    heads the Markdown as a ``#`` heading when the body has no ``h1``, unless
    ``title_heading`` is false (the body shows it otherwise: a Word title). A
    ``web_page`` loses its chrome (navigation, menus, banners) and, without a
    meta description, is described by its article's first paragraph.
    """
    page = html_to_markdown(html, web_page=web_page)
    title = declared_title(title) or declared_title(page.title) or page.first_h1
    markdown = page.markdown
    if title and title_heading and page.first_h1 is None:
        markdown = f"{markdown_heading(1, title)}\n\n{markdown}"
    document = parse_markdown(markdown)
    declared = {name: page.meta[name] for name in META_NAMES if name in page.meta}
    facts = markdown_facts(
        document,
        title=title,
        description=declared_text(description)
        or declared_text(page.meta.get("description"))
        or page.lead,
        language=language or page.language,
        metadata={**declared, **(metadata or {})},
    )
    return parsed_markdown_result(
        source, facts, markdown, document, pdf_author=facts.metadata.get("author")
    )
