"""PDF page text through PDFium: visual lines with size, baseline and weight.

PDFium (pypdfium2) reads page text 20-30 times faster than pypdf (DESIGN
D13; ``python -m bench.bench_convert --section pdf-text``). Its text comes
in reading order with ``"\r\n"`` between lines; what it gets wrong is put
right here, so that no glyph vanishes or shows as something it is not:

- A hyphen that ends a line becomes U+FFFE and PDFium joins the next line to
  it; the line is split there again with a plain ``-`` (the layout step
  joins the word, as it does for every other extractor).
- A raised or lowered glyph (the ² of S², the i of xᵢ, a fraction's parts, a
  big ∑) often becomes a line of its own; it is put back into its line.
- A glyph PDFium finds no Unicode for (``FPDFText_HasUnicodeMapError``)
  comes out as its raw character code: TeX's math fonts turn ⟨x⟩ into
  "hxi" and ≠ into "6=". Such glyphs are asked of a :class:`GlyphSource`
  (the font's encoding as pypdf reads it) and dropped when it has no answer;
  so are the same font's glyphs its ToUnicode map gives no text (parts of a
  shaped cluster whose text sits on another glyph), which PDFium shows as
  their code without flagging them, and the line pieces of LaTeX's
  picture-mode fonts, which PDFium takes for Dingbats.
- A glyph standing for several right-to-left characters (an Arabic
  ligature) has its text reversed along with its run; that is undone.
- A page's /Rotate makes PDFium read it in the order it is shown (turned
  90°, last line first); text is read from the page as drawn.
- Characters outside the Basic Multilingual Plane are two UTF-16 units,
  which PDFium counts as two characters; they are joined again. Inside a
  right-to-left run PDFium reverses them with the run (a math italic x between
  Arabic words comes out low half first); such pairs are put back in order.

Each line's size is the dominant effective font size (font size times the
text matrix's vertical scale) of three sampled characters, its baseline that
of its first character, its extent that of the font boxes of its first and
last, its weight that of its middle one: sampling keeps the Python work per
line, not per character. Only the map-error check is made per character.

PDFium is not thread-safe: every call into it here holds :data:`PDFIUM_LOCK`.
Conversion runs one document at a time per worker process, so the lock is
uncontended there; it makes a stray call from another thread wait, not crash.
"""

from __future__ import annotations

import ctypes
import math
import re
import statistics
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from docshelf.converters.markdown.model import Link
from docshelf.converters.pdf.aligned import CELL_GAP
from docshelf.converters.pdf.fontface import face_of
from docshelf.converters.pdf.layout import Cell, TextLine
from docshelf.converters.pdf.tables import (
    MAX_RULE_THICKNESS,
    MAX_RULES,
    MIN_RULE_LENGTH,
    Grid,
    Rule,
    Table,
    fill,
    find_grids,
    frames_layout,
    rules_of_box,
    table_text,
)

#: Held around every use of PDFium (see the module docstring).
PDFIUM_LOCK = threading.Lock()


class GlyphSource(Protocol):
    """What the glyphs PDFium could not map read as, from their fonts.

    Fonts are named as PDFium reports them; codes are character codes.
    """

    def text(self, page_index: int, font_name: str, code: int) -> str:
        """The text of one glyph ("" for none)."""
        ...

    def silent_codes(self, page_index: int, font_name: str) -> frozenset[int]:
        """Codes the font's ToUnicode map gives no text, which PDFium shows as the code."""
        ...


#: A line starting to the right of the previous line's start is a raised or
#: lowered part of it when their font boxes overlap by more than this share of
#: the lower box (superscripts, subscripts, big operators; consecutive lines
#: overlap by their descenders at most)...
SAME_LINE_OVERLAP = 0.5
#: ...or when its baseline is within this many font sizes of the other's
#: (TeX sets fraction numerators and denominators about 0.7 em off the axis;
#: the next line is 1.1 em or more below).
SAME_LINE_SHIFT = 0.8
#: A line is split into cells only when it spans this many times the width its
#: characters need (about half a font size each): table rows are spread out...
WIDE_LINE = 1.4
#: ...and split where the gap between two words is aligned.CELL_GAP font sizes wide (a
#: header row, set closer above its columns, at this smaller gap).
HEADER_CELL_GAP = 1.0

_LINE_BREAK = re.compile("\r\n|\ufffe")
# LaTeX's picture-mode fonts draw line and circle pieces; their glyphs bear
# Adobe's Dingbats names (a1, a2 ...), which PDFium maps to ✁, ✂ ...
_DRAWING_FONT = re.compile(r"^(?:[A-Z]{6}\+)?(?:LINE|LCIRCLE)W?10$")
_DINGBAT = re.compile("[\u2700-\u27bf]")
_RIGHT_TO_LEFT = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]+")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Only these count as blank: str.strip() would also eat control characters
# (\t, \x0c, \x1c ...), which are a glyph's raw code until they are resolved.
_BLANK = " \u00a0"
_FONT_NAME_BYTES = 256
#: Link targets kept as Markdown links; others (javascript:, file:, data: ...)
#: are not something a reader of the text should follow.
_SAFE_URI = re.compile(r"^(?:https?|ftps?|mailto|news|tel):", re.IGNORECASE)
_URI_BYTES = 4096


@dataclass(frozen=True, slots=True)
class PageText:
    """What PDFium read off one page: its visual lines and its web links."""

    lines: list[TextLine]
    links: tuple[Link, ...] = ()


# The map-error check is the one call made for every character (~150,000 for
# a 117-page book). Through a plain prototype that takes the text page as an
# address it costs ~0.5 µs a call instead of pypdfium2's ~0.75 µs.
def _address(function: Any) -> int:
    address = ctypes.cast(function, ctypes.c_void_p).value
    if not address:  # pragma: no cover - a loaded library always has its symbols
        raise ImportError(f"PDFium symbol {function!r} has no address")
    return address


_HAS_UNICODE_MAP_ERROR = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)(
    _address(pdfium_c.FPDFText_HasUnicodeMapError)
)
# Looking for table borders asks every object on the page its type (~500 on a
# page with a figure); the same plain prototypes halve the cost of that walk.
_GET_OBJECT = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)(
    _address(pdfium_c.FPDFPage_GetObject)
)
_OBJECT_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(
    _address(pdfium_c.FPDFPageObj_GetType)
)


@dataclass(slots=True)
class _Segment:
    """A piece of one visual line, before raised and lowered pieces are merged in."""

    text: str
    size: float
    bold: bool
    x0: float
    x1: float
    bottom: float
    top: float
    y: float  # baseline of the first character
    weight: int  # visible characters: which piece's size and weight the line takes
    hyphenated: bool  # PDFium joined the next line to this one after a hyphen
    start: int = 0  # the piece's characters in the page text: start ...
    end: int = 0  # ... and end
    mono: bool = False
    advance: float = 0.0  # a monospaced line's glyph advance
    table: Table | None = None
    cells: tuple[Cell, ...] | None = None


def extract_pages(
    data: bytes, page_count: int, glyphs: GlyphSource
) -> list[PageText | None] | None:
    """Each page's visual lines, in reading order, and its links.

    None when PDFium cannot open ``data`` or counts other than ``page_count``
    pages (the caller's page tree is authoritative); a page PDFium fails on is
    None in the list.
    """
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except (pdfium.PdfiumError, ValueError, OSError):
            return None
        try:
            if len(document) != page_count:
                return None
            probe = _Probe()
            return [_page_or_none(document, index, glyphs, probe) for index in range(page_count)]
        finally:
            document.close()


def _page_or_none(
    document: pdfium.PdfDocument, index: int, glyphs: GlyphSource, probe: _Probe
) -> PageText | None:
    try:
        page = document[index]
    except pdfium.PdfiumError:
        return None
    # Like pypdf's extraction of a damaged page, anything going wrong costs
    # this page (the caller falls back to pypdf for it), not the document.
    try:
        if page.get_rotation():
            # /Rotate turns how a page is shown, not the order its text reads in;
            # PDFium orders text as shown (a page turned 90° comes out last line first).
            page.set_rotation(0)
        textpage = page.get_textpage()
        try:
            grids = find_grids(_rules(page.raw))
            lines = _page_lines(textpage.raw, index, glyphs, probe, grids)
            return PageText(lines, _links(document.raw, page.raw, textpage.raw))
        finally:
            textpage.close()
    except Exception:
        return None
    finally:
        page.close()


class _Probe:
    """Out-parameters reused for every call, and each font's face (bold, monospaced) by name.

    One per document; calls hold :data:`PDFIUM_LOCK`, so one at a time.
    """

    def __init__(self) -> None:
        self._buffer = ctypes.create_string_buffer(_FONT_NAME_BYTES)
        self._flags = ctypes.c_int()
        self._faces: dict[bytes, tuple[bool, bool]] = {}
        self.matrix = pdfium_c.FS_MATRIX()
        self.x, self.y = ctypes.c_double(), ctypes.c_double()
        self.head, self.tail = pdfium_c.FS_RECTF(), pdfium_c.FS_RECTF()

    def name(self, textpage: pdfium_c.FPDF_TEXTPAGE, index: int) -> bytes:
        size = pdfium_c.FPDFText_GetFontInfo(
            textpage, index, self._buffer, _FONT_NAME_BYTES, self._flags
        )
        return self._buffer.value if size > 0 else b""

    def face(self, textpage: pdfium_c.FPDF_TEXTPAGE, index: int) -> tuple[bool, bool]:
        """Whether the character's font is bold, and whether it is monospaced."""
        name = self.name(textpage, index)
        face = self._faces.get(name)
        if face is None:
            # The flags are those of the font just named (FPDFText_GetFontInfo).
            face = face_of(textpage, index, name.decode("latin-1"), self._flags.value)
            self._faces[name] = face
        return face


def _page_lines(
    textpage: pdfium_c.FPDF_TEXTPAGE,
    page_index: int,
    glyphs: GlyphSource,
    probe: _Probe,
    grids: Sequence[Grid] = (),
) -> list[TextLine]:
    count = pdfium_c.FPDFText_CountChars(textpage)
    if count <= 0:
        return []
    units = _units(textpage, count)
    chars: list[str] | None = None  # per character, once anything is replaced
    fixes = _unmapped_glyphs(textpage, units, page_index, glyphs, probe)
    if fixes:
        chars = list(units)
        for index, text in fixes.items():
            chars[index] = text
    clusters = _right_to_left_clusters(textpage, units) if _RIGHT_TO_LEFT.search(units) else []
    if clusters:
        chars = chars if chars is not None else list(units)
        for start, end in clusters:
            chars[start:end] = chars[start:end][::-1]
    segments = list(_segments(textpage, units, chars, probe))
    spread = [_is_spread(segment) for segment in segments]
    for index, segment in enumerate(segments):
        # A header row, often set closer than the rows that follow, splits at a smaller gap.
        header = any(spread[index + 1 : index + 4])
        if spread[index] or header:
            gap = HEADER_CELL_GAP if header and not any(spread[index - 1 : index]) else CELL_GAP
            segment.cells = _cells(textpage, units, chars, segment, gap)
    for grid in (grid for grid in grids if not frames_layout(grid, segments)):
        segments = _table_in_place(textpage, units, chars, segments, grid)
    return [_text_line(segment) for segment in _merge_raised(segments)]


def _is_spread(segment: _Segment) -> bool:
    """Whether a line spans much more than its characters need: a table row, maybe."""
    return segment.x1 - segment.x0 > WIDE_LINE * 0.5 * max(segment.size, 1) * len(segment.text)


def _cells(
    textpage: pdfium_c.FPDF_TEXTPAGE,
    units: str,
    chars: list[str] | None,
    segment: _Segment,
    gap_sizes: float,
) -> tuple[Cell, ...] | None:
    """The line's pieces between gaps of ``gap_sizes`` font sizes, each with its edges."""
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))

    def edges(index: int) -> tuple[float, float] | None:
        if pdfium_c.FPDFText_GetCharBox(textpage, index, left, right, bottom, top):
            return left.value, right.value
        return None

    gap = gap_sizes * max(segment.size, 1)
    cells: list[Cell] = []
    first = segment.start
    while first < segment.end and units[first] in _BLANK:
        first += 1
    for index in range(first, segment.end):
        if units[index] != " " or index + 1 >= segment.end or units[index + 1] in _BLANK:
            continue
        before, after = edges(index - 1), edges(index + 1)
        if before is not None and after is not None and after[0] - before[1] > gap:
            cells.append(_cell(units, chars, first, index, edges))
            first = index + 1
    if not cells:
        return None
    end = segment.end
    while end > first and units[end - 1] in _BLANK:
        end -= 1
    cells.append(_cell(units, chars, first, end, edges))
    return tuple(cells)


def _cell(
    units: str,
    chars: list[str] | None,
    start: int,
    end: int,
    edges: Callable[[int], tuple[float, float] | None],
) -> Cell:
    text = units[start:end] if chars is None else "".join(chars[start:end])
    head, tail = edges(start), edges(end - 1)
    x0 = head[0] if head is not None else 0.0
    return Cell(_joined_surrogates(text).strip(), x0, tail[1] if tail is not None else x0)


def _rules(page: pdfium_c.FPDF_PAGE) -> list[Rule]:
    """Lines and outlined rectangles drawn on the page: the borders tables may have."""
    rules: list[Rule] = []
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    fill_mode, stroke = ctypes.c_int(), ctypes.c_int()
    handle = ctypes.cast(page, ctypes.c_void_p).value
    path_type = pdfium_c.FPDF_PAGEOBJ_PATH
    for index in range(pdfium_c.FPDFPage_CountObjects(page)):
        address = _GET_OBJECT(handle, index)
        if _OBJECT_TYPE(address) != path_type:
            continue
        obj = ctypes.cast(address, pdfium_c.FPDF_PAGEOBJECT)
        if not pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            continue
        width, height = right.value - left.value, top.value - bottom.value
        outline = False
        if min(width, height) > MAX_RULE_THICKNESS:
            if min(width, height) < MIN_RULE_LENGTH:
                continue  # a dot, a glyph drawn as a shape
            pdfium_c.FPDFPath_GetDrawMode(obj, fill_mode, stroke)
            outline = bool(stroke.value) and pdfium_c.FPDFPath_CountSegments(obj) <= 5
        rules.extend(
            rules_of_box(left.value, bottom.value, right.value, top.value, outline=outline)
        )
        if len(rules) > MAX_RULES:
            return []
    return rules


def _table_in_place(
    textpage: pdfium_c.FPDF_TEXTPAGE,
    units: str,
    chars: list[str] | None,
    segments: list[_Segment],
    grid: Grid,
) -> list[_Segment]:
    """``segments`` with those inside ``grid`` replaced by one table, if they make one."""
    inside = [
        index
        for index, segment in enumerate(segments)
        if segment.table is None
        and grid.contains((segment.x0 + segment.x1) / 2, (segment.bottom + segment.top) / 2)
    ]
    if not inside:
        return segments
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    x, y = ctypes.c_double(), ctypes.c_double()
    placed: list[tuple[str, float, float, float]] = []
    for index in inside:
        segment = segments[index]
        for char in range(segment.start, segment.end):
            if units[char] in "\r\n\ufffe":
                continue
            if pdfium_c.FPDFText_GetCharBox(
                textpage, char, left, right, bottom, top
            ) and pdfium_c.FPDFText_GetCharOrigin(textpage, char, x, y):
                text = units[char] if chars is None else chars[char]
                middle = (left.value + right.value) / 2, (bottom.value + top.value) / 2
                placed.append((text, *middle, y.value))
    table = fill(grid, placed)
    if table is None:
        return segments
    first = segments[inside[0]]
    grid_left, grid_bottom, grid_right, grid_top = grid.bounds
    as_segment = _Segment(
        text=table_text(table),
        size=first.size,
        bold=False,
        x0=grid_left,
        x1=grid_right,
        bottom=grid_bottom,
        top=grid_top,
        y=first.y,
        weight=sum(segments[index].weight for index in inside),
        hyphenated=False,
        table=table,
    )
    taken = set(inside)
    return [
        as_segment if index == inside[0] else segment
        for index, segment in enumerate(segments)
        if index == inside[0] or index not in taken
    ]


def _links(
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


def _units(textpage: pdfium_c.FPDF_TEXTPAGE, count: int) -> str:
    """The page text with one ``str`` character per PDFium character.

    PDFium stores a character outside the BMP as two characters (its UTF-16
    surrogates); they stay two here so that indices match, and are joined in
    :func:`_text_line`.
    """
    buffer = (ctypes.c_ushort * (count + 1))()
    written = pdfium_c.FPDFText_GetText(textpage, 0, count, buffer)
    if written - 1 == count:
        text = bytes(buffer)[: 2 * count].decode("utf-16-le", "surrogatepass")
        if len(text) == count:
            return text
        return "".join(map(chr, buffer[:count]))
    # The text view left characters out (crbug.com/pdfium/2079): ask one by one.
    return "".join(chr(pdfium_c.FPDFText_GetUnicode(textpage, i)) for i in range(count))


def _unmapped_glyphs(
    textpage: pdfium_c.FPDF_TEXTPAGE,
    units: str,
    page_index: int,
    glyphs: GlyphSource,
    probe: _Probe,
) -> dict[int, str]:
    """Index → text for the characters PDFium gave its raw code for want of Unicode."""
    handle = ctypes.cast(textpage, ctypes.c_void_p).value
    check = _HAS_UNICODE_MAP_ERROR
    flagged = [index for index in range(len(units)) if check(handle, index)]
    fixes: dict[int, str] = {}
    flagged_fonts: set[str] = set()
    for index in flagged:
        if units[index] != "\ufffe":
            font = probe.name(textpage, index).decode("latin-1")
            fixes[index] = glyphs.text(page_index, font, ord(units[index]))
            flagged_fonts.add(font)
    for font in flagged_fonts:
        silent = glyphs.silent_codes(page_index, font)
        if not silent:
            continue
        pattern = re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(silent)) + "]")
        for match in pattern.finditer(units):
            index = match.start()
            if index not in fixes and probe.name(textpage, index).decode("latin-1") == font:
                fixes[index] = ""
    for match in _DINGBAT.finditer(units):
        if _DRAWING_FONT.match(probe.name(textpage, match.start()).decode("latin-1")):
            fixes[match.start()] = ""
    return fixes


def _right_to_left_clusters(textpage: pdfium_c.FPDF_TEXTPAGE, units: str) -> list[tuple[int, int]]:
    """Runs of right-to-left characters drawn by one glyph (same origin): PDFium
    reversed their text with the run it reordered, though a glyph's text is
    already in logical order."""
    x, y = ctypes.c_double(), ctypes.c_double()
    clusters: list[tuple[int, int]] = []
    for match in _RIGHT_TO_LEFT.finditer(units):
        start = match.start()
        origin: tuple[float, float] | None = None
        for index in range(match.start(), match.end() + 1):
            here: tuple[float, float] | None = None
            if index < match.end() and pdfium_c.FPDFText_GetCharOrigin(textpage, index, x, y):
                here = (round(x.value, 2), round(y.value, 2))
            if here is None or here != origin:
                if index - start > 1 and origin is not None:
                    clusters.append((start, index))
                start, origin = index, here
    return clusters


def _segments(
    textpage: pdfium_c.FPDF_TEXTPAGE, units: str, chars: list[str] | None, probe: _Probe
) -> Iterator[_Segment]:
    """PDFium's lines, split again where it joined a hyphenated line to the next."""
    start = 0
    for match in _LINE_BREAK.finditer(units):
        if match.group() == "\r\n" and not pdfium_c.FPDFText_IsGenerated(textpage, match.start()):
            continue  # a glyph whose raw code happens to be CR, LF: not a break
        segment = _segment(textpage, units, chars, start, match.start(), probe)
        if segment is not None:
            segment.hyphenated = match.group() == "\ufffe"
            if segment.hyphenated:
                segment.text += "-"
            yield segment
        start = match.end()
    last = _segment(textpage, units, chars, start, len(units), probe)
    if last is not None:
        yield last


def _segment(
    textpage: pdfium_c.FPDF_TEXTPAGE,
    units: str,
    chars: list[str] | None,
    start: int,
    end: int,
    probe: _Probe,
) -> _Segment | None:
    raw = units[start:end]
    text = raw if chars is None else "".join(chars[start:end])
    if not text.strip():
        return None
    stripped = raw.strip(_BLANK)
    if stripped:
        first = start + len(raw) - len(raw.lstrip(_BLANK))
        last = first + len(stripped) - 1
    else:  # blank as PDFium has it, but a glyph there was resolved to text
        first, last = start, end - 1
    middle = _nearest_visible(units, (first + last) // 2, first, last)
    bold, mono = probe.face(textpage, middle)
    mono = mono and all(probe.face(textpage, index)[1] for index in (first, last))
    advance = 0.0
    if mono:
        text, advance = _monospaced(textpage, units, chars, first, last, probe)
    x, y, head, tail = probe.x, probe.y, probe.head, probe.tail
    pdfium_c.FPDFText_GetCharOrigin(textpage, first, x, y)
    pdfium_c.FPDFText_GetLooseCharBox(textpage, first, head)
    pdfium_c.FPDFText_GetLooseCharBox(textpage, last, tail)
    return _Segment(
        text=text,
        size=_dominant_size(textpage, first, middle, last, probe.matrix),
        bold=bold,
        x0=min(head.left, x.value),
        x1=max(tail.right, head.right),
        bottom=min(head.bottom, tail.bottom),
        top=max(head.top, tail.top),
        y=y.value,
        weight=len(text) - text.count(" "),
        hyphenated=False,
        start=start,
        end=end,
        mono=mono,
        advance=advance,
    )


def _monospaced(
    textpage: pdfium_c.FPDF_TEXTPAGE,
    units: str,
    chars: list[str] | None,
    first: int,
    last: int,
    probe: _Probe,
) -> tuple[str, float]:
    """A monospaced line's text with its spaces as set, and the face's advance.

    PDFium gives one space for a run of them ("id      INTEGER" reads "id
    INTEGER"); in code the run matters. Each glyph's column is its distance
    from the first glyph in advances, the advance being the usual step between
    neighbouring glyphs.
    """
    x, y = probe.x, probe.y
    origins: list[tuple[int, float]] = []
    for index in range(first, last + 1):
        if units[index] not in _BLANK and pdfium_c.FPDFText_GetCharOrigin(textpage, index, x, y):
            origins.append((index, x.value))
    steps = [b - a for (i, a), (j, b) in pairwise(origins) if j == i + 1 and b > a]
    if not origins or not steps:
        return (units[first : last + 1] if chars is None else "".join(chars[first : last + 1])), 0.0
    advance = statistics.median(steps)
    pieces: list[str] = []
    column = 0
    for index, origin in origins:
        wanted = round((origin - origins[0][1]) / advance)
        if wanted > column:
            pieces.append(" " * (wanted - column))
            column = wanted
        piece = units[index] if chars is None else chars[index]
        pieces.append(piece)
        column += len(piece)
    return "".join(pieces), advance


def _nearest_visible(units: str, index: int, first: int, last: int) -> int:
    for offset in range(last - first + 1):
        for candidate in (index + offset, index - offset):
            if first <= candidate <= last and units[candidate] not in _BLANK:
                return candidate
    return first


def _dominant_size(
    textpage: pdfium_c.FPDF_TEXTPAGE, first: int, middle: int, last: int, matrix: pdfium_c.FS_MATRIX
) -> float:
    """The effective size two of the three samples share, else the middle one's."""
    at_middle = _effective_size(textpage, middle, matrix)
    if first == last:
        return at_middle
    at_first = _effective_size(textpage, first, matrix)
    if at_first == at_middle:
        return at_middle
    at_last = _effective_size(textpage, last, matrix)
    return at_first if at_first == at_last else at_middle


def _effective_size(
    textpage: pdfium_c.FPDF_TEXTPAGE, index: int, matrix: pdfium_c.FS_MATRIX
) -> float:
    """Font size times the vertical scale of the character's matrix, to the half point."""
    if not pdfium_c.FPDFText_GetMatrix(textpage, index, matrix):
        return 0.0
    size = pdfium_c.FPDFText_GetFontSize(textpage, index) * math.hypot(matrix.c, matrix.d)
    return round(abs(size) * 2) / 2


def _merge_raised(segments: Sequence[_Segment]) -> list[_Segment]:
    """Raised and lowered pieces put back into the line they belong to."""
    lines: list[_Segment] = []
    for segment in segments:
        previous = lines[-1] if lines else None
        if previous is not None and _continues(previous, segment):
            gap = segment.x0 - previous.x1
            head, tail = previous.text.rstrip(), segment.text.lstrip()
            # Apart: after a gap; stacked (a fraction's numerator and denominator);
            # or a footnote mark after a number, which must not read as more digits.
            size = max(previous.size, 1)
            apart = (
                gap > 0.25 * size
                or gap < -0.25 * size
                or (head[-1:].isdigit() and tail[:1].isdigit())
            )
            space = " " if apart else ""
            cells = None
            if previous.cells is not None or segment.cells is not None:
                cells = _joined_cells(previous, segment, space)
            heavier = segment if segment.weight > previous.weight else previous
            lines[-1] = _Segment(
                text=head + space + tail,
                size=heavier.size,
                bold=heavier.bold,
                x0=previous.x0,
                x1=max(previous.x1, segment.x1),
                bottom=min(previous.bottom, segment.bottom),
                top=max(previous.top, segment.top),
                y=previous.y,
                weight=previous.weight + segment.weight,
                hyphenated=segment.hyphenated,
                start=previous.start,
                end=segment.end,
                mono=previous.mono and segment.mono,
                advance=previous.advance,
                cells=cells,
            )
        else:
            lines.append(segment)
    return lines


def _joined_cells(previous: _Segment, segment: _Segment, space: str) -> tuple[Cell, ...]:
    """The cells of two pieces of one line: the second's first cell continues the
    first's last unless a wide gap parts them (a raised ² inside "Area (km²)")."""
    head = previous.cells or (Cell(previous.text.strip(), previous.x0, previous.x1),)
    tail = segment.cells or (Cell(segment.text.strip(), segment.x0, segment.x1),)
    last, first = head[-1], tail[0]
    if first.x0 - last.x1 > CELL_GAP * max(previous.size, 1):
        return head + tail
    joined = Cell(last.text + space + first.text, last.x0, max(last.x1, first.x1))
    return (*head[:-1], joined, *tail[1:])


def _continues(previous: _Segment, segment: _Segment) -> bool:
    """Whether ``segment`` overlaps ``previous`` as part of the same line, to the right."""
    if previous.hyphenated or segment.x0 < previous.x0 or previous.table or segment.table:
        return False
    overlap = min(previous.top, segment.top) - max(previous.bottom, segment.bottom)
    lower = min(previous.top - previous.bottom, segment.top - segment.bottom)
    if lower > 0 and overlap > SAME_LINE_OVERLAP * lower:
        return True
    return abs(segment.y - previous.y) < SAME_LINE_SHIFT * max(previous.size, segment.size)


def _text_line(segment: _Segment) -> TextLine:
    table = segment.table and tuple(tuple(map(_joined_surrogates, row)) for row in segment.table)
    return TextLine(
        text=_joined_surrogates(segment.text),
        size=segment.size,
        y=segment.y,
        bold=segment.bold,
        x0=segment.x0,
        mono=segment.mono,
        advance=segment.advance,
        table=table,
        cells=segment.cells,
        x1=segment.x1,
    )


def _joined_surrogates(text: str) -> str:
    if _SURROGATE.search(text):
        text = _paired(text)
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def _paired(text: str) -> str:
    """Surrogate pairs in order: a low half followed by a high one is a pair reversed."""
    units = list(text)
    index = 0
    while index < len(units) - 1:
        here, after = units[index], units[index + 1]
        if "\ud800" <= here <= "\udbff" and "\udc00" <= after <= "\udfff":
            index += 2
        elif "\udc00" <= here <= "\udfff" and "\ud800" <= after <= "\udbff":
            units[index], units[index + 1] = after, here
            index += 2
        else:
            index += 1
    return "".join(units)
