"""Reading the project's Markdown pages as the tests need them: fenced blocks, sections."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.support.paths import REPO

#: The pages a user reads: the README and every page under docs/.
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    """A fenced code block: its info string (``sh``, ``json``, …), body and first line."""

    info: str
    body: str
    line: int


def fenced_blocks(text: str) -> list[Block]:
    return [
        Block(m.group(1).strip(), m.group(2), text.count("\n", 0, m.start()) + 2)
        for m in _FENCE.finditer(text)
    ]


def prose(text: str) -> str:
    """The text outside fenced blocks, which are blanked out: every offset and line number
    stays that of ``text``."""
    return _FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def section(text: str, title: str) -> str:
    """The section under the heading ``title`` (any level), down to the next heading of the
    same or a higher level; empty if there is none."""
    outside = prose(text)
    match = re.search(rf"^(#+) {re.escape(title)}[ \t]*$", outside, re.M)
    if not match:
        return ""
    level = len(match.group(1))
    following = re.compile(rf"^#{{1,{level}}} ", re.M)
    end = following.search(outside, match.end())
    return text[match.start() : end.start() if end else len(text)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", prose(text), re.M)}
