"""Plain-text sources (and any other textual type nobody else claims: ``text/*``, XML, YAML).

Derived: text/markdown (paragraphs kept, line breaks kept as hard breaks,
Markdown specials escaped, so it renders back to the same text),
application/json (one section), application/pdf (rendered), and text/plain
itself, UTF-8 and cleaned, when the source was another text type.
"""

from __future__ import annotations

from docshelf.converters.assemble import assemble
from docshelf.converters.base import (
    APPLICATION_JSON,
    APPLICATION_PDF,
    TEXT_MARKDOWN,
    TEXT_PLAIN,
    ConversionResult,
    Facts,
    base_mime_type,
)
from docshelf.converters.document import document_json, from_markdown
from docshelf.converters.formats import TEXTUAL_SUFFIXES, is_textual
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.parts import section_segments
from docshelf.converters.render import render_markdown_pdf
from docshelf.converters.textutil import (
    check_size,
    decode_text,
    summarize,
    text_to_markdown,
)

TEXT_EXTENSIONS = frozenset({".txt", ".text", ".log"})


class TextConverter:
    """Converts plain text; the catch-all for ``text/*``."""

    name = "text"
    version = "3"

    def accepts(self, mime_type: str, extension: str) -> bool:
        return _plain_enough(base_mime_type(mime_type)) or extension in TEXT_EXTENSIONS

    def convert(self, data: bytes, mime_type: str, filename: str) -> ConversionResult:
        check_size(data)
        text = decode_text(data)
        markdown = text_to_markdown(text)
        document = parse_markdown(markdown)
        facts = Facts(description=summarize(text))
        return assemble(
            mime_type,
            facts,
            {
                TEXT_PLAIN: lambda: text.encode("utf-8"),
                TEXT_MARKDOWN: lambda: markdown.encode("utf-8"),
                APPLICATION_JSON: lambda: document_json(from_markdown(facts, document)),
                APPLICATION_PDF: lambda: render_markdown_pdf(markdown),
            },
            lambda: section_segments(document.sections),
        )


def _plain_enough(mime: str) -> bool:
    """Whether a textual type is this converter's to read as plain text.

    JSON, whatever its suffix, is the JSON converter's; an ``+xml`` vocabulary
    (an SVG drawing, a feed) is a document of its own kind, which reading it as
    prose would flatten, so no converter claims it.
    """
    return is_textual(mime) and mime != APPLICATION_JSON and not mime.endswith(TEXTUAL_SUFFIXES)
