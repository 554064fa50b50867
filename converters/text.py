"""Plain-text sources (and any other textual type nobody else claims: ``text/*``, XML, YAML).

Derived: text/markdown (paragraphs kept, line breaks kept as hard breaks,
Markdown specials escaped, so it renders back to the same text),
application/json (one section), application/pdf (rendered), and text/plain
itself, UTF-8 and cleaned, when the source was another text type.
"""

from __future__ import annotations

from docshelf.converters.assemble import parsed_markdown_result
from docshelf.converters.base import (
    APPLICATION_JSON,
    ConversionResult,
    Facts,
    Source,
)
from docshelf.converters.formats import TEXTUAL_SUFFIXES, is_textual
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.textutil import (
    check_size,
    decode,
    summarize,
    text_to_markdown,
)

TEXT_EXTENSIONS = frozenset({".txt", ".text", ".log"})


class TextConverter:
    """Converts plain text; the catch-all for ``text/*``."""

    name = "text"
    version = "4"

    def accepts(self, source: Source) -> bool:
        return _plain_enough(source.base_mime_type) or source.extension in TEXT_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data)
        decoded = decode(source.data)
        text = decoded.text
        markdown = text_to_markdown(text)
        facts = Facts(description=summarize(text), metadata=decoded.metadata)
        return parsed_markdown_result(source, facts, markdown, parse_markdown(markdown), plain=text)


def _plain_enough(mime: str) -> bool:
    """Whether a textual type is this converter's to read as plain text.

    JSON, whatever its suffix, is the JSON converter's; an ``+xml`` vocabulary
    (an SVG drawing, a feed) is a document of its own kind, which reading it as
    prose would flatten, so no converter claims it.
    """
    return is_textual(mime) and mime != APPLICATION_JSON and not mime.endswith(TEXTUAL_SUFFIXES)
