"""A PDF font's face as PDFium sees it: bold, and monospaced.

Bold: by PostScript name ("Helvetica-Bold", TeX's "CMBX10") or PDFium's weight.
Monospaced: by the font descriptor's FixedPitch flag, by name ("Courier",
"DejaVuSansMono", TeX's "CMTT10"), or else by measuring it. Neither flag nor
name can be relied on: the shared-mime-info specification's XML samples are set
in URW's NimbusMonL-Regu, whose name says "Mon", not "Mono", and whose
descriptor flags say only Symbolic (4), as many TeX and Ghostscript fonts do. A
monospaced face is one whose narrow and wide letters advance alike, so the
widths the font declares for ``i``/``l`` and ``m``/``W`` are compared: in a
proportional face they differ two- to threefold. Digits are not asked: most
proportional faces set them all alike (tabular figures). A symbol font (TeX's
CMSY, CMEX) has no letters, and PDFium then answers one default width for any
character: so the width of characters no text face has (a CJK ideograph, a
private-use code point) is asked too, and must differ.

Callers hold :data:`converters.pdf.pdfium_calls.PDFIUM_LOCK`, as for any PDFium call.
"""

from __future__ import annotations

import ctypes

import pypdfium2.raw as pdfium_c

from docshelf.converters.pdf.layout import FIXED_PITCH_FLAG, is_bold_name, is_mono_name

#: PDFium's weight (from the font's stem width) at or above which a face is bold.
BOLD_WEIGHT = 600
#: Narrow and wide letters whose declared widths tell a monospaced face.
NARROW_LETTERS = "il"
WIDE_LETTERS = "mW"
#: Characters a Latin face does not have: what PDFium answers for a missing glyph.
ABSENT = "\u4e00\ue000"
#: The font size widths are asked at (thousandths of an em, as fonts declare them).
_EM = 1000.0


def face_of(
    textpage: pdfium_c.FPDF_TEXTPAGE, index: int, name: str, flags: int
) -> tuple[bool, bool]:
    """Whether the font of character ``index`` (named ``name``, descriptor ``flags``, as
    ``FPDFText_GetFontInfo`` gave them) is bold, and whether it is monospaced."""
    bold = is_bold_name(name) or pdfium_c.FPDFText_GetFontWeight(textpage, index) >= BOLD_WEIGHT
    mono = (
        bool(flags & FIXED_PITCH_FLAG)
        or is_mono_name(name)
        or _letters_advance_alike(textpage, index)
    )
    return bold, mono


def _letters_advance_alike(textpage: pdfium_c.FPDF_TEXTPAGE, index: int) -> bool:
    """Whether the character's font declares one width for narrow and wide letters.

    A subset font may lack some of the letters (a width of 0); at least one narrow
    and one wide letter must be there, else the font is not taken for monospaced.
    """
    text_object = pdfium_c.FPDFText_GetTextObject(textpage, index)
    font = pdfium_c.FPDFTextObj_GetFont(text_object) if text_object else None
    if not font:
        return False
    width = ctypes.c_float()

    def widths(letters: str) -> set[float]:
        found: set[float] = set()
        for letter in letters:
            measured = pdfium_c.FPDFFont_GetGlyphWidth(font, ord(letter), _EM, ctypes.byref(width))
            if measured and width.value > 0:
                found.add(round(width.value, 1))
        return found

    narrow, wide = widths(NARROW_LETTERS), widths(WIDE_LETTERS)
    return bool(narrow) and bool(wide) and len(narrow | wide) == 1 and not narrow & widths(ABSENT)
