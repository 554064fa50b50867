"""Render Markdown to PDF: markdown-it tokens → a safe HTML subset → fpdf2.

The Markdown is cut to :data:`RENDER_LIMIT_CHARS`, its characters no font
draws replaced (U+FFFD, or ``?`` with the core fonts), its blocks written as
the HTML subset of :mod:`converters.render.blocks`, and each block laid out by
the document of :mod:`converters.render.document`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from docshelf.converters.markdown.model import markdown_parser
from docshelf.converters.render import fontcache
from docshelf.converters.render.blocks import chunks, heading_chunk
from docshelf.converters.render.document import CORE_ENCODING, ShelfPDF
from docshelf.converters.render.fonts import FontSet, coverage, fontconfig_fallbacks, system_fonts

#: Markdown longer than this is cut at a block boundary before rendering: the
#: renderer lays out 0.3-0.7 MB of text per second (bench render), and the full text
#: is in the other variants.
RENDER_LIMIT_CHARS = 500_000

_FENCE_LINE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})(.*)$")
_TRUNCATION_NOTE = (
    "*[The PDF rendering stops here; the text and Markdown variants of this "
    "document hold all of it.]*"
)


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
    blocks = chunks(tokens)
    opening = next((token for token in tokens if token.type != "front_matter"), None)
    if title and not (opening and opening.type == "heading_open" and opening.tag == "h1"):
        blocks.insert(0, heading_chunk(title.translate(glyphs.table)))

    pdf = ShelfPDF(font_set, glyphs.fallbacks)
    if title:
        pdf.set_title(title)
    if author:
        pdf.set_author(author)
    if language:
        pdf.set_lang(language)
    pdf.set_creator("docshelf")
    pdf.add_page()
    for block in blocks:
        pdf.write_chunk(block)
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
        char.encode(CORE_ENCODING)
    except UnicodeEncodeError:
        return False
    return char.isprintable() or char == " "


def _core_replacement(char: str) -> str | None:
    return None if unicodedata.category(char) == "Cf" else "?"
