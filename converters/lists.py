"""Markdown lists from paragraphs that carry a nesting level.

Slides (a paragraph's outline level) and ODF documents (lists inside list
items) both say how deep an item sits, not how Markdown should indent it. Here
the depth becomes indentation that CommonMark nests as meant: a child sits at
its parent's content column, and a jump of several levels (level 0, then 3)
is taken one level at a time, since an item indented four columns past its
parent's content would be read as code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from docshelf.converters.textutil import escape_line_start


@dataclass(frozen=True, slots=True)
class ListItem:
    """One item: its depth (0 = top), whether it is numbered, and its inline Markdown.

    ``markdown`` is inline Markdown (escaped with :func:`escape_markdown_inline`) and
    may hold several lines (line breaks within the item); they stay in the item as
    hard breaks.
    """

    level: int
    ordered: bool
    markdown: str


def markdown_list(items: Sequence[ListItem]) -> str:
    """The items as one (nested) Markdown list, without a trailing newline."""
    lines: list[str] = []
    # The content column of the open item at each depth.
    columns: list[int] = []
    for item in items:
        depth = min(max(item.level, 0), len(columns))
        del columns[depth:]
        indent = columns[-1] if columns else 0
        marker = "1. " if item.ordered else "- "
        columns.append(indent + len(marker))
        text_lines = [escape_line_start(line.strip()) for line in item.markdown.split("\n")]
        text_lines = [line for line in text_lines if line] or [""]
        continuation = "\\\n" + " " * columns[-1]
        lines.append(" " * indent + marker + continuation.join(text_lines))
    return "\n".join(line.rstrip() for line in lines)
