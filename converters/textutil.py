"""Text helpers shared by the converters: decoding, cleaning, Markdown escaping.

Documents arrive as bytes of unknown provenance; these functions turn them into
clean ``str`` and write text into Markdown without letting it turn into markup.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass

from docshelf.converters.base import ConversionError, FailureReason

#: Text sources larger than this are refused: rendering and indexing them would
#: take minutes and the result would be unusable in a model's context anyway.
MAX_TEXT_BYTES = 64 * 1024 * 1024

#: How long a description taken from the document's prose may be.
DESCRIPTION_LIMIT = 200
#: How many paragraphs :func:`summarize` reads looking for prose: a document
#: whose first 50 paragraphs are all boilerplate is described by none of them.
DESCRIPTION_PARAGRAPHS = 50

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

# Boilerplate (see is_boilerplate). Notices are recognised by how they start.
_NOTICE_PEEK = 300
_NOTICE = re.compile(
    r"""(?ix)
    (?: copyright \s* (?: © | \(c\) | \d{4} | by\b )
      | © | \(c\) \s* \d{4}
      | all \s rights \s reserved
      | spdx-license-identifier
      | licen[cs]ed \s (?: under | to ) \b
      | released \s under \b
      | distributed \s under \b
      | permission \s is \s hereby \s granted
      | redistribution \s and \s use \s in \s source
      | the \s above \s copyright \s notice
      | the \s software \s is \s provided
      | this \s (?: program | library | file ) \s is \s (?: free \s software | part \s of ) \b
      | stability: \s* \d
    )"""
)
_TOC_HEADING = re.compile(
    r"(?i)^(?:table of contents|contents|toc|on this page|in this (?:article|document))\s*:?$"
)
_TOC_START = re.compile(r"(?i)^(?:table of contents|contents)\s*:?\s+\d")
_TOC_ENTRY = re.compile(r"(?:\.\s?){4,}\s*\d+$|…\s*\d+$")
_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november"
    r"|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)"
)
_DATE = re.compile(
    rf"(?i)^(?:\d{{1,2}}\.?\s+)?{_MONTH}\.?\s+(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?\d{{4}}$"
)
_FORM_LABEL = re.compile(r"^[^.!?:]{1,40}:[\s_.…]*$")
_PLACEHOLDER = re.compile(
    r"""(?ix) ^ (?: (?: your | enter \s (?: your | an? | the ) | type \s (?: your | an? ) | insert )
                    (?: \s [\w-]+ ){1,3}
                  | click \s (?: or \s tap \s )? here \s to \s enter \s (?: text | a \s date )
                ) \.? $"""
)
# What carries no prose: HTML comments and tags, images, links (with their
# text: a line of links only is navigation), bare URLs.
# Images go first, so that a linked image (a badge) leaves an empty link.
_IMAGE = re.compile(r"!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])")
_MARKUP = re.compile(
    r"<!--.*?(?:-->|$)|</?[A-Za-z][^>]*>|\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])"
    r"|(?:https?://|www\.)\S+"
)


def check_size(data: bytes, limit: int = MAX_TEXT_BYTES) -> None:
    """Refuse sources too large to convert usefully."""
    if len(data) > limit:
        raise ConversionError(
            FailureReason.TOO_LARGE,
            f"{len(data)} bytes is over the {limit}-byte limit for text sources",
        )


@dataclass(frozen=True, slots=True)
class DecodedText:
    """A text file's text, the encoding it was read in, and how that encoding was known.

    ``how`` is ``"bom"``, ``"declared"`` (an XML declaration or an HTML ``<meta>``
    charset), ``"utf-8"`` (the bytes are valid UTF-8), ``"detected"``
    (charset-normalizer's statistical guess), or ``"unknown"``: nothing decodes
    the bytes cleanly, so they were read as Windows-1252 and each byte that means
    nothing there is kept visibly as ``\\xNN``, never dropped.
    """

    text: str
    encoding: str
    how: str

    @property
    def metadata(self) -> dict[str, str]:
        """What the JSON representation records about the encoding."""
        out = {"encoding": self.encoding}
        if self.how == "unknown":
            out["encoding_note"] = (
                "no encoding decodes this file cleanly; read as cp1252, undecodable bytes as \\xNN"
            )
        elif self.how == "detected":
            out["encoding_note"] = "detected from the bytes (no byte-order mark or declaration)"
        return out


def decode_text(data: bytes) -> str:
    """The text of a file whose encoding is not known up front (:func:`decode`)."""
    return decode(data).text


def decode(data: bytes) -> DecodedText:
    """Decode a text file whose encoding nobody told us.

    A byte-order mark wins; then an encoding the file declares in its first
    kilobyte (``<?xml encoding=...?>``, ``<meta charset=...>``), if it decodes the
    bytes; then UTF-8; then what charset-normalizer finds (Shift-JIS, GB18030,
    Windows-1251, BOM-less UTF-16 ...). Where Windows-1250/1252/1257 decode
    equally well, Western Windows-1252 is taken: short Latin text fits all three.
    Bytes with NULs that are not UTF-16/32 are binary, not text:
    ``ConversionError("unsupported")``.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return DecodedText(clean_text(data[len(bom) :].decode(encoding)), encoding, "bom")
            except UnicodeDecodeError as exc:
                raise ConversionError(
                    FailureReason.CORRUPT, f"invalid {encoding} after its byte-order mark"
                ) from exc
    declared = _declared_encoding(data[:1024])
    if declared:
        try:
            return DecodedText(clean_text(data.decode(declared)), declared, "declared")
        except UnicodeDecodeError:
            pass  # a declaration the bytes contradict: look at the bytes
    if b"\x00" in data:
        detected = _detected_encoding(data)
        if detected is None or not detected.startswith(("utf_16", "utf_32")):
            raise ConversionError(
                FailureReason.UNSUPPORTED, "binary data (NUL bytes) where text was expected"
            )
        return DecodedText(clean_text(data.decode(detected)), detected, "detected")
    try:
        return DecodedText(clean_text(data.decode("utf-8")), "utf-8", "utf-8")
    except UnicodeDecodeError:
        pass
    # A detector needs evidence: a few stray bytes in ASCII text fit any encoding.
    many = len(data) - len(data.translate(None, _HIGH_BYTES)) >= MIN_DETECTION_BYTES
    detected = _detected_encoding(data) if many else None
    if detected is not None:
        return DecodedText(clean_text(data.decode(detected)), detected, "detected")
    try:
        return DecodedText(clean_text(data.decode("cp1252")), "cp1252", "detected")
    except UnicodeDecodeError:
        text = data.decode("cp1252", "backslashreplace")
        return DecodedText(clean_text(text), "cp1252", "unknown")


_DECLARED = re.compile(
    rb"""<\?xml[^>]*?\sencoding\s*=\s*["']([\w.:-]+)["']"""
    rb"""|<meta[^>]+?charset\s*=\s*["']?([\w.:-]+)""",
    re.IGNORECASE,
)
#: Bytes outside ASCII needed before charset-normalizer's guess is taken over Windows-1252.
MIN_DETECTION_BYTES = 16
_HIGH_BYTES = bytes(range(0x80, 0x100))
#: Encodings that decode short Latin text equally well; the first is taken on a tie.
_LATIN_TIES = ("cp1252", "cp1250", "cp1257")


def _declared_encoding(head: bytes) -> str | None:
    """The encoding the head of an XML or HTML file declares, if Python knows it."""
    found = _DECLARED.search(head)
    if found is None:
        return None
    name = (found.group(1) or found.group(2)).decode("ascii", "replace")
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _detected_encoding(data: bytes) -> str | None:
    """charset-normalizer's encoding for ``data``, or None if none reads it as text."""
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data))
    if not matches:
        return None
    best = matches[0]
    tied = {
        m.encoding
        for m in matches
        if (m.chaos, m.coherence) == (best.chaos, best.coherence) and m.encoding in _LATIN_TIES
    }
    return next((name for name in _LATIN_TIES if name in tied), best.encoding)


def clean_text(text: str) -> str:
    """Normalise newlines to ``\\n`` and drop control characters other than tab."""
    return _CONTROL_CHARS.sub("", _NEWLINES.sub("\n", text))


def collapse_whitespace(text: str) -> str:
    """One space for every run of whitespace, none at the ends."""
    return _WHITESPACE_RUN.sub(" ", text).strip()


def summarize(text: str | None, limit: int = DESCRIPTION_LIMIT) -> str | None:
    """A description from ``text``: its first real paragraph, at most ``limit`` characters.

    Paragraphs are separated by blank lines; those :func:`is_boilerplate` calls
    boilerplate are skipped, so a copyright line, a stability banner or a row of
    badges never stands for the document. The paragraph found has its whitespace
    collapsed and, when longer than ``limit``, is cut at a word boundary with an
    ellipsis (the ellipsis counts towards ``limit``). None when the first
    :data:`DESCRIPTION_PARAGRAPHS` paragraphs hold no prose.
    """
    if text is None:
        return None
    for count, paragraph in enumerate(_paragraphs(text)):
        if count == DESCRIPTION_PARAGRAPHS:
            break
        if is_boilerplate(paragraph):
            continue
        summary = _shorten(collapse_whitespace(paragraph), limit)
        if not is_boilerplate(summary):  # a cut can leave only "((((…" or "Name:…"
            return summary
    return None


def is_boilerplate(paragraph: str) -> bool:
    """Whether ``paragraph`` is something other than prose a reader would quote.

    Documents open with things that say nothing about them; each rule names one
    kind, seen as the description of real documents:

    * a **notice** at its start: copyright ("Copyright © 2001 …", "© 2024",
      "All rights reserved"), licence ("SPDX-License-Identifier", "Licensed
      under …", "Permission is hereby granted …") or a stability banner
      ("Stability: 2 - Stable", as in the Node.js API docs) — the rest of such
      a paragraph is the notice's own text;
    * a **table of contents**: its heading ("Table of Contents", "Contents",
      "On this page"), alone or followed by numbered entries;
    * or every line is one of
      - a **form field**: a short label ending with ":" ("Gender:",
        "Signature: ____") or placeholder text ("Your Name", "Enter your
        email", "Click or tap here to enter text.");
      - a **table-of-contents entry** with dot leaders ("Usage ...... 7");
      - a **date** alone, as on a title page ("January 3, 2024");
      - **markup with nothing to read** once images, links, bare URLs, HTML
        tags and comments are taken out: badges, logos, link-only navigation
        lines, rules, page numbers.
    """
    head = collapse_whitespace(paragraph[:_NOTICE_PEEK])
    if not head or _NOTICE.match(head) or _TOC_START.match(head):
        return True
    return all(_is_boilerplate_line(line) for line in paragraph.split("\n") if line.strip())


def _is_boilerplate_line(line: str) -> bool:
    line = collapse_whitespace(line)
    return bool(
        _FORM_LABEL.match(line)
        or _PLACEHOLDER.match(line)
        or _TOC_HEADING.match(line)
        or _TOC_ENTRY.search(line)
        or _DATE.match(line)
        or not any(char.isalpha() for char in _MARKUP.sub(" ", _IMAGE.sub(" ", line)))
    )


def _paragraphs(text: str) -> Iterator[str]:
    """The blank-line separated paragraphs of ``text``, lazily."""
    start = 0
    for blank in _BLANK_LINE.finditer(text):
        yield text[start : blank.start()]
        start = blank.end()
    yield text[start:]


def _shorten(collapsed: str, limit: int) -> str:
    """``collapsed`` cut to at most ``limit`` characters, at a word if one is near."""
    if len(collapsed) <= limit:
        return collapsed
    cut = collapsed.rfind(" ", 0, limit)
    if cut < limit // 2:
        cut = limit - 1
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


def code_span(text: str) -> str:
    """Inline code for ``text`` (on one line), fenced by a backtick run longer than any inside,
    padded where it starts or ends with a backtick or is blank (CommonMark's code spans)."""
    text = " ".join(text.split("\n"))
    fence = "`" * (_longest_backticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def code_fence(content: str, language: str = "") -> str:
    """A fenced code block longer than any backtick run inside ``content``."""
    fence = "`" * max(3, _longest_backticks(content) + 1)
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
