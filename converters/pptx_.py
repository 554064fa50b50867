"""PowerPoint decks (PPTX), through python-pptx; each slide is a page (:mod:`converters.slides`).

python-pptx (MIT) reads the package and gives slides, shapes, tables, charts
and notes. It inflates every part of a package when it opens it, so the bytes
reach it only after :func:`converters.package.open_package` has checked what
they unpack to. Within a slide, shapes are read top to bottom, then left to
right, group shapes (and groups in groups) in place, the way a person reads a
slide. Each shape becomes Markdown blocks:

- text: a paragraph per paragraph; a body placeholder's paragraphs, and any
  paragraph with a bullet or a number of its own, as list items nested by their
  outline level; runs linking out as Markdown links;
- a table: a Markdown table, its first row the header; a merged cell's text
  stands in its first cell, the cells it covers stay empty;
- a chart: its title and the data cached in the chart part (categories down,
  series across), read from the XML without trusting its declared point counts;
- a picture: ``![alt text](name)``, the name being the shape's name without
  non-word characters plus the image's extension (what markitdown writes);
  images are never inlined as data.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from docshelf.converters.base import ConversionError, ConversionResult, Source
from docshelf.converters.failures import conversion_failure, describe
from docshelf.converters.html.docx import GENERATOR_SIGNATURE
from docshelf.converters.lists import ListItem, markdown_list
from docshelf.converters.package import open_package
from docshelf.converters.slides import Slide, check_slide_count, deck_result
from docshelf.converters.textutil import (
    check_size,
    collapse_whitespace,
    escape_line_start,
    escape_markdown_inline,
    markdown_link,
    markdown_table,
)

if TYPE_CHECKING:
    from pptx.shapes.base import BaseShape
    from pptx.slide import Slide as PptxSlide
    from pptx.text.text import TextFrame, _Paragraph

PPTX_MIME_TYPES = frozenset(
    {
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "application/vnd.ms-powerpoint.presentation.macroenabled.12",
    }
)
PPTX_EXTENSIONS = frozenset({".pptx", ".pptm"})
#: Compressed size refused outright.
MAX_PPTX_BYTES = 128 * 1024 * 1024
#: What the package may unpack to: python-pptx holds every part in memory at once.
MAX_PPTX_UNPACKED = 256 * 1024 * 1024
#: Groups nest this deep at most (PowerPoint's own decks: two or three).
MAX_GROUP_DEPTH = 32
#: Chart points (categories) shown per chart.
MAX_CHART_POINTS = 1000
#: A title that only names the template python-pptx and PowerPoint start from.
TEMPLATE_TITLES = frozenset({"PowerPoint Presentation"})

_NON_WORD = re.compile(r"\W")
_CORE = {
    "title": "title",
    "author": "author",
    "subject": "subject",
    "comments": "description",
    "keywords": "keywords",
    "category": "category",
    "last_modified_by": "last_modified_by",
    "language": "language",
}


class PptxConverter:
    """Converts PowerPoint (OOXML) decks with python-pptx, one page per slide."""

    name = "pptx"
    version = "2"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in PPTX_MIME_TYPES or source.extension in PPTX_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data, MAX_PPTX_BYTES)
        open_package(source.data, "PPTX", max_unpacked=MAX_PPTX_UNPACKED).close()
        from pptx import Presentation

        try:
            presentation = Presentation(io.BytesIO(source.data))
            check_slide_count(len(presentation.slides), "PPTX deck")
            slides = [_slide(slide) for slide in presentation.slides]
            properties = _core_properties(presentation.core_properties)
        except ConversionError:
            raise
        except Exception as exc:
            # python-pptx reports a broken package with whatever its ZIP and XML
            # readers raise (KeyError for a missing part, XMLSyntaxError, ValueError...).
            raise conversion_failure(exc, f"unreadable PPTX: {describe(exc)}") from exc
        title = properties.get("title")
        described = properties.get("description")
        if described and GENERATOR_SIGNATURE.fullmatch(described):
            described = None  # "generated using python-pptx": the template's, not the deck's
        return deck_result(
            source,
            slides,
            title=None if title in TEMPLATE_TITLES else title,
            description=properties.get("subject") or described,
            language=properties.get("language"),
            metadata=properties,
        )


def _core_properties(core: Any) -> dict[str, str]:
    properties: dict[str, str] = {}
    for attribute, key in _CORE.items():
        value = collapse_whitespace(str(getattr(core, attribute, "") or ""))
        if value:
            properties[key] = value
    for attribute in ("created", "modified"):
        stamp = getattr(core, attribute, None)
        if stamp is not None:
            properties[attribute] = stamp.isoformat()
    return properties


def _slide(slide: PptxSlide) -> Slide:
    title_shape = slide.shapes.title
    title = collapse_whitespace(title_shape.text_frame.text) if title_shape is not None else ""
    skip = title_shape.shape_id if title_shape is not None else None
    found = _Found()
    for shape in _reading_order(slide.shapes):
        if shape.shape_id != skip:
            found.shape(shape, 0)
    notes: list[str] = []
    if slide.has_notes_slide:
        frame = slide.notes_slide.notes_text_frame
        if frame is not None:
            notes = _text_blocks(frame, bulleted=False)
    data: dict[str, Any] = {"layout": slide.slide_layout.name}
    if slide._element.get("show") in ("0", "false"):
        data["hidden"] = True
    if found.charts:
        data["charts"] = found.charts
    if found.images:
        data["images"] = found.images
    return Slide(title or None, found.blocks, notes, data)


def _reading_order(shapes: Iterable[BaseShape]) -> list[BaseShape]:
    """Top to bottom, then left to right (shapes without a position first)."""
    return sorted(
        shapes,
        key=lambda s: (
            float("-inf") if s.top is None else s.top,
            float("-inf") if s.left is None else s.left,
        ),
    )


class _Found:
    """The Markdown blocks of a slide's shapes, and its charts and images for the JSON."""

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.charts: list[dict[str, Any]] = []
        self.images: list[dict[str, str]] = []

    def shape(self, shape: BaseShape, depth: int) -> None:
        from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER

        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            if depth < MAX_GROUP_DEPTH:
                for child in _reading_order(shape.shapes):  # type: ignore[attr-defined]
                    self.shape(child, depth + 1)
        elif getattr(shape, "has_chart", False):
            self._chart(shape)
        elif getattr(shape, "has_table", False):
            self._table(shape)
        elif hasattr(shape, "image"):
            self._picture(shape)
        elif shape.has_text_frame:
            body = shape.is_placeholder and shape.placeholder_format.type in (
                PP_PLACEHOLDER.BODY,
                PP_PLACEHOLDER.OBJECT,
            )
            self.blocks.extend(_text_blocks(shape.text_frame, bulleted=body))  # type: ignore[attr-defined]

    def _table(self, shape: Any) -> None:
        rows = [
            [cell.text if not cell.is_spanned else "" for cell in row.cells]
            for row in shape.table.rows
        ]
        if rows:
            self.blocks.append(markdown_table(rows[0], rows[1:]).rstrip("\n"))

    def _picture(self, shape: Any) -> None:
        properties = shape._element._nvXxPr.cNvPr
        alt = collapse_whitespace(properties.get("descr") or properties.get("title") or "")
        try:
            extension = "." + shape.image.ext
        except (AttributeError, KeyError, ValueError):  # linked, not embedded
            extension = ""
        name = (_NON_WORD.sub("", shape.name) or "image") + extension
        self.images.append({"name": name, "alt": alt})
        self.blocks.append(f"![{escape_markdown_inline(alt)}]({name})")

    def _chart(self, shape: Any) -> None:
        chart = shape.chart
        title = ""
        if chart.has_title and chart.chart_title.has_text_frame:
            title = collapse_whitespace(chart.chart_title.text_frame.text)
        categories, series = _chart_data(chart._chartSpace)
        self.charts.append(
            {
                "title": title or None,
                "categories": categories,
                "series": [{"name": name, "values": values} for name, values in series],
            }
        )
        heading = f"Chart: {title}" if title else "Chart"
        self.blocks.append(f"**{escape_markdown_inline(heading)}**")
        if series:
            header = ["Category", *(name for name, _ in series)]
            rows = [
                [label, *(_number(values[i]) for _, values in series)]
                for i, label in enumerate(categories)
            ]
            self.blocks.append(markdown_table(header, rows).rstrip("\n"))


def _chart_data(chart_space: Any) -> tuple[list[str], list[tuple[str, list[float | None]]]]:
    """Category labels and (series name, values), from the chart's cached points."""
    categories: dict[int, str] = {}
    series: list[tuple[str, dict[int, float | None]]] = []
    for number, ser in enumerate(chart_space.xpath(".//c:ser"), start=1):
        name = collapse_whitespace("".join(ser.xpath("./c:tx//c:v/text()"))) or f"Series {number}"
        for idx, text in _points(ser, "c:cat", "c:xVal"):
            categories.setdefault(idx, collapse_whitespace(text))
        values = {idx: _float(text) for idx, text in _points(ser, "c:val", "c:yVal")}
        series.append((name, values))
    count = max((max(found, default=-1) for _, found in series), default=-1) + 1
    count = min(max(count, max(categories, default=-1) + 1), MAX_CHART_POINTS)
    labels = [categories.get(i, str(i + 1)) for i in range(count)]
    return labels, [(name, [values.get(i) for i in range(count)]) for name, values in series]


def _points(ser: Any, *containers: str) -> Iterator[tuple[int, str]]:
    """(index, text) of the cached points under a series' ``containers`` (first level of
    multi-level labels), indexes past :data:`MAX_CHART_POINTS` left out."""
    for container in containers:
        for found in ser.xpath(f"./{container}"):
            levels = found.xpath(".//c:lvl")
            points = levels[0].xpath("./c:pt") if levels else found.xpath(".//c:pt")
            for point in points:
                try:
                    idx = int(point.get("idx", ""))
                except ValueError:
                    continue
                if 0 <= idx < MAX_CHART_POINTS:
                    yield idx, "".join(point.xpath("./c:v/text()"))


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def _number(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if value.is_integer() else repr(value)


def _text_blocks(frame: TextFrame, *, bulleted: bool) -> list[str]:
    """A text frame's paragraphs as Markdown blocks; runs of list items as one list."""
    blocks: list[str] = []
    items: list[ListItem] = []
    for paragraph in frame.paragraphs:
        markdown = _inline(paragraph)
        if not markdown.strip():
            continue
        listed, ordered = _bullet(paragraph, bulleted)
        if listed:
            items.append(ListItem(paragraph.level, ordered, markdown))
            continue
        if items:
            blocks.append(markdown_list(items))
            items = []
        lines = [escape_line_start(line.strip()) for line in markdown.split("\n")]
        blocks.append("\\\n".join(line for line in lines if line))
    if items:
        blocks.append(markdown_list(items))
    return blocks


def _bullet(paragraph: _Paragraph, bulleted: bool) -> tuple[bool, bool]:
    """Whether the paragraph is a list item, and a numbered one.

    Its own bullet settings win; else a body placeholder's paragraphs are bullets
    (the slide master gives them bullets) and an indented paragraph is one too.
    """
    from pptx.oxml.ns import qn

    properties = paragraph._p.pPr
    if properties is not None:
        if properties.find(qn("a:buNone")) is not None:
            return False, False
        if properties.find(qn("a:buAutoNum")) is not None:
            return True, True
        if properties.find(qn("a:buChar")) is not None:
            return True, False
    return bulleted or paragraph.level > 0, False


def _inline(paragraph: _Paragraph) -> str:
    """A paragraph's runs as inline Markdown; line breaks stay ``\\n``."""
    from pptx.oxml.ns import qn

    parts: list[str] = []
    rels: Mapping[str, Any] = paragraph.part.rels
    for child in paragraph._p.content_children:
        if child.tag == qn("a:br"):
            parts.append("\n")
            continue
        text = escape_markdown_inline(child.text.replace("\v", " ").replace("\n", " "))
        properties: Any = child.rPr
        link = properties.hlinkClick if properties is not None else None
        relationship = rels.get(link.rId) if link is not None and link.rId else None
        if text.strip() and relationship is not None and relationship.is_external:
            text = markdown_link(text, relationship.target_ref)
        parts.append(text)
    return "".join(parts)
