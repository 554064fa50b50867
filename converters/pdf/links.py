"""A PDF page's web links through PDFium: each link annotation's URI and the text under it."""

from __future__ import annotations

import ctypes
import re

import pypdfium2.raw as pdfium_c

from docshelf.converters.markdown.model import Link

#: Link targets kept as Markdown links; others (javascript:, file:, data: ...)
#: are not something a reader of the text should follow.
_SAFE_URI = re.compile(r"^(?:https?|ftps?|mailto|news|tel):", re.IGNORECASE)
_URI_BYTES = 4096


def page_links(
    document: pdfium_c.FPDF_DOCUMENT, page: pdfium_c.FPDF_PAGE, textpage: pdfium_c.FPDF_TEXTPAGE
) -> tuple[Link, ...]:
    """The page's link annotations with a web target, each with the text under it."""
    links: list[Link] = []
    position = ctypes.c_int(0)
    link = pdfium_c.FPDF_LINK()
    rect = pdfium_c.FS_RECTF()
    buffer = ctypes.create_string_buffer(_URI_BYTES)
    while pdfium_c.FPDFLink_Enumerate(page, position, link):
        action = pdfium_c.FPDFLink_GetAction(link)
        if not action or pdfium_c.FPDFAction_GetType(action) != pdfium_c.PDFACTION_URI:
            continue
        size = pdfium_c.FPDFAction_GetURIPath(document, action, buffer, _URI_BYTES)
        if not 1 < size <= _URI_BYTES:
            continue
        # The URI of a URI action is 7-bit ASCII (PDF 32000-1 §12.6.4.7).
        uri = buffer.value.decode("latin-1").strip()
        if not _SAFE_URI.match(uri) or not pdfium_c.FPDFLink_GetAnnotRect(link, rect):
            continue
        text = _bounded_text(textpage, rect)
        links.append(Link(text=text, href=uri))
    return tuple(links)


def _bounded_text(textpage: pdfium_c.FPDF_TEXTPAGE, rect: pdfium_c.FS_RECTF) -> str:
    left, top, right, bottom = rect.left, rect.top, rect.right, rect.bottom
    count = pdfium_c.FPDFText_GetBoundedText(textpage, left, top, right, bottom, None, 0)
    if count <= 0:
        return ""
    buffer = (ctypes.c_ushort * (count + 1))()
    written = pdfium_c.FPDFText_GetBoundedText(textpage, left, top, right, bottom, buffer, count)
    text = bytes(buffer)[: 2 * max(written, 0)].decode("utf-16-le", "replace")
    return " ".join(text.replace("\ufffe", "-").split())
