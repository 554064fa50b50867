"""Markdown sources (CommonMark + GFM tables, front matter; MDX unwrapped).

Derived: text/plain (Markdown stripped of syntax, from the token stream),
application/json (sections, links, tables, code blocks), application/pdf
(rendered), and text/markdown itself when the source was labelled otherwise
(an ``.md`` file libmagic called text/plain, an MDX page).
"""

from __future__ import annotations

from collections.abc import Mapping

from converters.assemble import assemble
from converters.base import (
    APPLICATION_JSON,
    APPLICATION_PDF,
    TEXT_MARKDOWN,
    TEXT_PLAIN,
    ConversionResult,
    Facts,
    base_mime_type,
)
from converters.document import document_json, from_markdown
from converters.mdmodel import MarkdownDocument, parse_markdown
from converters.mdx import mdx_to_markdown
from converters.parts import section_segments
from converters.render import render_markdown_pdf
from converters.textutil import check_size, decode_text, summarize

MARKDOWN_MIME_TYPES = frozenset({TEXT_MARKDOWN, "text/x-markdown", "text/mdx", "text/x-mdx"})
MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown", ".mdown", ".mkd", ".mkdn", ".mdx"})
_MDX_MIME_TYPES = frozenset({"text/mdx", "text/x-mdx"})


class MarkdownConverter:
    """Converts Markdown and MDX documents with markdown-it."""

    name = "markdown"
    version = "3"

    def accepts(self, mime_type: str, extension: str) -> bool:
        return base_mime_type(mime_type) in MARKDOWN_MIME_TYPES or extension in MARKDOWN_EXTENSIONS

    def convert(self, data: bytes, mime_type: str, filename: str) -> ConversionResult:
        check_size(data)
        source = decode_text(data)
        if base_mime_type(mime_type) in _MDX_MIME_TYPES or filename.lower().endswith(".mdx"):
            source = mdx_to_markdown(source)
        document = parse_markdown(source)
        facts = markdown_facts(document)
        return assemble(
            mime_type,
            facts,
            {
                TEXT_PLAIN: lambda: document.text.encode("utf-8"),
                TEXT_MARKDOWN: lambda: source.encode("utf-8"),
                APPLICATION_JSON: lambda: document_json(from_markdown(facts, document)),
                APPLICATION_PDF: lambda: render_markdown_pdf(
                    source,
                    title=facts.title,
                    author=facts.metadata.get("author"),
                    language=facts.language,
                ),
            },
            lambda: section_segments(document.sections),
        )


def markdown_facts(
    document: MarkdownDocument,
    *,
    title: str | None = None,
    description: str | None = None,
    language: str | None = None,
    metadata: Mapping[str, str] | None = None,
) -> Facts:
    """Facts of a Markdown document; explicit arguments win over what it declares.

    Title: front matter ``title``, else the first heading. Description: front
    matter ``description``, else the start of the first paragraph. Language:
    front matter ``lang``/``language``. Metadata: the front matter.
    """
    front = document.front_matter
    return Facts(
        title=title or front.get("title") or document.first_heading,
        description=summarize(description or front.get("description") or document.first_paragraph),
        language=language or front.get("lang") or front.get("language"),
        outline=document.headings,
        metadata=dict(metadata if metadata is not None else front),
    )
