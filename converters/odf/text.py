"""ODF text as Markdown: the one reading of ``text:*`` content for .odt and .odp.

A text document's body and a slide's text boxes hold the same elements:
headings (``text:h`` with its outline level, or a paragraph in a "Heading N"
style), paragraphs, lists (nested lists are deeper levels, a list style says
whether a level is numbered), tables (header rows, repeated and covered
cells), links (``text:a``), footnotes and endnotes (``text:note``: cited as
``[1]`` where they stand, their text quoted right after the paragraph, so a
section keeps its own notes), frames (text boxes read in place, pictures as
``![alt](name)``) and sections. Generated indexes (a table of contents) and
tracked deletions are left out: they are not the document's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from xml.etree.ElementTree import Element

from docshelf.converters.lists import ListItem, markdown_list
from docshelf.converters.odf.package import (
    DRAW,
    OFFICE,
    PRESENTATION,
    SVG,
    TABLE,
    TEXT,
    XLINK,
    OdfPackage,
    integer,
    q,
)
from docshelf.converters.textutil import (
    collapse_whitespace,
    escape_line_start,
    escape_markdown_inline,
    markdown_heading,
    markdown_link,
    markdown_table,
)

#: Elements nest this deep at most before their text is read flat.
MAX_DEPTH = 48
#: Cells one table may have (repeated cells count once per repeat).
MAX_TABLE_CELLS = 100_000
#: A repeated row or cell is written at most this many times.
MAX_REPEAT = 1000
#: Spaces one ``text:s`` may stand for.
MAX_SPACES = 100

_SKIPPED = frozenset(
    q(namespace, name)
    for namespace, names in (
        (
            TEXT,
            (
                "tracked-changes",
                "table-of-content",
                "illustration-index",
                "alphabetical-index",
                "object-index",
                "user-index",
                "table-index",
                "bibliography",
                "sequence-decls",
                "variable-decls",
                "user-field-decls",
                "note-citation",
            ),
        ),
        (OFFICE, ("annotation", "annotation-end", "forms", "scripts", "event-listeners")),
        (PRESENTATION, ("notes",)),
        (DRAW, ("page-thumbnail", "object", "object-ole")),
        (SVG, ("title", "desc")),
    )
    for name in names
)
_HEADING_STYLE = re.compile(r"^Heading(?:_20_| )(\d+)$")
_NON_WORD = re.compile(r"\W")
_XML_SPACE = re.compile(r"[ \t\r\n]+")
_P, _H, _LIST, _TABLE = q(TEXT, "p"), q(TEXT, "h"), q(TEXT, "list"), q(TABLE, "table")
_FRAME, _IMAGE, _TEXT_BOX = q(DRAW, "frame"), q(DRAW, "image"), q(DRAW, "text-box")
_ITEMS = frozenset({q(TEXT, "list-item"), q(TEXT, "list-header")})
#: Where shapes lie on a page rather than follow one another: read as people read.
_CANVASES = frozenset({q(DRAW, "page"), q(DRAW, "g")})
_LENGTH = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(cm|mm|in|pt|pc|px)?\s*$")
_MM_PER_UNIT = {"cm": 10.0, "mm": 1.0, "in": 25.4, "pt": 25.4 / 72, "pc": 25.4 / 6, "px": 25.4 / 96}


class OdfText:
    """Markdown blocks of ODF text elements, with the package's styles at hand."""

    def __init__(self, package: OdfPackage) -> None:
        self.package = package

    # Blocks

    def blocks(self, container: Element, depth: int = 0) -> list[str]:
        """The Markdown blocks of ``container``'s children, in document order."""
        out: list[str] = []
        children = reading_order(container) if container.tag in _CANVASES else container
        for child in children:
            out.extend(self.block(child, depth + 1))
        return out

    def block(self, element: Element, depth: int) -> list[str]:
        """The Markdown blocks of one element (none for what is not text)."""
        tag = element.tag
        if tag in _SKIPPED:
            return []
        if depth > MAX_DEPTH:
            text = collapse_whitespace("".join(element.itertext()))
            return [escape_line_start(escape_markdown_inline(text))] if text else []
        if tag in (_P, _H):
            return self._paragraph(element, depth)
        if tag == _LIST:
            items = self._list_items(element, 0, None, depth)
            return [markdown_list(items)] if items else []
        if tag == _TABLE:
            table = self.table(element, depth)
            return [table] if table else []
        if tag == _FRAME:
            return self.frame(element, depth)
        return self.blocks(element, depth)  # sections, text boxes, shapes, groups...

    def _paragraph(self, element: Element, depth: int) -> list[str]:
        after: list[str] = []
        markdown = self.inline(element, depth, after)
        level = self._heading_level(element)
        lines = [line.strip() for line in markdown.split("\n")]
        lines = [line for line in lines if line]
        if not lines:
            return after
        if level:
            return [markdown_heading(level, collapse_whitespace(" ".join(lines)), escaped=True)]
        return ["\\\n".join(escape_line_start(line) for line in lines), *after]

    def _heading_level(self, element: Element) -> int | None:
        if element.tag == _H:
            return min(max(integer(element.get(q(TEXT, "outline-level")), 1), 1), 6)
        style = element.get(q(TEXT, "style-name"))
        for _ in range(8):  # automatic style → its named parent → ...
            if style is None:
                return None
            match = _HEADING_STYLE.match(style)
            if match:
                return min(max(int(match.group(1)), 1), 6)
            style = self.package.parent_styles.get(style)
        return None

    def _list_items(
        self, element: Element, level: int, style: str | None, depth: int
    ) -> list[ListItem]:
        style = element.get(q(TEXT, "style-name")) or style
        ordered = level + 1 in self.package.numbered_levels.get(style or "", frozenset())
        items: list[ListItem] = []
        for item in element:
            if item.tag not in _ITEMS:
                continue
            lines: list[str] = []
            nested: list[ListItem] = []
            for child in item:
                if child.tag == _LIST and depth < MAX_DEPTH:
                    nested.extend(self._list_items(child, level + 1, style, depth + 1))
                elif child.tag in (_P, _H):
                    after: list[str] = []
                    lines.append(self.inline(child, depth + 1, after))
                    lines.extend(collapse_whitespace(block) for block in after)
                else:
                    text = collapse_whitespace("".join(child.itertext()))
                    lines.append(escape_markdown_inline(text))
            text = "\n".join(line for line in lines if line.strip())
            if text:
                items.append(ListItem(level, ordered, text))
            items.extend(nested)
        return items

    # Inline

    def inline(self, element: Element, depth: int, after: list[str]) -> str:
        """``element``'s text as inline Markdown, line breaks as ``\\n``. Notes and frames
        found in it add their blocks to ``after``, to follow the paragraph."""
        parts = [_text(element.text)]
        for child in element:
            parts.append(self._inline_child(child, depth + 1, after))
            parts.append(_text(child.tail))
        return "".join(parts)

    def _inline_child(self, child: Element, depth: int, after: list[str]) -> str:
        tag = child.tag
        if tag in _SKIPPED:
            return ""
        if depth > MAX_DEPTH:
            return _text("".join(child.itertext()))
        if tag == q(TEXT, "s"):
            return " " * min(max(integer(child.get(q(TEXT, "c")), 1), 1), MAX_SPACES)
        if tag == q(TEXT, "tab"):
            return " "
        if tag == q(TEXT, "line-break"):
            return "\n"
        if tag == q(TEXT, "a"):
            inner = self.inline(child, depth, after)
            href = (child.get(q(XLINK, "href")) or "").strip()
            return markdown_link(inner, href) if href and inner.strip() else inner
        if tag == q(TEXT, "note"):
            citation = collapse_whitespace("".join(_find_text(child, q(TEXT, "note-citation"))))
            body = child.find(q(TEXT, "note-body"))
            text = " ".join(self.blocks(body, depth)) if body is not None else ""
            mark = f"\\[{escape_markdown_inline(citation)}\\]" if citation else ""
            if text:
                after.append(f"> {mark} {collapse_whitespace(text)}".rstrip())
            return mark
        if tag == _FRAME:
            after.extend(self.frame(child, depth))
            return ""
        if tag in (_P, _H, _LIST, _TABLE):  # block content where text was expected
            after.extend(self.block(child, depth))
            return ""
        return self.inline(child, depth, after)  # spans, fields, references...

    # Frames and tables

    def frame(self, frame: Element, depth: int) -> list[str]:
        """A frame's content: its text box, its table, or its picture."""
        out: list[str] = []
        image_done = False
        for child in frame:
            if child.tag == _IMAGE:
                if not image_done:  # later images are other renditions of the same picture
                    out.append(_image(frame, child))
                    image_done = True
            elif child.tag in (_TEXT_BOX, _TABLE):
                out.extend(self.block(child, depth + 1))
        return out

    def table(self, table: Element, depth: int) -> str:
        """A Markdown table (its header: the header rows' first, else the first row)."""
        header: list[list[str]] = []
        body: list[list[str]] = []
        budget = MAX_TABLE_CELLS
        for row, in_header in _rows(table):
            cells = self._cells(row, depth)
            if not any(cells):
                continue
            repeat = min(max(integer(row.get(q(TABLE, "number-rows-repeated")), 1), 1), MAX_REPEAT)
            for _ in range(repeat):
                budget -= len(cells)
                if budget < 0:
                    break
                (header if in_header else body).append(cells)
        if not header and not body:
            return ""
        rows = header + body
        return markdown_table(rows[0], rows[1:], markdown_cells=True).rstrip("\n")

    def _cells(self, row: Element, depth: int) -> list[str]:
        cells: list[str] = []
        for cell in row:
            if cell.tag not in (q(TABLE, "table-cell"), q(TABLE, "covered-table-cell")):
                continue
            repeat = integer(cell.get(q(TABLE, "number-columns-repeated")), 1)
            text = " ".join(self.blocks(cell, depth + 1))
            if not text.strip():
                cells.extend([""] * min(max(repeat, 1), MAX_REPEAT))
                continue
            cells.extend([collapse_whitespace(text)] * min(max(repeat, 1), MAX_REPEAT))
        while cells and not cells[-1]:
            cells.pop()  # trailing empty cells: the rest of the sheet's width
        return cells


def reading_order(canvas: Element) -> list[Element]:
    """The shapes on ``canvas`` top to bottom, then left to right (unplaced ones first;
    a group stands where its first placed shape does)."""
    return sorted(canvas, key=_position)


def _position(shape: Element, depth: int = 0) -> tuple[float, float]:
    y, x = _length(shape.get(q(SVG, "y"))), _length(shape.get(q(SVG, "x")))
    if y is not None and x is not None:
        return y, x
    if shape.tag == q(DRAW, "g") and depth < MAX_DEPTH:
        positions = (_position(child, depth + 1) for child in shape)
        placed = [(y, x) for y, x in positions if y != float("-inf")]
        if placed:
            return min(placed)
    return float("-inf"), float("-inf")


def _length(value: str | None) -> float | None:
    """An ODF length ("2.5cm", "1in") in millimetres."""
    match = _LENGTH.match(value or "")
    if match is None:
        return None
    return float(match.group(1)) * _MM_PER_UNIT[match.group(2) or "mm"]


def _rows(table: Element, in_header: bool = False) -> Iterable[tuple[Element, bool]]:
    for child in table:
        if child.tag == q(TABLE, "table-row"):
            yield child, in_header
        elif child.tag == q(TABLE, "table-header-rows"):
            yield from _rows(child, True)
        elif child.tag in (q(TABLE, "table-rows"), q(TABLE, "table-row-group")):
            yield from _rows(child, in_header)


def _image(frame: Element, image: Element) -> str:
    """``![alt](name)``: alt from the frame's title or description; the name is the
    frame's name without non-word characters plus the picture's extension."""
    alt = collapse_whitespace(
        "".join(_find_text(frame, q(SVG, "title"))) or "".join(_find_text(frame, q(SVG, "desc")))
    )
    href = image.get(q(XLINK, "href")) or ""
    extension = re.search(r"\.\w{1,5}$", href)
    base = _NON_WORD.sub("", frame.get(q(DRAW, "name")) or "") or "image"
    name = base + (extension.group(0) if extension else "")
    return f"![{escape_markdown_inline(alt)}]({name})"


def _find_text(element: Element, tag: str) -> Iterable[str]:
    found = element.find(tag)
    return found.itertext() if found is not None else ()


def _text(text: str | None) -> str:
    """XML text of a paragraph as inline Markdown: ODF collapses its whitespace."""
    return escape_markdown_inline(_XML_SPACE.sub(" ", text)) if text else ""
