"""A document's title from its first bytes, for the catalog, without converting it.

The catalog lists a file the moment it sees it (DESIGN D11); a title found in
the first few kilobytes — Markdown front matter or first heading, an HTML
``<title>`` — is worth showing then. Anything more is the converter's job.
"""

from __future__ import annotations

import html
import re

_FRONT_MATTER_TITLE = re.compile(r"\A---\r?\n(?:.*\r?\n)*?title:\s*(.+?)\s*\r?\n", re.MULTILINE)
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_MAX_TITLE = 300


def _clean(title: str) -> str | None:
    title = " ".join(title.split()).strip("\"'")
    return title[:_MAX_TITLE] or None


def cheap_title(head: bytes, mime_type: str) -> str | None:
    """The title the first bytes of a Markdown or HTML document declare, if any."""
    if mime_type not in ("text/markdown", "text/html"):
        return None
    text = head.decode("utf-8", errors="replace")
    if mime_type == "text/html":
        match = _HTML_TITLE.search(text)
        return _clean(html.unescape(match.group(1))) if match else None
    match = _FRONT_MATTER_TITLE.match(text) or _ATX_HEADING.search(text)
    return _clean(match.group(1)) if match else None
