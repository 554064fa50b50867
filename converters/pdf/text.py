"""PDF page text through PDFium: visual lines with size, baseline and weight.

PDFium (pypdfium2) reads page text 20-30 times faster than pypdf (DESIGN
D13; ``python -m bench.bench_convert --section pdf-text``). Its text comes
in reading order with ``"\r\n"`` between lines; what it gets wrong is put
right, so that no glyph vanishes or shows as something it is not:

- A hyphen that ends a line becomes U+FFFE and PDFium joins the next line to
  it; the line is split there again with a plain ``-`` (the layout step
  joins the word, as it does for every other extractor).
- A raised or lowered glyph (the ² of S², the i of xᵢ, a fraction's parts, a
  big ∑) often becomes a line of its own; it is put back into its line
  (:mod:`converters.pdf.segments`).
- A glyph PDFium finds no Unicode for (``FPDFText_HasUnicodeMapError``)
  comes out as its raw character code: TeX's math fonts turn ⟨x⟩ into
  "hxi" and ≠ into "6=". Such glyphs are asked of a :class:`GlyphSource`
  (the font's encoding as pypdf reads it) and dropped when it has no answer;
  so are the same font's glyphs its ToUnicode map gives no text (parts of a
  shaped cluster whose text sits on another glyph), which PDFium shows as
  their code without flagging them, and the line pieces of LaTeX's
  picture-mode fonts, which PDFium takes for Dingbats.
- A glyph standing for several right-to-left characters (an Arabic
  ligature) has its text reversed along with its run; that is undone
  (:mod:`converters.pdf.bidi`).
- A page's /Rotate makes PDFium read it in the order it is shown (turned
  90°, last line first); text is read from the page as drawn.
- Characters outside the Basic Multilingual Plane are two UTF-16 units,
  which PDFium counts as two characters; they are joined again. Inside a
  right-to-left run PDFium reverses them with the run (a math italic x between
  Arabic words comes out low half first); such pairs are put back in order
  (:mod:`converters.pdf.bidi`).

Each line's size is the dominant effective font size (font size times the
text matrix's vertical scale) of three sampled characters, its baseline that
of its first character, its extent that of the font boxes of its first and
last, its weight that of its middle one: sampling keeps the Python work per
line, not per character. Only the map-error check is made per character.

Table rows and ruled tables are found in the same text
(:mod:`converters.pdf.page_tables`), and the page's web links read with it
(:mod:`converters.pdf.links`). Every call into PDFium holds
:data:`converters.pdf.pdfium_calls.PDFIUM_LOCK`.
"""

from __future__ import annotations

import ctypes
import math
import re
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from docshelf.converters.markdown.model import Link
from docshelf.converters.pdf.bidi import right_to_left_clusters
from docshelf.converters.pdf.fontface import face_of
from docshelf.converters.pdf.layout import TextLine
from docshelf.converters.pdf.links import page_links
from docshelf.converters.pdf.page_tables import ruled_grids, split_cells, table_in_place
from docshelf.converters.pdf.pdfium_calls import HAS_UNICODE_MAP_ERROR, PDFIUM_LOCK
from docshelf.converters.pdf.segments import BLANK, Segment, merge_raised, text_line
from docshelf.converters.pdf.tables import Grid, frames_layout


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


_LINE_BREAK = re.compile("\r\n|\ufffe")
# LaTeX's picture-mode fonts draw line and circle pieces; their glyphs bear
# Adobe's Dingbats names (a1, a2 ...), which PDFium maps to ✁, ✂ ...
_DRAWING_FONT = re.compile(r"^(?:[A-Z]{6}\+)?(?:LINE|LCIRCLE)W?10$")
_DINGBAT = re.compile("[\u2700-\u27bf]")
_FONT_NAME_BYTES = 256


@dataclass(frozen=True, slots=True)
class PageText:
    """What PDFium read off one page: its visual lines and its web links."""

    lines: list[TextLine]
    links: tuple[Link, ...] = ()


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
            grids = ruled_grids(page.raw)
            lines = _page_lines(textpage.raw, index, glyphs, probe, grids)
            return PageText(lines, page_links(document.raw, page.raw, textpage.raw))
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
    grids: Sequence[Grid],
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
    clusters = right_to_left_clusters(textpage, units)
    if clusters:
        chars = chars if chars is not None else list(units)
        for start, end in clusters:
            chars[start:end] = chars[start:end][::-1]
    segments = list(_segments(textpage, units, chars, probe))
    split_cells(textpage, units, chars, segments)
    for grid in (grid for grid in grids if not frames_layout(grid, segments)):
        segments = table_in_place(textpage, units, chars, segments, grid)
    return [text_line(segment) for segment in merge_raised(segments)]


def _units(textpage: pdfium_c.FPDF_TEXTPAGE, count: int) -> str:
    """The page text with one ``str`` character per PDFium character.

    PDFium stores a character outside the BMP as two characters (its UTF-16
    surrogates); they stay two here so that indices match, and are joined in
    :func:`converters.pdf.segments.text_line`.
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
    check = HAS_UNICODE_MAP_ERROR
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


def _segments(
    textpage: pdfium_c.FPDF_TEXTPAGE, units: str, chars: list[str] | None, probe: _Probe
) -> Iterator[Segment]:
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
) -> Segment | None:
    raw = units[start:end]
    text = raw if chars is None else "".join(chars[start:end])
    if not text.strip():
        return None
    stripped = raw.strip(BLANK)
    if stripped:
        first = start + len(raw) - len(raw.lstrip(BLANK))
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
    return Segment(
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
        if units[index] not in BLANK and pdfium_c.FPDFText_GetCharOrigin(textpage, index, x, y):
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
            if first <= candidate <= last and units[candidate] not in BLANK:
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
