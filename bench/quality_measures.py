# ruff: noqa: RUF001, RUF002  (symbols and scripts are what this measures)
"""What the quality benchmark measures in one output, against the truth of its document.

Each measure is a share from 0 to 1, higher is better, except ``leaks``; "n/a" when
the file has no truth for it or the format cannot carry it). Texts are compared
after NFKC and case folding:

- ``headings``: truth headings found as headings. Truth: the PDF outline (pypdf)
  for corpus PDFs, the source headings for built documents. Markdown: ATX and
  setext headings; text: a line of its own; JSON: ``outline`` titles and section
  headings. A leading section number ("2.1") is ignored on both sides, so the
  printed heading "1 Foo" matches the bookmark "Foo". Counted as multisets.
- ``lines``: truth lines (a label, a caption, a page's only line) found as a line of
  their own, as a multiset: a label on each of five pages counts five times. A line
  is read without heading, list, emphasis, link or table syntax; in text and JSON,
  every line of the text.
- ``tables``: truth cells recovered in table rows. For each truth row, the best
  Markdown table row (JSON: table header or row) holding at most two cells more
  than it; the cells they share (as multisets) over all truth cells.
- ``pairs``: truth (label, value) pairs that can still be read as pairs: the label
  and the value in two cells of one table row, or one cell, or one line (or a
  stretch of a line between tabs, runs of spaces or ``|``) that is the label then
  the value, with a colon or not. "Insured name Gabriel Diaz Year 2022" run into one
  table cell keeps neither pair. Text and JSON: their lines.
- ``links``: distinct truth hrefs present as link targets (Markdown
  ``[text](href)``, ``<href>``, reference definitions; JSON ``links``). Truth:
  URI link annotations (pypdf) for corpus PDFs; a link drawn as two
  annotations counts once. Trailing ``/`` ignored.
- ``code``: truth code lines (non-blank, indentation kept relative to the
  block) found as lines of a fenced code block (JSON: ``code_blocks``).
- ``lists``: truth list items found as Markdown list items, nested exactly when
  the truth item is (built documents only).
- ``symbols``: non-ASCII characters that are not letters, marks, spaces or
  controls (punctuation, symbols, digits such as − ≤ ∑ “ ¹ ١), bullets and
  U+FFFD left out: sum of min(found, truth) over truth, per character. Truth:
  PDFium's page text (pypdfium2) for corpus PDFs, the visible source text for
  built documents.
- ``words``: ``\\w+`` words, the same way as a bag (line-end hyphens joined first
  on both sides): sum of min(found, truth) over truth.
- ``title``: 1 when the title (JSON ``title``; Markdown: the first level-1
  heading) is one of the expected ones, else 0 (built documents only).
- ``leaks``: occurrences of strings that must not appear (¶, U+FFFD,
  ``/Bullet``, a running head beyond its first), beyond those allowed. Lower is
  better; for corpus PDFs only U+FFFD.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

MEASURES = (
    "headings",
    "lines",
    "tables",
    "pairs",
    "links",
    "code",
    "lists",
    "symbols",
    "words",
    "title",
    "leaks",
)
LOWER_IS_BETTER = frozenset({"leaks"})


@dataclass(frozen=True)
class Truth:
    """What a faithful conversion of one document keeps (empty: not measured)."""

    headings: tuple[str, ...] = ()
    tables: tuple[tuple[tuple[str, ...], ...], ...] = ()  # tables of rows of cells
    links: tuple[str, ...] = ()  # hrefs
    code: tuple[str, ...] = ()  # code blocks as written
    lists: tuple[tuple[str, int], ...] = ()  # (item text, depth from 0)
    titles: tuple[str, ...] = ()  # acceptable titles (any one matches)
    text: str = ""  # the visible text: words and symbols are counted from it
    forbidden: tuple[tuple[str, int], ...] = ()  # (string, occurrences allowed)
    pairs: tuple[tuple[str, str], ...] = ()  # (label, value) read together
    lines: tuple[str, ...] = ()  # lines that stand on their own, each occurrence


BULLETS = frozenset("•◦▪▫‣∙●○■□➢►▸–-*")  # list markers, not content
_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"^\d+(\.\d+)*\.?\s+")
_HYPHEN_BREAK = re.compile(r"(\w)[-\u00ad\x02]\s*\n\s*(\w)")
_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_AUTOLINK = re.compile(r"<((?:https?|mailto|ftp):[^>\s]+)>")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
_INLINE_LINK = re.compile(r"!?\[((?:[^\]\\]|\\.)*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|`|\*|_(?=\w)|(?<=\w)_)")
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


# ------------------------------------------------------------------ normalizing


def fold(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def plain_inline(text: str) -> str:
    """Markdown inline syntax removed: links to their text, emphasis, escapes, ¶ anchors."""
    text = _INLINE_LINK.sub(r"\1", text)
    text = _MD_ESCAPE.sub(r"\1", _EMPHASIS.sub("", text))
    return text.replace("\N{PILCROW SIGN}", "")


def heading_key(text: str) -> str:
    """A heading compared without inline syntax and without its leading section number."""
    folded = fold(plain_inline(text))
    return _NUMBER.sub("", folded) or folded


def cell_key(text: str) -> str:
    return fold(plain_inline(text.replace("\\|", "|")))


def href_key(href: str) -> str:
    return href.strip().strip("<>").rstrip("/")


def words(text: str) -> Counter[str]:
    text = _HYPHEN_BREAK.sub(r"\1\2", unicodedata.normalize("NFKC", text))
    return Counter(_WORD.findall(text.casefold()))


def is_symbol(char: str) -> bool:
    if ord(char) < 128 or char in BULLETS or char == "\ufffd":
        return False
    return unicodedata.category(char)[0] in "PSN"


def symbols(text: str) -> Counter[str]:
    return Counter(c for c in unicodedata.normalize("NFC", text) if is_symbol(c))


def bag_recall(found: Counter[T], truth: Counter[T]) -> float | None:
    """sum(min(found, truth)) / sum(truth), per item; None without truth."""
    total = sum(truth.values())
    return sum((found & truth).values()) / total if total else None


# ----------------------------------------------------------------- what we read


@dataclass
class View:
    """What a measure looks at in one output: ``None`` fields cannot be measured."""

    text: str
    headings: list[str] | None = None
    table_rows: list[list[str]] | None = None
    links: list[str] | None = None
    code: list[str] | None = None
    list_items: list[tuple[str, int]] | None = None
    title: str | None = None
    has_title: bool = False
    lines: list[str] | None = None  # lines as a reader sees them, syntax removed


def markdown_view(markdown: str) -> View:
    """Headings, table rows, links, code blocks and list items of a Markdown text."""
    headings: list[str] = []
    rows: list[list[str]] = []
    code: list[str] = []
    items: list[tuple[str, int]] = []
    fence: str | None = None
    block: list[str] = []
    previous = ""
    for line in markdown.splitlines():
        if fence is not None:
            if line.strip().startswith(fence):
                code.append("\n".join(block))
                fence, block = None, []
            else:
                block.append(line)
            continue
        opened = _FENCE.match(line)
        if opened:
            fence, block = opened.group(1)[:3], []
            previous = ""
            continue
        atx = _ATX.match(line)
        setext = _SETEXT.match(line)
        stripped = line.strip()
        if atx:
            headings.append(atx.group(2))
        elif setext and previous.strip() and not previous.lstrip().startswith(("|", "-", "*")):
            headings.append(previous.strip())
        elif stripped.startswith("|") or (stripped.count("|") >= 2 and rows and previous):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", stripped.strip("|"))]
            if not all(re.fullmatch(r":?-{2,}:?", c) or not c for c in cells):
                rows.append(cells)
        else:
            item = _LIST_ITEM.match(line)
            if item:
                items.append((item.group(2), 1 if len(item.group(1).expandtabs(4)) >= 2 else 0))
        previous = line
    if fence is not None:
        code.append("\n".join(block))
    links = _LINK.findall(markdown) + _AUTOLINK.findall(markdown) + _REFERENCE.findall(markdown)
    first_h1 = next(
        (m.group(2) for m in map(_ATX.match, _unfenced(markdown)) if m and m.group(1) == "#"), None
    )
    return View(
        markdown, headings, rows, links, code, items, first_h1, True, markdown_lines(markdown)
    )


def markdown_lines(markdown: str) -> list[str]:
    """The lines outside code fences and tables, without heading, list, quote, emphasis
    and link syntax: what a reader sees as a line of its own."""
    out = []
    for line in _unfenced(markdown):
        stripped = line.strip()
        if not stripped or stripped.startswith("|") or _SETEXT.match(line):
            continue
        atx = _ATX.match(line)
        item = _LIST_ITEM.match(line)
        if atx:
            stripped = atx.group(2)
        elif item:
            stripped = item.group(2)
        out.append(plain_inline(stripped.lstrip("> ")).strip())
    return out


def _unfenced(markdown: str) -> Iterable[str]:
    fence: str | None = None
    for line in markdown.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
        elif opened:
            fence = opened.group(1)[:3]
        else:
            yield line


def text_view(text: str) -> View:
    """Plain text: headings are lines of their own; nothing else is structured."""
    lines = [line for line in text.splitlines() if line.strip()]
    return View(text, headings=lines, lines=lines)


def json_view(document: dict[str, Any]) -> View:
    """The docshelf.document/v1 JSON: outline, tables, links, code blocks, title."""
    parts: list[str] = []
    for page in document.get("pages") or []:
        parts.append(page.get("text", ""))
    for section in document.get("sections") or []:
        if section.get("heading"):
            parts.append(section["heading"])
        parts.append(section.get("text", ""))
    headings = [entry["title"] for entry in document.get("outline") or []]
    if not headings:
        headings = [s["heading"] for s in document.get("sections") or [] if s.get("heading")]
    rows: list[list[str]] = []
    for table in document.get("tables") or []:
        rows.extend([table.get("header") or [], *(table.get("rows") or [])])
    return View(
        "\n".join(parts),
        headings=headings,
        table_rows=rows,
        links=[link["href"] for link in document.get("links") or []],
        code=[block["code"] for block in document.get("code_blocks") or []],
        title=document.get("title"),
        has_title=True,
        lines=[line for line in "\n".join(parts).splitlines() if line.strip()],
    )


# --------------------------------------------------------------------- measures


def heading_recall(truth: Sequence[str], found: Sequence[str] | None) -> float | None:
    if not truth or found is None:
        return None
    return bag_recall(Counter(map(heading_key, found)), Counter(map(heading_key, truth)))


def table_recall(
    truth: Sequence[Sequence[Sequence[str]]], rows: Sequence[Sequence[str]] | None
) -> float | None:
    truth_rows = [[c for c in map(cell_key, row) if c] for table in truth for row in table]
    total = sum(len(row) for row in truth_rows)
    if not total or rows is None:
        return None
    candidates = [Counter(c for c in map(cell_key, row) if c) for row in rows]
    found = 0
    for row in truth_rows:
        wanted = Counter(row)
        fitting = [c for c in candidates if sum(c.values()) <= len(row) + 2]
        found += max((sum((wanted & c).values()) for c in fitting), default=0)
    return found / total


def line_recall(truth: Sequence[str], found: Sequence[str] | None) -> float | None:
    """Truth lines found as lines of their own, each occurrence counted."""
    if not truth or found is None:
        return None
    return bag_recall(Counter(map(cell_key, found)), Counter(map(cell_key, truth)))


_SEGMENT = re.compile(r"\t|\s{2,}|\s\|\s")


def pair_key(text: str) -> str:
    """A label, a value or a label-value stretch compared without colons and syntax."""
    return " ".join(cell_key(text).replace(":", " ").split())


def pair_recall(
    truth: Sequence[tuple[str, str]], rows: Sequence[Sequence[str]], lines: Sequence[str] | None
) -> float | None:
    """Truth pairs readable as pairs: two cells of a row, one cell, or one stretch of a
    line that is the label then the value (module docstring)."""
    if not truth or lines is None:
        return None
    stretches = {pair_key(part) for line in lines for part in _SEGMENT.split(line)}
    keyed_rows = [[pair_key(cell) for cell in row] for row in rows]
    stretches.update(cell for row in keyed_rows for cell in row)
    found = 0
    for label, value in truth:
        wanted, alone = (pair_key(label), pair_key(value)), pair_key(f"{label} {value}")
        in_row = any(wanted[0] in row and wanted[1] in row for row in keyed_rows)
        found += in_row or alone in stretches
    return found / len(truth)


def link_recall(truth: Sequence[str], found: Sequence[str] | None) -> float | None:
    """Share of the distinct targets kept: a link drawn as two annotations (one
    per rectangle of its text) is one link to a reader."""
    if not truth or found is None:
        return None
    wanted = set(map(href_key, truth))
    return len(wanted & set(map(href_key, found))) / len(wanted)


def _code_lines(block: str) -> list[str]:
    return [line.rstrip() for line in textwrap.dedent(block).splitlines() if line.strip()]


def code_recall(truth: Sequence[str], found: Sequence[str] | None) -> float | None:
    if not truth or found is None:
        return None
    have = Counter(line for block in found for line in _code_lines(block))
    return bag_recall(have, Counter(line for block in truth for line in _code_lines(block)))


def list_recall(
    truth: Sequence[tuple[str, int]], found: Sequence[tuple[str, int]] | None
) -> float | None:
    if not truth or found is None:
        return None
    have = Counter((cell_key(text), min(depth, 1)) for text, depth in found)
    return bag_recall(have, Counter((cell_key(text), min(depth, 1)) for text, depth in truth))


def title_match(titles: Sequence[str], view: View) -> float | None:
    if not titles or not view.has_title:
        return None
    return 1.0 if view.title and heading_key(view.title) in map(heading_key, titles) else 0.0


def leak_count(forbidden: Sequence[tuple[str, int]], text: str) -> float | None:
    if not forbidden:
        return None
    return float(sum(max(0, text.count(s) - allowed) for s, allowed in forbidden))


def measure(truth: Truth, view: View) -> dict[str, float | None]:
    """Every measure of one output against one truth."""
    return {
        "headings": heading_recall(truth.headings, view.headings),
        "lines": line_recall(truth.lines, view.lines),
        "tables": table_recall(truth.tables, view.table_rows),
        "pairs": pair_recall(truth.pairs, view.table_rows or [], view.lines),
        "links": link_recall(truth.links, view.links),
        "code": code_recall(truth.code, view.code),
        "lists": list_recall(truth.lists, view.list_items),
        "symbols": bag_recall(symbols(view.text), symbols(truth.text)) if truth.text else None,
        "words": bag_recall(words(view.text), words(truth.text)) if truth.text else None,
        "title": title_match(truth.titles, view),
        "leaks": leak_count(truth.forbidden, view.text),
    }
