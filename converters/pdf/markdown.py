"""Recover a PDF's structure as Markdown.

In order of preference: the PDF's outline (bookmarks) gives the headings,
placed on their pages, replacing the line that carries the same title when
one does (the heading keeps the text as printed, section number included);
without an outline, lines set clearly larger than the body text are headings
(levels by size); without either, every page is a ``## Page N`` section. Page
boundaries elsewhere are kept as ``<!-- page N -->`` comments, invisible when
rendered but there for citing pages.

Within a page: ruled tables and rows whose cells line up become Markdown
tables, runs of monospaced lines fenced code with their indentation, the text
under a link annotation a Markdown link. Running heads and feet (lines
repeated at the same place on most pages, page numbers aside) are kept once,
where they first appear, unless they are a page number or the title: they
interrupt the text they fall in. The plain-text pages keep them, as printed.

A document without a declared title is titled by the largest text on its
first page, where that stands out from the body text, as a person would.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from docshelf.converters.base import OutlineEntry
from docshelf.converters.markdown.model import CodeBlock, Link, Table
from docshelf.converters.pdf.layout import Line, PageLayout
from docshelf.converters.textutil import (
    code_fence,
    collapse_whitespace,
    escape_markdown_inline,
    escape_markdown_line,
    markdown_heading,
    markdown_link,
    markdown_table,
)

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
_DIGITS = re.compile(r"\d+")
_WORDS = re.compile(r"[^\W\d_]+")
#: Large words on a first page that head a part of the document, not name it.
_NOT_TITLES = frozenset(
    {
        "contents",
        "table of contents",
        "inhalt",
        "inhaltsverzeichnis",
        "table des matières",
        "sommaire",
        "índice",
        "indice",
        "abstract",
        "zusammenfassung",
        "résumé",
        "preface",
        "vorwort",
        "index",
    }
)
#: Lines this near a page's top or bottom may be running heads or feet...
RUNNING_LINES = 3
#: ...when found at the same height with the same text (numbers aside) on more
#: than this share of the pages, and on at least three.
RUNNING_SHARE = 0.5
#: Glyph width of a monospaced face, in font sizes, where the extractor did not
#: measure it (Courier: 0.6 em).
MONO_ADVANCE = 0.6
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
    title: str | None = None  # the declared title, else the first page's largest text
    links: tuple[Link, ...] = ()
    tables: tuple[Table, ...] = ()
    code_blocks: tuple[CodeBlock, ...] = ()


@dataclass(slots=True)
class _Found:
    """What the page blocks turned out to hold, for the JSON representation."""

    tables: list[Table] = field(default_factory=list)
    code_blocks: list[CodeBlock] = field(default_factory=list)

    def collected(self) -> tuple[tuple[Table, ...], tuple[CodeBlock, ...]]:
        return tuple(self.tables), tuple(self.code_blocks)


def pdf_markdown(
    pages: Sequence[PageLayout], outline: Sequence[OutlineEntry], title: str | None
) -> PdfMarkdown:
    """Markdown for ``pages``; ``title`` (from metadata) opens it as ``#``."""
    heads = _running_lines(pages)
    title_lines: set[int] = set()
    if not title and pages:
        title, title_lines = _largest_text(pages[0], set(heads[0]))
    running = _repeated(heads, title)
    if running:
        running[0] |= title_lines
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
    for page, plan, dropped in zip(pages, plans, running, strict=True):
        plan.replaced.update(_folios(page.lines))
        plan.replaced.update(dropped)
    found = _Found()
    links = tuple(dict.fromkeys(link for page in pages for link in page.links))
    if not headings:
        markdown = _paged_markdown(pages, plans, title, found)
        return PdfMarkdown(markdown, (), title, links, *found.collected())
    show_title = bool(title) and _normalized(headings[0].title) != _normalized(title or "")
    offset = 1 if show_title else 0
    blocks: list[str] = [markdown_heading(1, title or "")] if show_title else []
    for page, plan in zip(pages, plans, strict=True):
        blocks.append(f"<!-- page {page.number} -->")
        blocks.extend(_page_blocks(page, plan, offset, found))
    return PdfMarkdown(_join(blocks), headings, title, links, *found.collected())


def _paged_markdown(
    pages: Sequence[PageLayout], plans: Sequence[_PagePlan], title: str | None, found: _Found
) -> str:
    blocks: list[str] = [markdown_heading(1, title)] if title else []
    for page, plan in zip(pages, plans, strict=True):
        # A page without text gets no heading of its own (it would head nothing).
        blocks.append(f"## Page {page.number}" if page.lines else f"<!-- page {page.number} -->")
        blocks.extend(_page_blocks(page, plan, 0, found))
    return _join(blocks)


def _running_lines(pages: Sequence[PageLayout]) -> list[dict[int, str]]:
    """Per page, its running heads and feet: line index → text, numbers as ``#``."""
    keys: list[dict[tuple[str, int], int]] = []
    counts: Counter[tuple[str, int]] = Counter()
    for page in pages:
        lines = page.lines
        ends = {
            *range(min(RUNNING_LINES, len(lines))),
            *range(max(0, len(lines) - RUNNING_LINES), len(lines)),
        }
        here = {
            (_DIGITS.sub("#", collapse_whitespace(lines[index].text).casefold()), round(y)): index
            for index in sorted(ends)
            if (y := lines[index].y) is not None and lines[index].table is None
        }
        keys.append(here)
        counts.update(here.keys())
    least = max(3, int(RUNNING_SHARE * len(pages)) + 1)
    return [{index: key[0] for key, index in here.items() if counts[key] >= least} for here in keys]


def _is_folio(text: str) -> bool:
    """A page number, bare or in a few words ("Page # of #", "- # -", "Seite #")."""
    return "#" in text and len(_WORDS.findall(text)) <= 2


def _repeated(heads: Sequence[dict[int, str]], title: str | None) -> list[set[int]]:
    """The running lines to leave out: all but the first of each, so that no words
    are lost; every one that is a page number or the title, which say nothing new."""
    said = {collapse_whitespace(title).casefold()} if title else set()
    dropped: list[set[int]] = []
    for here in heads:
        dropped.append(set())
        for index, text in here.items():
            if _is_folio(text) or text in said:
                dropped[-1].add(index)
            else:
                said.add(text)
    return dropped


def _largest_text(page: PageLayout, skipped: set[int]) -> tuple[str | None, set[int]]:
    """The first page's largest text, when it stands out from the body, and its lines."""
    sizes: Counter[float] = Counter()
    for index, line in enumerate(page.lines):
        if index not in skipped and line.size and line.table is None:
            sizes[line.size] += len(line.text)
    if not sizes:
        return None, set()
    body = sizes.most_common(1)[0][0]
    largest = max(sizes)
    if largest < body * LARGE_SIZE_RATIO:
        return None, set()
    indices: list[int] = []
    for index, line in enumerate(page.lines):
        if index in skipped or line.size != largest:
            continue
        if indices and (index != indices[-1] + 1 or line.starts_paragraph):
            break  # the title is the first run of lines at that size
        indices.append(index)
    text = collapse_whitespace(" ".join(page.lines[index].text for index in indices))
    if (
        not any(char.isalpha() for char in text)
        or len(text) > MAX_HEADING_CHARS
        or text.casefold().rstrip(":") in _NOT_TITLES
    ):
        return None, set()
    return text, set(indices)


def _folios(lines: Sequence[Line]) -> set[int]:
    """Indices of a bare page number opening or closing the page (running folios)."""
    found: set[int] = set()
    for index in {0, len(lines) - 1}:
        if 0 <= index < len(lines) and _FOLIO.match(lines[index].text):
            found.add(index)
    return found


def _join(blocks: Iterable[str]) -> str:
    return "\n\n".join(block for block in blocks if block) + "\n"


def _page_blocks(page: PageLayout, plan: _PagePlan, offset: int, found: _Found) -> list[str]:
    """Markdown blocks of one page: paragraphs, bullet items, tables, code, placed headings."""
    lines = page.lines
    links = _Links(page.links)
    blocks: list[str] = []
    paragraph: list[str] = []
    code: list[Line] = []
    in_item = False

    def flush() -> None:
        nonlocal in_item
        if paragraph:
            blocks.append("\n".join(paragraph))
            paragraph.clear()
        if code:
            content = _code_text(code)
            blocks.append(code_fence(content).rstrip("\n"))
            found.code_blocks.append(CodeBlock(None, content))
            code.clear()
        in_item = False

    # Two or more monospaced lines in a row are code; a single one (a URL set
    # in typewriter type) is text.
    code_lines = {
        index
        for index, line in enumerate(lines)
        if line.mono
        and any(0 <= other < len(lines) and lines[other].mono for other in (index - 1, index + 1))
    }
    for index in range(len(lines) + 1):
        for heading in plan.before.get(index, ()):
            flush()
            level = min(heading.level + offset, 6)
            blocks.append(markdown_heading(level, heading.title))
        if index == len(lines) or index in plan.replaced:
            continue
        line = lines[index]
        if line.table is not None:
            flush()
            header, *rows = line.table
            found.tables.append(Table(header, tuple(rows)))
            blocks.append(markdown_table(list(header), [list(row) for row in rows]).rstrip("\n"))
            continue
        if index in code_lines:
            if paragraph:
                flush()
            code.append(line)
            continue
        bullet = line.text[0] in _BULLETS
        if bullet or line.starts_paragraph or code:
            flush()
        if bullet:
            rest = line.text[1:].strip()
            paragraph.append(f"- {links.applied(escape_markdown_line(rest))}" if rest else "-")
            in_item = True
        else:
            text = links.applied(escape_markdown_line(line.text))
            paragraph.append(f"  {text}" if in_item else text)
    flush()
    return blocks


def _code_text(lines: Sequence[Line]) -> str:
    """Monospaced lines as code: indented as set, blank lines where the gaps were."""
    edges = [line.x0 for line in lines if line.x0 is not None]
    left = min(edges, default=0.0)
    out: list[str] = []
    for line in lines:
        if out and line.starts_paragraph:
            out.append("")
        indent = 0
        advance = line.advance or MONO_ADVANCE * line.size
        if line.x0 is not None and advance > 0:
            indent = round((line.x0 - left) / advance)
        out.append(" " * indent + line.text)
    return "\n".join(out) + "\n"


class _Links:
    """A page's links, each made a Markdown link where its text next appears.

    Links are looked for in the order the page lists them, in the text not
    yet linked, as whole words: the text under a link's rectangle can be a
    fragment ("ill" of a URL broken across lines), which must not link the
    middle of another word.
    """

    def __init__(self, links: Sequence[Link]) -> None:
        self._pending = [link for link in dict.fromkeys(links) if link.text.strip()]

    def applied(self, escaped_line: str) -> str:
        if not self._pending:
            return escaped_line
        pieces: list[tuple[str, bool]] = [(escaped_line, False)]  # (markdown, linked)
        for link in list(self._pending):
            text = escape_markdown_inline(link.text)
            for number, (piece, linked) in enumerate(pieces):
                at = -1 if linked else _word_at(piece, text)
                if at >= 0:
                    pieces[number : number + 1] = [
                        (piece[:at], False),
                        (markdown_link(text, link.href), True),
                        (piece[at + len(text) :], False),
                    ]
                    self._pending.remove(link)
                    break
        return "".join(piece for piece, _ in pieces)


def _word_at(text: str, word: str) -> int:
    """Where ``word`` first occurs in ``text`` not inside a longer word, else -1."""
    at = text.find(word)
    while at >= 0:
        before = text[at - 1 : at]
        after = text[at + len(word) : at + len(word) + 1]
        if not (before.isalnum() and word[:1].isalnum()) and not (
            after.isalnum() and word[-1:].isalnum()
        ):
            return at
        at = text.find(word, at + 1)
    return -1


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
        title = entry.title
        for candidate in range(position, len(lines)):
            if candidate not in plan.replaced and _normalized(lines[candidate].text) == wanted:
                plan.replaced.add(candidate)
                position = candidate
                title = lines[candidate].text  # as printed: "2.1 ASN.1 syntax"
                break
        plan.place(position, _Heading(title, entry.level))
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
