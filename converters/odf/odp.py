"""OpenDocument presentations (.odp, .otp): one page per slide (:mod:`converters.slides`).

Each ``draw:page`` is a slide: the frame of class ``title`` is its title, the
other shapes its body in reading order (:func:`.text.reading_order`; groups in
place), read as ODF text (:mod:`.text`); ``presentation:notes`` are its speaker
notes. Empty placeholders ("Click to add text") are skipped. Charts and other
embedded objects are sub-documents of their own and are not read.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element

from docshelf.converters.base import ConversionResult, Source
from docshelf.converters.odf.package import DRAW, PRESENTATION, open_odf, q
from docshelf.converters.odf.text import OdfText, reading_order
from docshelf.converters.slides import Slide, check_slide_count, deck_result
from docshelf.converters.textutil import collapse_whitespace

ODP_MIME_TYPES = frozenset(
    {
        "application/vnd.oasis.opendocument.presentation",
        "application/vnd.oasis.opendocument.presentation-template",
    }
)
ODP_EXTENSIONS = frozenset({".odp", ".otp"})

_CLASS = q(PRESENTATION, "class")
_NOTES = q(PRESENTATION, "notes")


class OdpConverter:
    """Converts OpenDocument presentations with docshelf's own ODF reader."""

    name = "odp"
    version = "2"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in ODP_MIME_TYPES or source.extension in ODP_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        package = open_odf(source.data, "ODP")
        pages = package.body("presentation").findall(q(DRAW, "page"))
        check_slide_count(len(pages), "ODP deck")
        reader = OdfText(package)
        meta = package.metadata
        return deck_result(
            source,
            [_slide(reader, page) for page in pages],
            title=meta.get("title"),
            description=meta.get("subject") or meta.get("description"),
            language=meta.get("language"),
            metadata=meta,
        )


def _slide(reader: OdfText, page: Element) -> Slide:
    title: str | None = None
    body: list[str] = []
    for shape in reading_order(page):
        if shape.tag == _NOTES or shape.get(q(PRESENTATION, "placeholder")) == "true":
            continue
        if title is None and shape.get(_CLASS) == "title":
            title = collapse_whitespace("".join(shape.itertext())) or None
            continue
        body.extend(reader.block(shape, 1))
    notes: list[str] = []
    for frame in page.iterfind(f"{_NOTES}/{q(DRAW, 'frame')}"):
        if frame.get(_CLASS) == "notes":
            notes.extend(reader.frame(frame, 2))
    data = {"name": page.get(q(DRAW, "name"))} if page.get(q(DRAW, "name")) else {}
    return Slide(title, body, notes, data)
