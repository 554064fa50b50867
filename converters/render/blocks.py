"""Markdown tokens → blocks of the HTML subset fpdf2 is given to lay out.

fpdf2's ``write_html`` as-is is unsafe and brittle on real documents (DESIGN
§4): it opens ``<img src>`` as a local file or URL (a file-disclosure hole),
and raises on links without a destination. So the HTML it gets is written
here, from markdown-it's token stream, with only tags we chose: no images
(their alt text instead), links only to ``http(s)``/``mailto``, raw HTML
reduced to its text, table cells as plain text, and each paragraph's
direction (``dir``) when it holds right-to-left text.

Each top-level block is one :class:`Chunk`, with its plain text beside its
HTML: the renderer falls back to that text where fpdf2 cannot lay the HTML out.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it.token import Token

from docshelf.converters.html.text import html_to_text
from docshelf.converters.markdown.model import inline_text, table_rows

#: Tables are cut after this many rows: fpdf2 lays out ~600 table rows per second.
MAX_TABLE_ROWS = 500

SAFE_LINK_SCHEMES = ("http://", "https://", "mailto:")

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


@dataclass(frozen=True, slots=True)
class Chunk:
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


def heading_chunk(text: str) -> Chunk:
    """A level-1 heading of ``text`` (a title the document does not open with)."""
    return Chunk(f"<h1{_direction_attrs(text)}>{_escape(text)}</h1>", text)


def chunks(tokens: Sequence[Token]) -> list[Chunk]:
    """Top-level blocks as chunks; a heading shares its chunk with the next block.

    (fpdf2 keeps the space below a heading tight only within one call.)
    """
    chunks: list[Chunk] = []
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
            chunks.append(Chunk("", block[0].content.rstrip(), code=True))
            index = end
            continue
        markup = _HtmlWriter().write(block)
        if markup.strip():
            chunks.append(Chunk(markup, _block_text(block)))
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
