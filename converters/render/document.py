"""The fpdf2 document docshelf renders into: fonts loaded on first use, blocks that cannot fail.

Fonts are DejaVu Sans/Mono with fallbacks (see :mod:`converters.render.fonts`),
or fpdf2's core fonts where none is installed. Each block is written on its own
(:meth:`ShelfPDF.write_chunk`); a block fpdf2 cannot lay out (a table too wide,
say) is written again as plain text instead of failing the document. The
creation date is fixed, so that output depends on the input alone.

Right-to-left and complex scripts (Arabic, Hebrew, Indic...) are shaped with
HarfBuzz (fpdf2's text shaping, ``uharfbuzz``) and laid out with fpdf2's bidi
algorithm, block by block: only blocks holding such characters pay for it
(shaping costs several times plain layout). fpdf2 runs its bidi algorithm for
``write``/``cell``/``multi_cell`` but not for ``write_html`` paragraphs, whose
runs of one style are then merged and shaped as a single left-to-right run
(Arabic unjoined and reversed); :class:`ShelfPDF` routes those through it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fpdf import FPDF, FontFace, TextStyle
from fpdf.enums import TextDirection, WrapMode
from fpdf.fonts import TTFFont
from fpdf.html import HTML2FPDF
from fpdf.line_break import Fragment
from fpdf.text_region import TextColumns

from docshelf.converters.render import fontcache
from docshelf.converters.render.blocks import Chunk
from docshelf.converters.render.fonts import FontSet
from docshelf.converters.render.linebreak import PlainTextColumns
from docshelf.converters.render.measure import CharacterWidths, measured

#: Longest text fpdf2 splits into fragments at once when it must look for characters
#: its font lacks (see :meth:`ShelfPDF._plain_fragments`).
_FRAGMENT_PIECE = 2048

#: Rendered PDFs carry this creation date so that output is a function of input.
FIXED_CREATION_DATE = datetime(1970, 1, 1, tzinfo=UTC)

_SANS = "docshelf-sans"
_MONO = "docshelf-mono"
_CORE_SANS = "helvetica"
_CORE_MONO = "courier"
CORE_ENCODING = "cp1252"
_BASE_SIZE_PT = 10
_CODE_SIZE_PT = 8.5
_CODE_LINE_MM = 3.9


#: HTML elements that start a paragraph (or a table, whose cells find their own direction).
_BLOCK_TAGS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "pre", "table", "hr"})


class _ShelfHTML(HTML2FPDF):
    """fpdf2's HTML parser, telling the document each paragraph's ``dir``."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK_TAGS and isinstance(self.pdf, ShelfPDF):
            wanted = dict(attrs).get("dir")
            self.pdf.base_direction = (
                TextDirection.RTL
                if wanted == "rtl"
                else TextDirection.LTR
                if wanted == "ltr"
                else None
            )
        super().handle_starttag(tag, attrs)


class ShelfPDF(FPDF):
    """FPDF that loads font files on first use and degrades missing styles.

    A typical page needs two or three of the eight DejaVu faces, so they are
    added when ``set_font`` first asks; each file is parsed once per process
    (:mod:`converters.render.fontcache`), but embedding a face still costs ~20 ms.

    Blocks with right-to-left or complex-script text are written with text
    shaping on, and all their text goes through fpdf2's bidi algorithm (see the
    module's docstring); ``base_direction`` is the direction of the paragraph
    being written, when its HTML says (``dir``), else each piece's own.
    """

    HTML2FPDF_CLASS = _ShelfHTML

    def __init__(self, fonts: FontSet, fallbacks: Sequence[Path] = ()) -> None:
        super().__init__(format="A4")
        self.base_direction: TextDirection | None = None
        self._in_bidi = False
        self._character_widths: CharacterWidths = {}
        self.creation_date = FIXED_CREATION_DATE
        self._font_set = fonts
        self._html_options = _html_options(fonts)
        self.set_margins(left=18, top=16, right=18)
        self.set_auto_page_break(auto=True, margin=16)
        if fonts.is_core:
            self.core_fonts_encoding = CORE_ENCODING
            self.set_font(_CORE_SANS, size=_BASE_SIZE_PT)
            return
        self.set_font(_SANS, size=_BASE_SIZE_PT)
        fallback_families = [_SANS]
        for number, path in enumerate(fallbacks):
            family = f"docshelf-fallback{number}"
            fontcache.add_font(self, family, "", path)
            fallback_families.append(family)
        self.set_fallback_fonts(fallback_families, exact_match=False)

    def set_font(self, family: str | None = None, style: Any = "", size: float = 0) -> None:
        wanted = (family or self.font_family or "").lower()
        letters = style if isinstance(style, str) else style.style
        face = "".join(sorted(c for c in letters.upper() if c in "BI"))
        self._ensure_font(wanted, face)
        super().set_font(family, style, size)

    def _ensure_font(self, family: str, face: str) -> None:
        if family + face in self.fonts:
            return
        fonts = self._font_set
        source = {_SANS: fonts.sans, _MONO: fonts.mono or fonts.sans}.get(family)
        if source is not None:
            fontcache.add_font(self, family, face, source.path_for(face))

    def text_columns(self, *args: Any, **kwargs: Any) -> TextColumns:
        """fpdf2's text columns (``write_html`` lays out in them), breaking lines with
        :class:`~converters.render.linebreak.PlainLineBreak`."""
        columns = super().text_columns(*args, **kwargs)
        # The same object, as fpdf2 set it up; the subclass adds methods, no state.
        columns.__class__ = PlainTextColumns
        return columns

    def footer(self) -> None:
        self.set_y(-11)
        self.set_font(_CORE_SANS if self._font_set.is_core else _SANS, "", 8)
        self.set_text_color(128)
        self.cell(0, 5, str(self.page_no()), align="C")
        self.set_text_color(0)

    def write_chunk(self, chunk: Chunk) -> None:
        """Render one block; fall back to its plain text if fpdf2 cannot."""
        shaped = chunk.complex and not self._font_set.is_core
        if shaped:
            self.set_text_shaping(use_shaping_engine=True)
        try:
            if chunk.code:
                self._write_code(chunk.text)
            else:
                self.write_html(chunk.html, **self._html_options)
        except Exception:
            # fpdf2 raises many types on layouts it cannot do (a table wider than
            # the page, nested tags in a cell); the block's text still goes in.
            self._write_plain(chunk.text)
        finally:
            self.base_direction = None
            if shaped:
                self.set_text_shaping(use_shaping_engine=False)

    # fpdf2 splits text into fragments of one style and font in _preload_font_styles,
    # and, when shaping, first into runs of one direction in _preload_bidirectional_text
    # (which calls the former). write/cell/multi_cell call the latter; the Paragraph
    # that write_html fills calls the former: so both lead to the bidi algorithm here.

    def _preload_bidirectional_text(self, text: str, markdown: bool) -> Sequence[Fragment]:
        shaping = self.text_shaping
        if shaping is None or self._in_bidi:
            return super()._preload_bidirectional_text(text, markdown)
        self._in_bidi = True
        default = shaping["direction"]
        if self.base_direction is not None:
            shaping["direction"] = self.base_direction
        try:
            return super()._preload_bidirectional_text(text, markdown)
        finally:
            shaping["direction"] = default
            self._in_bidi = False

    def _preload_font_styles(
        self,
        text: str | None,
        markdown: bool,
        _initial_emphasis: tuple[bool, bool, bool, bool] | None = None,
    ) -> Sequence[Fragment]:
        if self.text_shaping is not None and not self._in_bidi and text:
            return self._preload_bidirectional_text(text, markdown)
        if not text or markdown or self.text_shaping is not None:
            fragments = super()._preload_font_styles(
                text, markdown, _initial_emphasis=_initial_emphasis
            )
        else:
            fragments = self._plain_fragments(text)
        return measured(fragments, self._character_widths)

    def _plain_fragments(self, text: str) -> list[Fragment]:
        """fpdf2's fragments of unshaped, non-Markdown ``text``, split in linear time.

        fpdf2 takes a fast path (one fragment) unless fallback fonts are set, which
        they always are here; then it walks the text a character at a time, slicing
        off the rest each time (quadratic in the text's length: seconds for a
        paragraph of a few hundred KB), to find characters the font lacks. Text the
        current font draws entirely gets the fast path; other text goes through in
        pieces of :data:`_FRAGMENT_PIECE` characters (line breaking joins adjacent
        fragments of one style, so where they are cut changes nothing on the page;
        only the page-count alias must stay whole).
        """
        font = self.current_font
        fallbacks = self._fallback_font_ids
        alias = self.str_alias_nb_pages
        if not fallbacks or (alias and alias in text):  # a cut must not split the alias
            return list(super()._preload_font_styles(text, False))
        if isinstance(font, TTFFont) and _draws_all(font, text):
            self._fallback_font_ids = []
            try:
                return list(super()._preload_font_styles(text, False))
            finally:
                self._fallback_font_ids = fallbacks
        fragments: list[Fragment] = []
        for start in range(0, len(text), _FRAGMENT_PIECE):
            piece = text[start : start + _FRAGMENT_PIECE]
            fragments.extend(super()._preload_font_styles(piece, False))
        return fragments

    def _write_code(self, code: str) -> None:
        """A shaded monospace block; long lines wrap at the character."""
        self.set_font(_CORE_MONO if self._font_set.is_core else _MONO, "", _CODE_SIZE_PT)
        self.set_fill_color(243, 243, 243)
        self.set_x(self.l_margin)
        self.ln(1.5)
        columns = max(1, int(self.epw / max(self.get_string_width("0"), 0.01)))
        for line in code.split("\n") or [""]:
            pieces = [line[i : i + columns] for i in range(0, len(line), columns)] or [""]
            for piece in pieces:
                self.cell(self.epw, _CODE_LINE_MM, piece, fill=True, new_x="LMARGIN", new_y="NEXT")
        self.ln(2.5)
        self.set_font(_CORE_SANS if self._font_set.is_core else _SANS, "", _BASE_SIZE_PT)

    def _write_plain(self, text: str) -> None:
        if not text.strip():
            return
        self.set_font(_CORE_SANS if self._font_set.is_core else _SANS, "", _BASE_SIZE_PT - 1)
        self.set_x(self.l_margin)
        self.multi_cell(0, 4.5, text, new_x="LMARGIN", new_y="NEXT", wrapmode=WrapMode.CHAR)
        self.ln(2)


def _draws_all(font: TTFFont, text: str) -> bool:
    """Whether ``font`` has a glyph for every character of ``text`` but newlines."""
    codes = set(map(ord, set(text)))
    codes.discard(ord("\n"))
    return codes <= font.cmap.keys()


def _html_options(fonts: FontSet) -> dict[str, Any]:
    sans = _CORE_SANS if fonts.is_core else _SANS
    mono = _CORE_MONO if fonts.is_core else _MONO
    heading = {1: 20, 2: 16, 3: 13, 4: 11.5, 5: 10.5, 6: 10}
    styles: dict[str, FontFace] = {
        f"h{level}": TextStyle(
            font_family=sans,
            font_style="B",
            font_size_pt=size,
            color="#1f1f1f",
            t_margin=4 if level > 2 else 6,
            b_margin=1.5,
        )
        for level, size in heading.items()
    }
    styles.update(
        {
            "code": FontFace(family=mono, size_pt=_BASE_SIZE_PT - 1),
            "pre": TextStyle(
                font_family=mono,
                font_size_pt=_CODE_SIZE_PT,
                t_margin=2,
                b_margin=2,
                fill_color=(243, 243, 243),
            ),
            "blockquote": TextStyle(color="#4a4a4a", l_margin=8, t_margin=2, b_margin=2),
            "a": FontFace(color="#1a4fb0", emphasis="UNDERLINE"),
            "li": TextStyle(l_margin=6, t_margin=1),
        }
    )
    return {
        "font_family": sans,
        "tag_styles": styles,
        "li_prefix_color": (40, 40, 40),
        "table_line_separators": True,
        "warn_on_tags_not_matching": False,
        "ul_bullet_char": "disc",
        "image_map": _refuse_image,
    }


def _refuse_image(src: str) -> str:
    """Never reached (no ``<img>`` is ever emitted); refuses loudly if it were."""
    raise PermissionError(f"documents may not make the renderer load {src!r}")
