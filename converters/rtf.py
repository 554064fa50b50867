"""RTF documents, through striprtf (BSD-3-Clause) and a few markers of our own.

striprtf turns RTF into plain text: it decodes ``\\ansicpg``, per-font charsets
and ``\\uN`` escapes, drops pictures and other destinations, ends a paragraph
with a newline and a table cell with ``|``. It keeps no structure, so before it
runs, private-use characters (:data:`_HEADING`, :data:`_LINK_START`...) are
written into the RTF where structure is: after each ``\\outlinelevelN`` (Word
writes it on every heading paragraph, and LibreOffice too), and around each
HYPERLINK field with its address. After it, lines carrying them become headings
and links; bullet and number list lines (``·`` or ``1.`` and a tab) become list
items, and runs of cell rows become tables. The title, author and subject come
from ``{\\info ...}``, which striprtf skips; the title is else the first line.

striprtf reads about 0.45 µs a character; pictures (hex or ``\\bin``) are cut
out first, and what remains is capped at :data:`MAX_RTF_TEXT` characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from docshelf.converters.assemble import parsed_markdown_result
from docshelf.converters.base import ConversionError, ConversionResult, FailureReason, Source
from docshelf.converters.failures import conversion_failure, describe
from docshelf.converters.markdown.converter import markdown_facts
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.textutil import (
    check_size,
    clean_text,
    collapse_whitespace,
    escape_line_start,
    escape_markdown_inline,
    markdown_heading,
    markdown_link,
    markdown_table,
)

RTF_MIME_TYPES = frozenset({"text/rtf", "application/rtf", "text/richtext"})
RTF_EXTENSIONS = frozenset({".rtf"})
#: The file size refused outright, and the RTF left once pictures are cut (~4 s of striprtf).
MAX_RTF_BYTES = 64 * 1024 * 1024
MAX_RTF_TEXT = 8 * 1024 * 1024

_HEADING = 0xE100  # + outline level (0-8)
_LINK_START, _LINK_URL, _LINK_END = "\ue000", "\ue001", "\ue002"
_MARKERS = re.compile("[\ue000-\ue002\ue100-\ue108]")
_OUTLINE_LEVEL = re.compile(r"\\outlinelevel([0-8])(?![0-9])")
_FIELD = re.compile(r"\{\\field\b")
_HYPERLINK = re.compile(r'HYPERLINK\s+(?:\\\\?l\s+)?"([^"\\{}]{1,2048})"')
_PICTURE = re.compile(r"\{\\\*?\\?(?:pict|shppict|nonshppict|objdata)\b")
_BIN = re.compile(r"\\bin(\d{1,10}) ?")
_INFO = re.compile(r"\{\\info\b")
_INFO_FIELDS = ("title", "author", "subject", "keywords", "company")
_CREATED = re.compile(r"\\creatim\s*\\yr(\d{4})\s*\\mo(\d{1,2})\s*\\dy(\d{1,2})")
_CODEPAGE = re.compile(r"\\ansicpg(\d{1,5})")
_BULLET = re.compile("^[\u00b7\u2022\u25aa\u25cf\uf0b7\uf0a7\uf076\u2013o§-]\t+")
_NUMBER = re.compile(r"^\(?(\d{1,9})[.)]\t+")
_LINK = re.compile(f"{_LINK_START}([^{_LINK_URL}]*){_LINK_URL}([^{_LINK_END}]*){_LINK_END}")


@dataclass(frozen=True, slots=True)
class RtfDocument:
    markdown: str
    info: dict[str, str] = field(default_factory=dict)
    first_line: str | None = None


class RtfConverter:
    """Converts RTF documents."""

    name = "rtf"
    version = "1"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in RTF_MIME_TYPES or source.extension in RTF_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data, MAX_RTF_BYTES)
        if not source.data.lstrip()[:5] == b"{\\rtf":
            raise ConversionError(FailureReason.CORRUPT, "not an RTF document: no {\\rtf header")
        document = rtf_markdown(source.data.decode("latin-1"))
        model = parse_markdown(document.markdown)
        info = document.info
        facts = markdown_facts(
            model,
            title=info.get("title") or document.first_line,
            description=info.get("subject"),
            metadata=info,
        )
        return parsed_markdown_result(
            source, facts, document.markdown, model, pdf_author=info.get("author")
        )


def rtf_markdown(rtf: str) -> RtfDocument:
    """Markdown and ``\\info`` of an RTF document (``rtf``: its bytes decoded as latin-1)."""
    from striprtf.striprtf import rtf_to_text

    rtf = _without_pictures(rtf)
    if len(rtf) > MAX_RTF_TEXT:
        raise ConversionError(
            FailureReason.TOO_LARGE,
            f"{len(rtf)} characters of RTF without pictures is over the {MAX_RTF_TEXT} limit",
        )
    info = _info(rtf)
    marked = _mark_links(_OUTLINE_LEVEL.sub(_mark_heading, rtf.replace("\\pntext", "\\listtext")))
    try:
        text = rtf_to_text(marked, errors="replace")
    except Exception as exc:  # striprtf on malformed input (an unknown codec, a bad \u)
        raise conversion_failure(exc, f"unreadable RTF: {describe(exc)}") from exc
    markdown, first_line = _markdown(clean_text(text))
    return RtfDocument(markdown, info, first_line)


def _mark_heading(match: re.Match[str]) -> str:
    return f"{match[0]}{{\\uc0\\u{_HEADING + int(match[1])}}}"


def _mark_links(rtf: str) -> str:
    """Each HYPERLINK field's result between link markers, its address after it."""
    pieces: list[str] = []
    done = 0
    for found in _FIELD.finditer(rtf):
        if found.start() < done:
            continue
        end = group_end(rtf, found.start())
        link = _HYPERLINK.search(rtf, found.start(), end)
        if end < 0 or link is None:
            continue
        pieces += [
            rtf[done : found.start()],
            f"{{\\uc0\\u{ord(_LINK_START)}}}",
            # striprtf would append '("address")' to a HYPERLINK field itself
            rtf[found.start() : end].replace("HYPERLINK", "LINK"),
            f"{{\\uc0\\u{ord(_LINK_URL)} {link[1]}\\u{ord(_LINK_END)}}}",
        ]
        done = end
    return "".join(pieces) + rtf[done:]


def group_end(rtf: str, start: int) -> int:
    """The index just after the group opening at ``rtf[start]`` closes, or -1 if it never does."""
    depth = 0
    index = start
    while True:
        index = _next_brace(rtf, index)
        if index < 0:
            return -1
        depth += 1 if rtf[index] == "{" else -1
        index += 1
        if depth == 0:
            return index


_BRACE_OR_ESCAPE = re.compile(r"\\[\\{}]|[{}]")


def _next_brace(rtf: str, start: int) -> int:
    for found in _BRACE_OR_ESCAPE.finditer(rtf, start):
        if found[0] in "{}":
            return found.start()
    return -1


def _without_pictures(rtf: str) -> str:
    """``rtf`` without picture and object groups (hex data) and ``\\bin`` runs (raw bytes)."""
    pieces: list[str] = []
    done = 0
    position = 0
    while True:
        picture = _PICTURE.search(rtf, position)
        binary = _BIN.search(rtf, position)
        if picture is None and binary is None:
            break
        if binary is not None and (picture is None or binary.start() < picture.start()):
            pieces.append(rtf[done : binary.start()])
            done = position = binary.end() + int(binary[1])
            continue
        assert picture is not None
        end = group_end(rtf, picture.start())
        # A group with \bin inside is cut whole: its raw bytes may hold stray braces.
        inner_bin = _BIN.search(rtf, picture.start(), end if end > 0 else len(rtf))
        if inner_bin is not None:
            pieces.append(rtf[done : picture.start()])
            done = position = inner_bin.end() + int(inner_bin[1])
            continue
        pieces.append(rtf[done : picture.start()])
        done = position = end if end > 0 else len(rtf)
    return "".join(pieces) + rtf[done:]


def _info(rtf: str) -> dict[str, str]:
    """Title, author, subject, keywords, company and created date from ``{\\info ...}``."""
    from striprtf.striprtf import rtf_to_text

    found = _INFO.search(rtf)
    end = group_end(rtf, found.start()) if found else -1
    if found is None or end < 0:
        return {}
    group = rtf[found.start() : end]
    codepage = _CODEPAGE.search(rtf, 0, found.start())
    prefix = f"{{\\rtf1\\ansi\\ansicpg{codepage[1] if codepage else 1252} "
    info: dict[str, str] = {}
    for name in _INFO_FIELDS:
        start = re.search(rf"\{{\\{name}\b", group)
        stop = group_end(group, start.start()) if start else -1
        if start is None or stop < 0:
            continue
        try:
            value = rtf_to_text(prefix + group[start.end() : stop - 1] + "}", errors="replace")
        except Exception:  # a malformed info field is left out, not the document
            continue
        value = collapse_whitespace(clean_text(_MARKERS.sub("", value)))
        if value:
            info[name] = value
    created = _CREATED.search(group)
    if created:
        year, month, day = (int(part) for part in created.groups())
        info["created"] = f"{year:04d}-{month:02d}-{day:02d}"
    return info


def _markdown(text: str) -> tuple[str, str | None]:
    """Markdown from striprtf's marked text, and the document's first line of text."""
    blocks: list[str] = []
    rows: list[list[str]] = []
    first_line: str | None = None
    for raw in text.split("\n"):
        line = raw.strip()
        if line.endswith("|") and not _MARKERS.search(line[:1]):
            rows.append([_inline(cell) for cell in line[:-1].split("|")])
            continue
        if rows:
            blocks.append(markdown_table(rows[0], rows[1:], markdown_cells=True).rstrip())
            rows = []
        plain = collapse_whitespace(_MARKERS.sub("", _LINK.sub(r"\1", line)))
        if not plain:
            continue
        first_line = first_line or plain
        level = next((ord(c) - _HEADING for c in line if _HEADING <= ord(c) <= _HEADING + 8), None)
        if level is not None:
            blocks.append(markdown_heading(min(level + 1, 6), _inline(line), escaped=True))
        elif bullet := _BULLET.match(line):
            blocks.append("- " + _inline(line[bullet.end() :]))
        elif number := _NUMBER.match(line):
            blocks.append(f"{number[1]}. " + _inline(line[number.end() :]))
        else:
            blocks.append(escape_line_start(_inline(line)))
    if rows:
        blocks.append(markdown_table(rows[0], rows[1:], markdown_cells=True).rstrip())
    return _join(blocks), first_line


def _inline(text: str) -> str:
    """One line or cell of marked text as inline Markdown: escaped, links as links."""
    out: list[str] = []
    position = 0
    for link in _LINK.finditer(text):
        out.append(escape_markdown_inline(_MARKERS.sub("", text[position : link.start()])))
        label = escape_markdown_inline(collapse_whitespace(_MARKERS.sub("", link[1])))
        out.append(markdown_link(label or escape_markdown_inline(link[2]), link[2]))
        position = link.end()
    out.append(escape_markdown_inline(_MARKERS.sub("", text[position:])))
    return collapse_whitespace("".join(out))


def _join(blocks: list[str]) -> str:
    """Blocks separated by blank lines, except list items of one list."""
    out: list[str] = []
    for block in blocks:
        if out and _is_item(block) and _is_item(out[-1]):
            out[-1] += "\n" + block
        else:
            out.append(block)
    return "\n\n".join(out) + ("\n" if out else "")


def _is_item(block: str) -> bool:
    last = block.rsplit("\n", 1)[-1]
    return last.startswith("- ") or bool(re.match(r"\d{1,9}\. ", last))
