"""Recover a PDF's structure as Markdown.

In order of preference: the PDF's outline (bookmarks) gives the headings,
placed on their pages, replacing the line that carries the same title when
one does; without an outline, lines set clearly larger than the body text are
headings (levels by size); without either, every page is a ``## Page N``
section. Page boundaries elsewhere are kept as ``<!-- page N -->`` comments,
invisible when rendered but there for citing pages.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from converters.base import OutlineEntry
from converters.pdflayout import Line, PageLayout
from converters.textutil import collapse_whitespace, escape_markdown_line, markdown_heading

#: A bold line this much larger than the body text is a heading...
HEADING_SIZE_RATIO = 1.15
#: ...and so is any line this much larger.
LARGE_SIZE_RATIO = 1.3
#: Longer lines are prose, whatever their size.
MAX_HEADING_CHARS = 120
#: When more of the lines than this look like headings, sizes mean nothing
#: (slides, posters) and the size heuristic is not used.
MAX_HEADING_SHARE = 0.4

_BULLETS = frozenset("•◦▪‣●○➢➤►")
_FOLIO = re.compile(r"^(?:\d{1,4}|[ivxlc]{1,7})$", re.IGNORECASE)
_SECTION_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*|[ivxlc]+|[a-z])[.)]?\s+")


@dataclass(frozen=True, slots=True)
class _Heading:
    title: str
    level: int


@dataclass(slots=True)
class _PagePlan:
    """Where headings go on one page.

    ``before`` maps a line index to the headings placed before that line;
    ``replaced`` holds the lines that became headings (not repeated as text).
    """

    before: dict[int, list[_Heading]] = field(default_factory=dict)
    replaced: set[int] = field(default_factory=set)

    def place(self, index: int, heading: _Heading) -> None:
        self.before.setdefault(index, []).append(heading)


@dataclass(frozen=True, slots=True)
class PdfMarkdown:
    markdown: str
    headings: tuple[OutlineEntry, ...]  # what became headings, with pages


def pdf_markdown(
    pages: Sequence[PageLayout], outline: Sequence[OutlineEntry], title: str | None
) -> PdfMarkdown:
    """Markdown for ``pages``; ``title`` (from metadata) opens it as ``#``."""
    placed_outline = [entry for entry in outline if entry.page is not None]
    if placed_outline:
        plans = _place_outline(pages, placed_outline)
        headings = tuple(placed_outline)
    else:
        plans = _size_headings(pages)
        headings = tuple(
            OutlineEntry(heading.title, heading.level, page.number)
            for page, plan in zip(pages, plans, strict=True)
            for index in sorted(plan.before)
            for heading in plan.before[index]
        )
    for page, plan in zip(pages, plans, strict=True):
        plan.replaced.update(_folios(page.lines))
    if not headings:
        return PdfMarkdown(_paged_markdown(pages, plans, title), ())
    show_title = bool(title) and _normalized(headings[0].title) != _normalized(title or "")
    offset = 1 if show_title else 0
    blocks: list[str] = [markdown_heading(1, title or "")] if show_title else []
    for page, plan in zip(pages, plans, strict=True):
        blocks.append(f"<!-- page {page.number} -->")
        blocks.extend(_page_blocks(page.lines, plan, offset))
    return PdfMarkdown(_join(blocks), headings)


def _paged_markdown(
    pages: Sequence[PageLayout], plans: Sequence[_PagePlan], title: str | None
) -> str:
    blocks: list[str] = [markdown_heading(1, title)] if title else []
    for page, plan in zip(pages, plans, strict=True):
        blocks.append(f"## Page {page.number}")
        blocks.extend(_page_blocks(page.lines, plan, 0))
    return _join(blocks)


def _folios(lines: Sequence[Line]) -> set[int]:
    """Indices of a bare page number opening or closing the page (running folios)."""
    found: set[int] = set()
    for index in {0, len(lines) - 1}:
        if 0 <= index < len(lines) and _FOLIO.match(lines[index].text):
            found.add(index)
    return found


def _join(blocks: Iterable[str]) -> str:
    return "\n\n".join(block for block in blocks if block) + "\n"


def _page_blocks(lines: Sequence[Line], plan: _PagePlan, offset: int) -> list[str]:
    """Markdown blocks of one page: paragraphs, bullet items, placed headings."""
    blocks: list[str] = []
    paragraph: list[str] = []
    in_item = False

    def flush() -> None:
        nonlocal in_item
        if paragraph:
            blocks.append("\n".join(paragraph))
            paragraph.clear()
        in_item = False

    for index in range(len(lines) + 1):
        for heading in plan.before.get(index, ()):
            flush()
            level = min(heading.level + offset, 6)
            blocks.append(markdown_heading(level, heading.title))
        if index == len(lines) or index in plan.replaced:
            continue
        line = lines[index]
        bullet = line.text[0] in _BULLETS
        if bullet or line.starts_paragraph:
            flush()
        if bullet:
            rest = line.text[1:].strip()
            paragraph.append(f"- {escape_markdown_line(rest)}" if rest else "-")
            in_item = True
        else:
            text = escape_markdown_line(line.text)
            paragraph.append(f"  {text}" if in_item else text)
    flush()
    return blocks


def _normalized(text: str) -> str:
    return _SECTION_NUMBER.sub("", collapse_whitespace(text).casefold()).rstrip(".:")


def _place_outline(pages: Sequence[PageLayout], outline: Sequence[OutlineEntry]) -> list[_PagePlan]:
    """Plans from the outline, one per page.

    An entry whose title matches a line on its page (section numbers aside)
    replaces that line; one that matches nothing goes after the previous
    heading placed on that page.
    """
    plans = [_PagePlan() for _ in pages]
    page_index = {page.number: i for i, page in enumerate(pages)}
    cursors = [0] * len(pages)
    for entry in outline:
        index = page_index.get(entry.page or 0)
        if index is None:
            continue
        plan, lines = plans[index], pages[index].lines
        wanted = _normalized(entry.title)
        position = cursors[index]
        for candidate in range(position, len(lines)):
            if candidate not in plan.replaced and _normalized(lines[candidate].text) == wanted:
                plan.replaced.add(candidate)
                position = candidate
                break
        plan.place(position, _Heading(entry.title, entry.level))
        cursors[index] = position
    return plans


def _size_headings(pages: Sequence[PageLayout]) -> list[_PagePlan]:
    """Plans from font sizes: lines clearly larger than the body text are headings."""
    plans = [_PagePlan() for _ in pages]
    weights: Counter[float] = Counter()
    total_lines = 0
    for page in pages:
        for line in page.lines:
            if line.size:
                weights[line.size] += len(line.text)
                total_lines += 1
    if not weights:
        return plans
    body = weights.most_common(1)[0][0]

    def is_heading(line: Line) -> bool:
        large = line.size >= body * LARGE_SIZE_RATIO
        return (
            (large or (line.bold and line.size >= body * HEADING_SIZE_RATIO))
            and len(line.text) <= MAX_HEADING_CHARS
            and any(char.isalpha() for char in line.text)
        )

    candidates = [line for page in pages for line in page.lines if is_heading(line)]
    if not candidates or len(candidates) > MAX_HEADING_SHARE * total_lines:
        return plans
    sizes = sorted({line.size for line in candidates}, reverse=True)
    level_of = {size: min(rank + 1, 6) for rank, size in enumerate(sizes)}
    for page, plan in zip(pages, plans, strict=True):
        lines = page.lines
        index = 0
        while index < len(lines):
            if not is_heading(lines[index]):
                index += 1
                continue
            start, size = index, lines[index].size
            parts = [lines[index].text]
            index += 1
            # A heading set on several lines continues without a paragraph gap.
            while (
                index < len(lines)
                and lines[index].size == size
                and not lines[index].starts_paragraph
                and is_heading(lines[index])
            ):
                parts.append(lines[index].text)
                index += 1
            plan.replaced.update(range(start, index))
            plan.place(start, _Heading(collapse_whitespace(" ".join(parts)), level_of[size]))
    return plans
