"""Text helpers shared by the converters: decoding, cleaning, Markdown escaping.

Documents arrive as bytes of unknown provenance; these functions turn them into
clean ``str`` and write text into Markdown without letting it turn into markup.
"""

from __future__ import annotations

import codecs
import re

from converters.base import ConversionError

#: Text sources larger than this are refused: rendering and indexing them would
#: take minutes and the result would be unusable in a model's context anyway.
MAX_TEXT_BYTES = 64 * 1024 * 1024

#: How long a description taken from the document's prose may be.
DESCRIPTION_LIMIT = 200

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# C0/C1 controls other than tab and newline carry no text and confuse Markdown,
# PDF fonts and terminals alike.
_CONTROL_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_NEWLINES = re.compile(r"\r\n?")
_WHITESPACE_RUN = re.compile(r"\s+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")

# Markdown: characters that open inline markup anywhere in a line.
_INLINE_SPECIALS = re.compile(r"([\\`*_\[\]<>|~])")
# "&amp;" and "&#65;" are entity references in Markdown; a bare "&" is not.
_ENTITY_LIKE = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
# Constructs that only mean something at the start of a line: ATX headings and
# bullet markers (followed by a space), setext underlines and thematic breaks
# (a line of only "=" or "-"), ordered-list markers ("1." or "1)" and a space).
_BLOCK_MARKER = re.compile(r"^(?=(?:#{1,6}|[+\-])(?:[ \t]|$))")
_UNDERLINE = re.compile(r"^(?=[=\-][=\-\s]*$)")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
_ORDERED_MARKER = re.compile(r"^(\d{1,9})([.)])(?=[ \t]|$)")


def check_size(data: bytes, limit: int = MAX_TEXT_BYTES) -> None:
    """Refuse sources too large to convert usefully."""
    if len(data) > limit:
        raise ConversionError(
            "too_large", f"{len(data)} bytes is over the {limit}-byte limit for text sources"
        )


def decode_text(data: bytes) -> str:
    """Decode a text file whose encoding nobody declared.

    A byte-order mark wins; then UTF-8; then Windows-1252 (what "latin-1" files
    written on Windows really are); then Latin-1, which decodes anything. Bytes
    with NULs and no BOM are binary, not text: ``ConversionError("unsupported")``.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return clean_text(data[len(bom) :].decode(encoding))
            except UnicodeDecodeError as exc:
                raise ConversionError(
                    "corrupt", f"invalid {encoding} after its byte-order mark"
                ) from exc
    if b"\x00" in data:
        raise ConversionError("unsupported", "binary data (NUL bytes) where text was expected")
    for encoding in ("utf-8", "cp1252"):
        try:
            return clean_text(data.decode(encoding))
        except UnicodeDecodeError:
            continue
    return clean_text(data.decode("latin-1"))


def clean_text(text: str) -> str:
    """Normalise newlines to ``\\n`` and drop control characters other than tab."""
    return _CONTROL_CHARS.sub("", _NEWLINES.sub("\n", text))


def collapse_whitespace(text: str) -> str:
    """One space for every run of whitespace, none at the ends."""
    return _WHITESPACE_RUN.sub(" ", text).strip()


def first_paragraph(text: str) -> str | None:
    """The first non-blank paragraph of plain text, whitespace collapsed."""
    for paragraph in _BLANK_LINE.split(text):
        collapsed = collapse_whitespace(paragraph)
        if collapsed:
            return collapsed
    return None


def summarize(text: str | None, limit: int = DESCRIPTION_LIMIT) -> str | None:
    """Shorten ``text`` to about ``limit`` characters at a word boundary."""
    if text is None:
        return None
    collapsed = collapse_whitespace(text)
    if not collapsed:
        return None
    if len(collapsed) <= limit:
        return collapsed
    cut = collapsed.rfind(" ", 0, limit)
    if cut < limit // 2:
        cut = limit
    return collapsed[:cut].rstrip() + "…"


def escape_markdown_inline(text: str) -> str:
    """Escape ``text`` so Markdown shows it literally inside a line.

    Covers emphasis, code, links, images, raw HTML, autolinks, table pipes,
    strikethrough and entity references; line-start constructs are handled by
    :func:`escape_markdown_line`.
    """
    return _ENTITY_LIKE.sub(r"\\&", _INLINE_SPECIALS.sub(r"\\\1", text))


def escape_markdown_line(line: str) -> str:
    """Escape one line of text, including block constructs that start a line.

    Leading whitespace is dropped (four spaces would make a code block);
    trailing whitespace too (two spaces would make a hard break).
    """
    return escape_line_start(escape_markdown_inline(line.strip()))


def escape_line_start(line: str) -> str:
    """Escape what would start a block (heading, list item, underline, rule).

    ``line`` must already be escaped inline (see :func:`escape_markdown_inline`).
    """
    escaped = _UNDERLINE.sub("\\\\", _BLOCK_MARKER.sub("\\\\", line))
    return _ORDERED_MARKER.sub(r"\1\\\2", escaped)


def text_to_markdown(text: str) -> str:
    """Write plain text as a Markdown document that renders back to the same text.

    Paragraphs (blank-line separated) stay paragraphs; line breaks inside a
    paragraph become hard breaks, so addresses, verse and lists keep their
    shape; every Markdown special is escaped.
    """
    paragraphs: list[str] = []
    for block in _BLANK_LINE.split(text):
        lines = [escape_markdown_line(line) for line in block.split("\n")]
        lines = [line for line in lines if line]
        if lines:
            paragraphs.append("\\\n".join(lines))
    return "\n\n".join(paragraphs) + ("\n" if paragraphs else "")


def markdown_heading(level: int, text: str, *, escaped: bool = False) -> str:
    """An ATX heading line for ``text`` (plain, or inline Markdown if ``escaped``).

    A trailing ``#`` is escaped: Markdown would read it as a closing sequence.
    """
    body = text if escaped else escape_markdown_inline(collapse_whitespace(text))
    if body.endswith("#"):
        body = body[:-1] + "\\#"
    return f"{'#' * level} {body}"


def code_fence(content: str, language: str = "") -> str:
    """A fenced code block longer than any backtick run inside ``content``."""
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * max(3, longest + 1)
    body = content if content.endswith("\n") else content + "\n"
    return f"{fence}{language}\n{body}{fence}\n"


def table_cell(text: str) -> str:
    """A Markdown table cell from plain text: one line, specials (``|`` too) escaped."""
    return escape_markdown_inline(collapse_whitespace(text))


def markdown_cell(markdown: str) -> str:
    """A Markdown table cell from inline Markdown: one line, bare ``|`` escaped."""
    return _UNESCAPED_PIPE.sub(r"\\|", collapse_whitespace(markdown))


def markdown_table(
    header: list[str], rows: list[list[str]], *, markdown_cells: bool = False
) -> str:
    """A GFM pipe table; rows are padded to the widest row.

    Cells are plain text unless ``markdown_cells`` says they are inline Markdown.
    """
    width = max([len(header), *(len(row) for row in rows)], default=0)
    if width == 0:
        return ""
    cell = markdown_cell if markdown_cells else table_cell

    def line(cells: list[str]) -> str:
        padded = [*cells, *([""] * (width - len(cells)))]
        return "| " + " | ".join(cell(text) for text in padded) + " |"

    out = [line(header), "|" + "|".join(["---"] * width) + "|"]
    out.extend(line(row) for row in rows)
    return "\n".join(out) + "\n"


def link_destination(href: str) -> str:
    """A link destination: in angle brackets when it holds spaces, brackets or parentheses."""
    href = href.strip().replace("\n", "").replace("\r", "")
    if any(char in href for char in " <>()"):
        return "<" + href.replace("<", "%3C").replace(">", "%3E") + ">"
    return href


def markdown_link(text: str, href: str) -> str:
    """An inline link; ``text`` is inline Markdown already."""
    return f"[{text}]({link_destination(href)})"
