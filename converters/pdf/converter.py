"""PDF sources: text per page (PDFium), metadata, outline, recovered structure (pypdf).

Derived: text/plain (page texts), text/markdown (structure recovered, see
:mod:`converters.pdf.markdown`), application/json (pages). pypdf opens the file
and owns its structure: encryption, page tree, metadata, outline. Encrypted
files are opened with the empty user password when that works (owner-password-
only files), else refused as ``"encrypted"``. A file whose page tree is damaged
is salvaged by scanning its objects for pages. Page text comes from PDFium
(:mod:`converters.pdf.text`, 20-30x faster); pages PDFium cannot read, and
salvaged files, fall back to pypdf's extraction.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from pypdf import PageObject, PasswordType, PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError
from pypdf.generic import DictionaryObject, IndirectObject

from docshelf.converters.assemble import assemble
from docshelf.converters.base import (
    APPLICATION_JSON,
    APPLICATION_PDF,
    TEXT_MARKDOWN,
    TEXT_PLAIN,
    ConversionError,
    ConversionResult,
    Facts,
    FailureReason,
    Source,
)
from docshelf.converters.declared import heading_title, is_numbered
from docshelf.converters.document import DocumentData, Page, document_json
from docshelf.converters.failures import conversion_failure, describe
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.ocr.reading import NoText, Reading, ocr_metadata
from docshelf.converters.parts import page_segments
from docshelf.converters.pdf.forms import Widget, form_fields, place_widgets, read_widgets
from docshelf.converters.pdf.glyphs import GlyphNames
from docshelf.converters.pdf.layout import PageLayout, empty_layout, extract_layout, lay_out
from docshelf.converters.pdf.markdown import pdf_markdown
from docshelf.converters.pdf.meta import READ_ERRORS, read_metadata
from docshelf.converters.pdf.ocr import read_scanned_pages
from docshelf.converters.pdf.outline import read_outline
from docshelf.converters.pdf.scanned import pages_needing_ocr
from docshelf.converters.pdf.text import extract_pages
from docshelf.converters.textutil import summarize

PDF_MIME_TYPES = frozenset({APPLICATION_PDF, "application/x-pdf"})


@dataclass(frozen=True, slots=True)
class _OpenedPdf:
    reader: PdfReader
    pages: tuple[PageObject, ...]
    declared_page_count: int
    salvaged: bool


class PdfConverter:
    """Converts PDF documents with pypdf (structure) and PDFium (page text)."""

    name = "pdf"
    version = "6"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in PDF_MIME_TYPES or source.extension == ".pdf"

    def convert(self, source: Source) -> ConversionResult:
        data = source.data
        opened = _open(data)
        reader = opened.reader
        metadata = read_metadata(reader)
        outline = read_outline(reader)
        widgets = read_widgets(opened.pages)
        layouts, unreadable = _layouts(data, opened, widgets)
        page_count = max(len(layouts), opened.declared_page_count)
        layouts.extend(empty_layout(number) for number in range(len(layouts) + 1, page_count + 1))
        scanned = pages_needing_ocr(data, layouts)
        read = read_scanned_pages(data, scanned) if source.ocr else {}
        for number, (layout, _) in read.items():
            layouts[number - 1] = layout
        readings = {number: reading for number, (_, reading) in read.items()}

        structured = pdf_markdown(layouts, outline, metadata.title)
        page_texts = [layout.text for layout in layouts]
        full_text = "\n\n".join(text for text in page_texts if text) + "\n"

        values = dict(metadata.values)
        if opened.salvaged:
            values["recovery"] = (
                f"page tree unreadable; {len(opened.pages)} of {page_count} pages recovered"
            )
        if unreadable:
            values["unreadable_pages"] = ", ".join(str(number) for number in unreadable)
        values |= ocr_metadata(readings)
        headings = [heading.title for heading in structured.headings]
        first_heading = (
            heading_title(headings[0], numbered=is_numbered(headings)) if headings else None
        )
        facts = Facts(
            title=structured.title or first_heading,
            description=metadata.subject or summarize(_first_paragraph(structured.markdown)),
            page_count=page_count,
            language=metadata.language,
            outline=outline or structured.headings,
            metadata=values,
            ocr_pages=() if source.ocr else scanned,
        )
        pages = [
            _page(layout.number, text, readings.get(layout.number), layout.number in scanned)
            for layout, text in zip(layouts, page_texts, strict=True)
        ]
        return assemble(
            source.mime_type,
            facts,
            {
                TEXT_PLAIN: lambda: full_text.encode("utf-8"),
                TEXT_MARKDOWN: lambda: structured.markdown.encode("utf-8"),
                APPLICATION_JSON: lambda: document_json(
                    DocumentData(
                        facts=facts,
                        pages=pages,
                        links=structured.links,
                        tables=structured.tables,
                        code_blocks=structured.code_blocks,
                        fields=form_fields(widgets),
                    )
                ),
                # Only asked for when the file came labelled as something else.
                APPLICATION_PDF: lambda: data,
            },
            lambda: page_segments(page_texts),
        )


def _open(data: bytes) -> _OpenedPdf:
    """Open, decrypt with the empty password if needed, and find the pages."""
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
    except READ_ERRORS as exc:
        raise conversion_failure(exc, f"not a readable PDF ({describe(exc)})") from exc
    if reader.is_encrypted:
        try:
            decrypted = reader.decrypt("")
        except DependencyError as exc:
            raise conversion_failure(exc, f"cannot decrypt: {exc}") from exc
        except READ_ERRORS as exc:
            raise conversion_failure(
                exc, f"broken encryption dictionary ({describe(exc)})"
            ) from exc
        if decrypted == PasswordType.NOT_DECRYPTED:
            raise ConversionError(FailureReason.ENCRYPTED, "the PDF needs a password to open")
    try:
        pages = tuple(reader.pages)
        return _OpenedPdf(reader, pages, len(pages), salvaged=False)
    except FileNotDecryptedError as exc:
        raise conversion_failure(exc, "the PDF needs a password to open") from exc
    except READ_ERRORS as exc:
        pages = tuple(_scan_for_pages(reader))
        if not pages:
            raise conversion_failure(exc, f"no readable pages ({describe(exc)})") from exc
        return _OpenedPdf(reader, pages, max(len(pages), _linearized_page_count(reader)), True)


def _layouts(
    data: bytes, opened: _OpenedPdf, widgets: Sequence[Widget]
) -> tuple[list[PageLayout], list[int]]:
    """Page layouts (PDFium, else pypdf), form values in place, and the pages neither read."""
    pages = opened.pages
    extracted = None
    if not opened.salvaged:
        extracted = extract_pages(data, len(pages), GlyphNames(pages))
    layouts: list[PageLayout] = []
    unreadable: list[int] = []
    for number, page in enumerate(pages, start=1):
        page_text = extracted[number - 1] if extracted is not None else None
        if page_text is not None:
            on_page = [widget for widget in widgets if widget.field.page == number]
            lines = place_widgets(page_text.lines, on_page) if on_page else page_text.lines
            layout = lay_out(number, lines, page_text.links)
            layouts.append(replace(layout, bounds=_vertical_bounds(page)))
            continue
        try:
            layouts.append(replace(extract_layout(page, number), bounds=_vertical_bounds(page)))
        except READ_ERRORS:
            # One damaged content stream should not cost the other pages.
            layouts.append(empty_layout(number))
            unreadable.append(number)
    return layouts, unreadable


def _vertical_bounds(page: PageObject) -> tuple[float, float] | None:
    """The bottom and top of the page's visible area (its crop box), in user space: the
    space both extractors give baselines in (PDFium reads a page with its /Rotate undone)."""
    try:
        box = page.cropbox
        bottom, top = float(box.bottom), float(box.top)
    except READ_ERRORS:
        return None
    return (bottom, top) if top > bottom else None


def _scan_for_pages(reader: PdfReader) -> Iterator[PageObject]:
    """Page dictionaries found by walking the cross-reference table, in file order."""
    found: list[tuple[int, IndirectObject, DictionaryObject]] = []
    for generation, table in reader.xref.items():
        for number, offset in table.items():
            reference = IndirectObject(number, generation, reader)
            try:
                obj = reference.get_object()
            except READ_ERRORS:
                continue
            if isinstance(obj, DictionaryObject) and obj.get("/Type") == "/Page":
                found.append((offset, reference, obj))
    for _offset, reference, dictionary in sorted(found, key=lambda item: item[0]):
        page = PageObject(reader, reference)
        page.update(dictionary)
        yield page


def _linearized_page_count(reader: PdfReader) -> int:
    """``/N`` of the linearization dictionary: a page count that survives a lost page tree."""
    for generation, table in reader.xref.items():
        for number in table:
            try:
                obj = IndirectObject(number, generation, reader).get_object()
            except READ_ERRORS:
                continue
            if isinstance(obj, DictionaryObject) and "/Linearized" in obj:
                count = obj.get("/N")
                return int(count) if isinstance(count, int) else 0
    return 0


def _page(number: int, text: str, reading: Reading | None, scanned: bool) -> Page:
    """A page of the JSON: its text, what OCR read on it, and why it has no text if so."""
    if reading is not None:
        return Page(number, text, reading.as_json(), None if text else reading.no_text)
    if text:
        return Page(number, text)
    return Page(number, text, no_text=NoText.NEEDS_OCR if scanned else NoText.BLANK)


def _first_paragraph(markdown: str) -> str | None:
    """The first paragraph of body text (headings and page markers skipped)."""
    return parse_markdown(markdown[:20_000]).first_paragraph
