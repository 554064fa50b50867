"""OpenDocument text (.odt, .ott): the body as Markdown sections (:mod:`.text`).

Title: ``dc:title`` from ``meta.xml``, else the first heading; description:
``dc:subject``, else ``dc:description``, else the first prose; author, dates and
language from ``meta.xml`` too.
"""

from __future__ import annotations

from docshelf.converters.assemble import parsed_markdown_result
from docshelf.converters.base import ConversionResult, Source
from docshelf.converters.markdown.converter import markdown_facts
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.odf.package import open_odf
from docshelf.converters.odf.text import OdfText

ODT_MIME_TYPES = frozenset(
    {"application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.text-template"}
)
ODT_EXTENSIONS = frozenset({".odt", ".ott"})


class OdtConverter:
    """Converts OpenDocument text with docshelf's own ODF reader."""

    name = "odt"
    version = "1"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in ODT_MIME_TYPES or source.extension in ODT_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        package = open_odf(source.data, "ODT")
        blocks = OdfText(package).blocks(package.body("text"))
        markdown = "\n\n".join(blocks) + "\n" if blocks else ""
        document = parse_markdown(markdown)
        meta = package.metadata
        facts = markdown_facts(
            document,
            title=meta.get("title"),
            description=meta.get("subject") or meta.get("description"),
            language=meta.get("language"),
            metadata=meta,
        )
        return parsed_markdown_result(
            source, facts, markdown, document, pdf_author=meta.get("author")
        )
