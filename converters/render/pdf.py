"""Render Markdown to PDF: markdown-it tokens → a safe HTML subset → fpdf2.

fpdf2's ``write_html`` as-is is unsafe and brittle on real documents (DESIGN
§4): it opens ``<img src>`` as a local file or URL (a file-disclosure hole),
raises on links without a destination, and its core fonts cannot encode
non-Latin-1 text. So the HTML it gets is written here, from the token stream,
with only tags we chose: no images (their alt text instead), links only to
``http(s)``/``mailto``, raw HTML reduced to its text, table cells as plain
text. Fonts are DejaVu Sans/Mono with fallbacks (see :mod:`converters.render.fonts`);
characters no font has become U+FFFD (or ``?`` with the core fonts).

Each top-level block is rendered on its own; a block fpdf2 cannot lay out
(a table too wide, say) is rendered again as plain text instead of failing the
document. Output depends on the input alone: the creation date is fixed.

Right-to-left and complex scripts (Arabic, Hebrew, Indic...) are shaped with
HarfBuzz (fpdf2's text shaping, ``uharfbuzz``) and laid out with fpdf2's bidi
algorithm, block by block: only blocks holding such characters pay for it
(shaping costs several times plain layout). fpdf2 runs its bidi algorithm for
``write``/``cell``/``multi_cell`` but not for ``write_html`` paragraphs, whose
runs of one style are then merged and shaped as a single left-to-right run
(Arabic unjoined and reversed); :class:`_ShelfPDF` routes those through it too.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fpdf import FPDF, FontFace, TextStyle
from fpdf.enums import TextDirection, WrapMode
from fpdf.fonts import TTFFont
from fpdf.html import HTML2FPDF
from fpdf.line_break import Fragment
from fpdf.text_region import TextColumns
from markdown_it.token import Token

from docshelf.converters.html.text import html_to_text
from docshelf.converters.markdown.model import inline_text, markdown_parser, table_rows
from docshelf.converters.render import fontcache
from docshelf.converters.render.fonts import FontSet, coverage, fontconfig_fallbacks, system_fonts
from docshelf.converters.render.linebreak import PlainTextColumns
from docshelf.converters.render.measure import CharacterWidths, measured

#: Markdown longer than this is cut at a block boundary before rendering: the
#: renderer lays out 0.3-0.7 MB of text per second (bench render), and the full text
#: is in the other variants.
RENDER_LIMIT_CHARS = 500_000

#: Tables are cut after this many rows: fpdf2 lays out ~600 table rows per second.
MAX_TABLE_ROWS = 500

#: Longest text fpdf2 splits into fragments at once when it must look for characters
#: its font lacks (see :meth:`_ShelfPDF._plain_fragments`).
_FRAGMENT_PIECE = 2048

#: Rendered PDFs carry this creation date so that output is a function of input.
FIXED_CREATION_DATE = datetime(1970, 1, 1, tzinfo=UTC)

SAFE_LINK_SCHEMES = ("http://", "https://", "mailto:")

_SANS = "docshelf-sans"
_MONO = "docshelf-mono"
_CORE_SANS = "helvetica"
_CORE_MONO = "courier"
_CORE_ENCODING = "cp1252"
_BASE_SIZE_PT = 10
_CODE_SIZE_PT = 8.5
_CODE_LINE_MM = 3.9
_FENCE_LINE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})(.*)$")
#: Characters whose text needs shaping or bidi layout: Hebrew, Arabic, Syriac, Thaana,
#: N'Ko and their supplements; Indic, Thai, Lao, Tibetan, Myanmar, Khmer; Hebrew and
#: Arabic presentation forms; right-to-left scripts beyond the BMP.
_COMPLEX_TEXT = re.compile(
    "[\u0590-\u08ff\u0900-\u0dff\u0e00-\u0fff\u1000-\u109f\u1780-\u17ff"
    "\u200f\u202b\u202e\u2067\ufb1d-\ufdff\ufe70-\ufeff\U00010800-\U00010fff"
    "\U0001e800-\U0001efff]"
)
#: Unicode bidi classes of strong right-to-left characters.
_RTL_CLASSES = frozenset({"R", "AL"})
_TRUNCATION_NOTE = (
    "*[The PDF rendering stops here; the text and Markdown variants of this "
    "document hold all of it.]*"
)


@dataclass(frozen=True, slots=True)
class _Chunk:
    """One top-level block: its HTML, and its plain text should the HTML fail.

    Code blocks (``code=True``) skip HTML: drawn line by line in the monospace
    font they render ~25 times faster than through ``write_html``, which
    matters for long listings such as a pretty-printed JSON file.
    """

    html: str
    text: str
    code: bool = False

    @property
    def complex(self) -> bool:
        """Whether the block holds text that needs shaping or bidi layout."""
        return _COMPLEX_TEXT.search(self.text) is not None


def render_markdown_pdf(
    markdown: str,
    *,
    title: str | None = None,
    author: str | None = None,
    language: str | None = None,
    fonts: FontSet | None = None,
) -> bytes:
    """Render ``markdown`` as an A4 PDF.

    ``title`` becomes the PDF's /Title and, unless the document opens with a
    level-1 heading, a heading on the first page. ``fonts`` defaults to the
    fonts found on this machine (:func:`converters.render.fonts.system_fonts`).

    The first rendering in a process parses the faces nearly every Markdown
    document uses (:func:`_parse_common_faces`), whatever this one needs: the
    conversion workers render a line before they take tasks
    (``storage.conversion._warm_up``), and so that line pays for them, not the
    first document a reader asks for.
    """
    font_set = system_fonts() if fonts is None else fonts
    _parse_common_faces(font_set)
    source = truncate_for_rendering(markdown.expandtabs(4))
    glyphs = _Glyphs.for_text(font_set, f"{source}{title or ''}")
    source = source.translate(glyphs.table)
    tokens = markdown_parser().parse(source)
    chunks = _chunks(tokens)
    opening = next((token for token in tokens if token.type != "front_matter"), None)
    if title and not (opening and opening.type == "heading_open" and opening.tag == "h1"):
        clean_title = title.translate(glyphs.table)
        heading = f"<h1{_direction_attrs(clean_title)}>{_escape(clean_title)}</h1>"
        chunks.insert(0, _Chunk(heading, clean_title))

    pdf = _ShelfPDF(font_set, glyphs.fallbacks)
    if title:
        pdf.set_title(title)
    if author:
        pdf.set_author(author)
    if language:
        pdf.set_lang(language)
    pdf.set_creator("docshelf")
    pdf.add_page()
    options = _html_options(font_set)
    for chunk in chunks:
        pdf.write_chunk(chunk, options)
    return bytes(pdf.output())


def _parse_common_faces(fonts: FontSet) -> None:
    """Parse (once per process) the sans regular, bold and italic faces and the
    monospace regular one: text, headings and ``**``, ``*``, and code. Each is
    ~25 ms of CPU the first time, nothing after (:mod:`converters.render.fontcache`)."""
    if fonts.sans is None:
        return
    for style in ("", "B", "I"):
        fontcache.parse(fonts.sans.path_for(style))
    if fonts.mono is not None:
        fontcache.parse(fonts.mono.regular)


def truncate_for_rendering(markdown: str, limit: int = RENDER_LIMIT_CHARS) -> str:
    """``markdown`` cut to about ``limit`` characters at a block (else line) boundary,
    with a note saying where the full text is."""
    if len(markdown) <= limit:
        return markdown
    cut = markdown.rfind("\n\n", 0, limit)
    if cut < limit // 2:
        cut = markdown.rfind("\n", 0, limit)
    if cut <= 0:
        cut = limit
    head = markdown[:cut]
    fence = _open_fence(head)
    if fence:
        head += f"\n{fence}"
    return f"{head}\n\n{_TRUNCATION_NOTE}\n"


def _open_fence(markdown: str) -> str | None:
    """The fence of a code block left open at the end of ``markdown``, if any."""
    fence: str | None = None
    for line in markdown.split("\n"):
        match = _FENCE_LINE.match(line)
        if match is None:
            continue
        marker = match.group(1)
        if fence is None:
            fence = marker
        elif marker[0] == fence[0] and len(marker) >= len(fence) and not match.group(2).strip():
            fence = None
    return fence


@dataclass(frozen=True, slots=True)
class _Glyphs:
    """What a text needs from the fonts.

    ``table`` (for ``str.translate``) replaces characters no font can draw;
    ``fallbacks`` are the fallback fonts that draw something the main font lacks.
    """

    table: dict[int, str | None]
    fallbacks: tuple[Path, ...]

    @classmethod
    def for_text(cls, fonts: FontSet, text: str) -> _Glyphs:
        characters = set(text)
        if fonts.sans is None:
            table = {ord(c): _core_replacement(c) for c in characters if not _core_encodable(c)}
            return cls(table, ())
        missing = {ord(c) for c in characters if not c.isspace()} - coverage(fonts.sans.regular)
        fallbacks: list[Path] = []
        for path in fonts.fallbacks:
            if not missing:
                break  # a text the main font draws never loads a fallback (a CJK cmap is big)
            if missing & coverage(path):
                fallbacks.append(path)
                missing -= coverage(path)
        if missing:  # a font installed under a name the list does not know
            for path in fontconfig_fallbacks(fonts, missing):
                fallbacks.append(path)
                missing -= coverage(path)
        table = {
            code: (None if unicodedata.category(chr(code)) == "Cf" else "\ufffd")
            for code in missing
        }
        return cls(table, tuple(fallbacks))


def _core_encodable(char: str) -> bool:
    if char == "\n":
        return True
    try:
        char.encode(_CORE_ENCODING)
    except UnicodeEncodeError:
        return False
    return char.isprintable() or char == " "


def _core_replacement(char: str) -> str | None:
    return None if unicodedata.category(char) == "Cf" else "?"


#: HTML elements that start a paragraph (or a table, whose cells find their own direction).
_BLOCK_TAGS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "pre", "table", "hr"})


class _ShelfHTML(HTML2FPDF):
    """fpdf2's HTML parser, telling the document each paragraph's ``dir``."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK_TAGS and isinstance(self.pdf, _ShelfPDF):
            wanted = dict(attrs).get("dir")
            self.pdf.base_direction = (
                TextDirection.RTL
                if wanted == "rtl"
                else TextDirection.LTR
                if wanted == "ltr"
                else None
            )
        super().handle_starttag(tag, attrs)


class _ShelfPDF(FPDF):
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
        self.set_margins(left=18, top=16, right=18)
        self.set_auto_page_break(auto=True, margin=16)
        if fonts.is_core:
            self.core_fonts_encoding = _CORE_ENCODING
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

    def write_chunk(self, chunk: _Chunk, options: dict[str, Any]) -> None:
        """Render one block; fall back to its plain text if fpdf2 cannot."""
        shaped = chunk.complex and not self._font_set.is_core
        if shaped:
            self.set_text_shaping(use_shaping_engine=True)
        try:
            if chunk.code:
                self._write_code(chunk.text)
            else:
                self.write_html(chunk.html, **options)
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


def _chunks(tokens: Sequence[Token]) -> list[_Chunk]:
    """Top-level blocks as chunks; a heading shares its chunk with the next block.

    (fpdf2 keeps the space below a heading tight only within one call.)
    """
    chunks: list[_Chunk] = []
    index = 0
    while index < len(tokens):
        end = _block_end(tokens, index)
        if (
            tokens[index].type == "heading_open"
            and end < len(tokens)
            and tokens[end].type not in ("heading_open", "table_open", "fence", "code_block")
        ):
            end = _block_end(tokens, end)
        block = tokens[index:end]
        if block[0].type in ("fence", "code_block"):
            chunks.append(_Chunk("", block[0].content.rstrip(), code=True))
            index = end
            continue
        markup = _HtmlWriter().write(block)
        if markup.strip():
            chunks.append(_Chunk(markup, _block_text(block)))
        index = end
    return chunks


def _block_end(tokens: Sequence[Token], index: int) -> int:
    opening = tokens[index]
    if opening.nesting != 1:
        return index + 1
    for position in range(index + 1, len(tokens)):
        token = tokens[position]
        if token.level == opening.level and token.nesting == -1:
            return position + 1
    return len(tokens)


def _block_text(block: Sequence[Token]) -> str:
    parts: list[str] = []
    for token in block:
        if token.type == "inline":
            parts.append(inline_text(token.children))
        elif token.type in ("fence", "code_block"):
            parts.append(token.content.rstrip("\n"))
        elif token.type == "html_block":
            parts.append(html_to_text(token.content))
    return "\n".join(part for part in parts if part)


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


def _direction(text: str) -> str | None:
    """``"rtl"`` or ``"ltr"`` for a paragraph holding right-to-left text: the
    direction of its first strongly directional character (as in HTML's
    ``dir="auto"``); None for text without right-to-left characters."""
    if _COMPLEX_TEXT.search(text) is None:
        return None
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind in _RTL_CLASSES:
            return "rtl"
        if kind == "L":
            return "ltr"
    return None


def _direction_attrs(text: str, *, align: bool = True) -> str:
    """Attributes giving a paragraph its direction; right-to-left ones are right-aligned."""
    direction = _direction(text)
    if direction is None:
        return ""
    if direction == "rtl" and align:
        return ' dir="rtl" align="right"'
    return f' dir="{direction}"'


class _HtmlWriter:
    """Token stream → the HTML subset fpdf2 lays out reliably."""

    def __init__(self) -> None:
        self.out: list[str] = []

    def write(self, tokens: Sequence[Token]) -> str:
        index = 0
        while index < len(tokens):
            index = self._token(tokens, index)
        return "".join(self.out)

    def _token(self, tokens: Sequence[Token], index: int) -> int:
        token = tokens[index]
        kind = token.type
        out = self.out
        if kind == "heading_open":
            text = " ".join(inline_text(tokens[index + 1].children).split())
            attrs = _direction_attrs(text)
            out.append(f"<{token.tag}{attrs}>{_escape(text)}</{token.tag}>")
            return index + 3
        if kind == "paragraph_open":
            attrs = _direction_attrs(_next_inline_text(tokens, index))
            out.append("" if token.hidden else f"<p{attrs}>")
        elif kind == "paragraph_close":
            out.append("" if token.hidden else "</p>")
        elif kind == "inline":
            out.append(_inline_html(token.children or []))
        elif kind == "list_item_open":
            # fpdf2 aligns no list item but left: the item's text is still laid out
            # in its direction.
            attrs = _direction_attrs(_next_inline_text(tokens, index), align=False)
            out.append(f"<li{attrs}>")
        elif kind in ("bullet_list_open", "blockquote_open"):
            out.append(f"<{token.tag}>")
        elif kind in (
            "bullet_list_close",
            "ordered_list_close",
            "list_item_close",
            "blockquote_close",
        ):
            out.append(f"</{token.tag}>")
        elif kind == "ordered_list_open":
            start = token.attrGet("start")
            out.append(f'<ol start="{int(start)}">' if start is not None else "<ol>")
        elif kind in ("fence", "code_block"):
            out.append(f"<pre>{_escape(token.content.rstrip())}</pre>")
        elif kind == "hr":
            out.append("<hr>")
        elif kind == "html_block":
            text = html_to_text(token.content)
            if text:
                out.append(f"<p>{_escape(text)}</p>")
        elif kind == "table_open":
            return self._table(tokens, index)
        return index + 1

    def _table(self, tokens: Sequence[Token], index: int) -> int:
        table, after = table_rows(tokens, index)
        rows = [
            (row.header, [" ".join(inline_text(c).split()) for c in row.cells]) for row in table
        ]
        parts = ['<table border="1">']
        for is_head, cells in rows[: MAX_TABLE_ROWS + 1]:
            # fpdf2 justifies cell text by default, which spreads short lines.
            opening = "<th>" if is_head else '<td align="left">'
            closing = "</th>" if is_head else "</td>"
            parts.append(
                "<tr>" + "".join(f"{opening}{_escape(c)}{closing}" for c in cells) + "</tr>"
            )
        parts.append("</table>")
        if len(rows) > MAX_TABLE_ROWS + 1:
            left_out = len(rows) - MAX_TABLE_ROWS - 1
            parts.append(f"<p><i>[{left_out} more rows: see the other variants.]</i></p>")
        self.out.append("".join(parts))
        return after


def _next_inline_text(tokens: Sequence[Token], index: int) -> str:
    """The text of the first inline token after ``index`` (a paragraph's, an item's)."""
    for token in tokens[index + 1 :]:
        if token.type == "inline":
            return inline_text(token.children)
        if token.nesting == -1 and token.type in ("paragraph_close", "list_item_close"):
            break
    return ""


_INLINE_TAGS = {
    "strong_open": "<b>",
    "strong_close": "</b>",
    "em_open": "<i>",
    "em_close": "</i>",
    "s_open": "<s>",
    "s_close": "</s>",
}


def _inline_html(children: Sequence[Token]) -> str:
    out: list[str] = []
    open_links: list[bool] = []
    for child in children:
        kind = child.type
        if kind in ("text", "text_special"):
            out.append(_escape(child.content))
        elif kind == "code_inline":
            out.append(f"<code>{_escape(child.content)}</code>")
        elif kind == "softbreak":
            out.append(" ")
        elif kind == "hardbreak" or (
            kind == "html_inline" and child.content.lower().startswith("<br")
        ):
            out.append("<br>")
        elif kind in _INLINE_TAGS:
            out.append(_INLINE_TAGS[kind])
        elif kind == "link_open":
            href = str(child.attrGet("href") or "")
            safe = href.lower().startswith(SAFE_LINK_SCHEMES) and not open_links
            open_links.append(safe)
            if safe:
                out.append(f'<a href="{html.escape(href, quote=True)}">')
        elif kind == "link_close":
            if open_links and open_links.pop():
                out.append("</a>")
        elif kind == "image":
            alt = inline_text(child.children) or child.content
            out.append(f"<i>[{_escape(alt) if alt else 'image'}]</i>")
    return "".join(out)
