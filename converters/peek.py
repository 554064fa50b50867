"""A document's title from its first bytes, for the catalog, without converting it.

The catalog lists a file the moment it sees it (DESIGN D11); a title found in
the first few kilobytes — an HTML ``<title>``; Markdown front matter, else
the first level-1 heading, else the name a README opens with, else its first
heading — is worth showing then, in the order the Markdown converter uses
(:func:`converters.markdown.converter.document_title`), so that the title does not
change when the formats are built. Anything more is the converter's job.
"""

from __future__ import annotations

import html
import re

from docshelf.converters.declared import declared_title
from docshelf.converters.markdown.converter import leading_name
from docshelf.converters.markdown.model import markdown_parser

_FRONT_MATTER_TITLE = re.compile(r"\A---\r?\n(?:.*\r?\n)*?title:\s*(.+?)\s*\r?\n", re.MULTILINE)
#: An ATX heading (its hashes, its text) or a setext ``===`` underline, in one scan.
_HEADING = re.compile(r"^ {0,3}(?:(#{1,6})[ \t]+(.+?)[ \t#]*|=+[ \t]*\r?)$", re.MULTILINE)
#: Only the first blocks of a document before its first heading are parsed for
#: its name (a logo, badges, the sentence naming it), and no more than this much.
_OPENING_BLOCKS = 4
_OPENING_CHARS = 2048
_BLANK_LINES = re.compile(r"\n[ \t]*\n")
#: What an opening that names its document has: an image, HTML, a link line, or
#: a paragraph starting in bold. Plain prose is not parsed (the catalog reads
#: thousands of notes a second; markdown-it takes ~0.3 ms for two kilobytes).
_MAY_NAME = re.compile(r"!\[|<|^[ \t]*(?:\*\*|__|\[)", re.MULTILINE)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_MAX_TITLE = 300


def _clean(title: str) -> str | None:
    """The title as the converter will have it: a placeholder ("untitled") is none."""
    return declared_title(" ".join(title.split()).strip("\"'")[:_MAX_TITLE])


def cheap_title(head: bytes, mime_type: str) -> str | None:
    """The title the first bytes of a Markdown or HTML document declare, if any."""
    if mime_type not in ("text/markdown", "text/html"):
        return None
    text = head.decode("utf-8", errors="replace")
    if mime_type == "text/html":
        match = _HTML_TITLE.search(text)
        return _clean(html.unescape(match.group(1))) if match else None
    front = _FRONT_MATTER_TITLE.match(text)
    if front:
        return _clean(front.group(1))
    level_one, first_heading = _headings(text)
    if level_one:
        return _clean(level_one)
    opening = text[: first_heading.start() if first_heading else _OPENING_CHARS][:_OPENING_CHARS]
    opening = "\n\n".join(_BLANK_LINES.split(opening, maxsplit=_OPENING_BLOCKS)[:_OPENING_BLOCKS])
    name = leading_name(markdown_parser().parse(opening)) if _MAY_NAME.search(opening) else None
    if name:
        return _clean(name)
    return _clean(first_heading.group(2)) if first_heading else None


def _headings(text: str) -> tuple[str | None, re.Match[str] | None]:
    """The first level-1 heading (``#`` or ``===``-underlined), and the first ATX heading."""
    first: re.Match[str] | None = None
    for match in _HEADING.finditer(text):
        hashes = match.group(1)
        if hashes is None:  # an underline: the line above is the heading, if there is one
            above = text[: match.start()].rstrip("\r\n").rpartition("\n")[2].strip()
            if above:
                return above, first
        elif hashes == "#":
            return match.group(2), first or match
        elif first is None:
            first = match
    return None, first
