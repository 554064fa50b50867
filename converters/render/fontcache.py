"""Parse each font file once per process and lend fpdf2 a fresh copy per document.

fpdf2's ``add_font`` parses the whole TrueType file (cmap, widths, glyph ids:
~25 ms for DejaVu Sans), and rendered documents need one to four faces each,
so parsing was most of the CPU spent rendering a small file. The parse cannot
simply be shared: when a document is written out, fpdf2 subsets the font's
fontTools object *in place* and closes it, and it writes the document's object
number into the font descriptor. So what is shared is fpdf2's bookkeeping
(cmap, glyph ids, descriptor values); each document gets its own widths table,
descriptor, subset map and a lazily opened fontTools object over an in-memory
copy of the file. That copy is *lean*: it lacks the tables fpdf2 drops from
every embedded subset anyway, which fontTools would otherwise decompile for
each document only to throw away. Output is byte-identical to ``add_font``'s.

CFF-outline fonts are covered too: Noto Sans CJK (a ``.ttc`` of 65,535 CFF
glyphs) costs fpdf2 ~170 ms to parse, which documents with CJK text now pay
once per process (for ~40 MB kept resident); embedding still subsets the
whole font for each document (~200 ms, in fontTools). Colour fonts and any
fpdf2 whose font object has state not reviewed here take the ordinary
``add_font`` path. Conversion runs one document at a time per worker process; nothing here is
shared between threads.
"""

from __future__ import annotations

import copy
import io
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fontTools.ttLib import TTFont
from fpdf import FPDF
from fpdf.enums import TextEmphasis
from fpdf.fonts import SubsetMap, TTFFont

#: fpdf2 (``output.py``, ``_add_fonts``) drops these from every embedded subset.
FPDF_DROPPED_TABLES: tuple[str, ...] = (
    "FFTM", "GDEF", "GPOS", "GSUB", "MATH", "hdmx", "meta", "sbix",
    "CBDT", "CBLC", "EBDT", "EBLC", "EBSC", "SVG ", "CPAL", "COLR",
)  # fmt: skip

#: ``TTFFont`` attributes set once from the font file and only read afterwards.
SHARED_SLOTS = frozenset(
    {
        "type", "name", "glyph_ids", "sp", "ss", "up", "ut", "ttffile", "scale", "cmap",
        "unicode_range", "palette_index", "is_compressed", "is_cff", "is_cid_keyed",
        "is_symbol", "cff_ros", "collection_font_number",
    }
)  # fmt: skip
#: ``TTFFont`` attributes that belong to one document (set or changed while it
#: is laid out or written).
PER_DOCUMENT_SLOTS = frozenset(
    {
        "i", "fontkey", "emphasis", "desc", "cw", "subset", "missing_glyphs",
        "biggest_size_pt", "ttfont", "_hbfont", "color_font",
    }
)  # fmt: skip

_FONT_SUFFIXES = (".ttf", ".ttc", ".otf", ".otc")


@dataclass(frozen=True, slots=True)
class _ParsedFont:
    """fpdf2's bookkeeping for one font file (never handed out itself), and the lean file."""

    template: TTFFont
    lean_file: bytes


def slots_reviewed() -> bool:
    """Whether the installed fpdf2's font object holds only state classified above."""
    return set(TTFFont.__slots__) == SHARED_SLOTS | PER_DOCUMENT_SLOTS


def add_font(pdf: FPDF, family: str, style: str, path: Path) -> None:
    """Make the font at ``path`` available to ``pdf`` as ``family``/``style``.

    The same as ``pdf.add_font(family, style, str(path))``, except that the
    file is parsed at most once in this process.
    """
    fontkey = f"{family.lower()}{style}"
    if fontkey in pdf.fonts:
        return
    parsed = _parsed(path)
    if parsed is None:
        pdf.add_font(family, style, str(path))
        return
    font = _lend(parsed.template, parsed.lean_file, pdf, fontkey, style)
    pdf.fonts[fontkey] = font
    if font.is_cff and font.is_cid_keyed:
        pdf._set_min_pdf_version("1.6")  # as add_font does: CIDFontType0C needs PDF 1.6


def parse(path: Path) -> None:
    """Parse the font at ``path`` now, if this process has not: a document that
    adds it later only pays for its own copy (:func:`add_font`)."""
    _parsed(path)


def _lend(template: TTFFont, lean_file: bytes, pdf: FPDF, fontkey: str, style: str) -> TTFFont:
    """A font object for one document: shared read-only state, its own everything else."""
    font: TTFFont = TTFFont.__new__(TTFFont)
    for name in SHARED_SLOTS:
        if hasattr(template, name):
            setattr(font, name, getattr(template, name))
    font.i = len(pdf.fonts) + 1
    font.fontkey = fontkey
    font.emphasis = TextEmphasis.coerce(style)
    font.desc = copy.copy(template.desc)  # output() writes the object id and name into it
    font.cw = template.cw.copy()  # a defaultdict: reading an unknown character adds it
    font.missing_glyphs = []
    font.biggest_size_pt = 0
    font._hbfont = None  # built from the file on demand (text shaping only)
    font.color_font = None
    font.ttfont = TTFont(io.BytesIO(lean_file), recalcTimestamp=False, lazy=True, fontNumber=0)
    font.subset = SubsetMap(font)
    return font


@cache
def _parsed(path: Path) -> _ParsedFont | None:
    """Parse the font at ``path`` once; None when it must go through ``add_font`` each time."""
    if path.suffix.lower() not in _FONT_SUFFIXES or not slots_reviewed():
        return None
    scratch = FPDF()
    scratch.add_font("parsed", "", str(path))
    template = scratch.fonts["parsed"]
    if not isinstance(template, TTFFont):
        return None
    try:
        if template.color_font is not None:
            return None
        return _ParsedFont(template, _lean_file(path, template.collection_font_number))
    finally:
        # Its fontTools object is never used again (documents get their own): closed and
        # dropped, or its decompiled tables (6,000 glyphs for DejaVu Sans) stay alive.
        template.close()
        del template.ttfont


def _lean_file(path: Path, number: int) -> bytes:
    """The font file without the tables fpdf2 would drop when embedding it.

    fontTools' subsetter also drops ``kern`` when ``GPOS`` is present (its
    ``legacy_kern`` option is off), so the lean file does the same. Tables
    are copied as they are in the file, not recompiled.
    """
    font = TTFont(path, recalcTimestamp=False, lazy=True, fontNumber=number)
    try:
        dropped = set(FPDF_DROPPED_TABLES)
        if "GPOS" in font:
            dropped.add("kern")
        for tag in dropped:
            if tag in font:
                del font[tag]
        buffer = io.BytesIO()
        font.save(buffer, reorderTables=False)
        return buffer.getvalue()
    finally:
        font.close()
