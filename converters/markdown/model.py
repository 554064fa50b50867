"""Markdown as a document model, read from the markdown-it token stream.

One pass over the tokens yields everything the derived formats need: the
front matter, headings (the outline), sections, links, tables, code blocks and
the plain text (Markdown stripped of its syntax). Markdown, HTML, text and CSV
sources all go through Markdown, so this is where their plain-text and JSON
variants come from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from docshelf.converters.base import OutlineEntry
from docshelf.converters.html.text import html_to_text
from docshelf.converters.markdown.frontmatter import parse_front_matter
from docshelf.converters.textutil import collapse_whitespace, is_boilerplate

#: How many top-level blocks :attr:`MarkdownDocument.opening` keeps.
OPENING_BLOCKS = 64


@cache
def markdown_parser() -> MarkdownIt:
    """CommonMark with GFM tables and strikethrough, and ``---`` front matter.

    Raw HTML is recognised (``html=True``) so that it can be stripped to its
    text rather than shown as literal tags; renderers decide what to emit.
    """
    return (
        MarkdownIt("commonmark", {"html": True})
        .enable(["table", "strikethrough"])
        .use(front_matter_plugin)
    )


@dataclass(frozen=True, slots=True)
class Section:
    """The text under one heading, up to the next heading of any level.

    Text before the first heading is a section with ``heading=None``, level 0.
    """

    heading: str | None
    level: int
    text: str


@dataclass(frozen=True, slots=True)
class Link:
    text: str
    href: str


@dataclass(frozen=True, slots=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str | None = None


@dataclass(frozen=True, slots=True)
class CodeBlock:
    language: str | None
    code: str


@dataclass(frozen=True, slots=True)
class MarkdownDocument:
    """What one Markdown document contains, syntax removed."""

    front_matter: Mapping[str, str]
    headings: tuple[OutlineEntry, ...]
    sections: tuple[Section, ...]
    links: tuple[Link, ...]
    tables: tuple[Table, ...]
    code_blocks: tuple[CodeBlock, ...]
    text: str
    #: The first paragraph outside lists that is prose, not boilerplate
    #: (:func:`~converters.textutil.is_boilerplate`), whitespace collapsed.
    first_paragraph: str | None
    #: The tokens of the first :data:`OPENING_BLOCKS` top-level blocks: how the
    #: document presents itself (logo, name, badges, first prose), read for its
    #: title and description by :mod:`converters.markdown.converter`.
    opening: tuple[Token, ...] = field(default=(), compare=False, repr=False)

    @property
    def first_heading(self) -> str | None:
        return self.headings[0].title if self.headings else None


def parse_markdown(source: str) -> MarkdownDocument:
    """Read ``source`` into a :class:`MarkdownDocument`."""
    return _Reader().read(markdown_parser().parse(source))


@dataclass(frozen=True, slots=True)
class TableRow:
    """One row of a GFM table: whether it is the header, and each cell's inline tokens."""

    header: bool
    cells: tuple[Sequence[Token], ...]


def table_rows(tokens: Sequence[Token], index: int) -> tuple[list[TableRow], int]:
    """The rows of the table opening at ``tokens[index]``, and the index past its end.

    The one reading of markdown-it's table tokens: the Markdown model and the
    PDF renderer each make their own text of the cells.
    """
    rows: list[tuple[bool, list[Sequence[Token]]]] = []
    in_head = False
    while index < len(tokens) and tokens[index].type != "table_close":
        token = tokens[index]
        if token.type == "thead_open":
            in_head = True
        elif token.type == "thead_close":
            in_head = False
        elif token.type == "tr_open":
            rows.append((in_head, []))
        elif token.type == "inline" and rows:
            rows[-1][1].append(token.children or [])
        index += 1
    return [TableRow(header, tuple(cells)) for header, cells in rows], index + 1


def inline_text(children: Sequence[Token] | None) -> str:
    """The visible text of an inline token's children."""
    parts: list[str] = []
    for child in children or ():
        kind = child.type
        if kind in ("text", "text_special", "code_inline"):
            parts.append(child.content)
        elif kind in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif kind == "image":
            parts.append(inline_text(child.children) or child.content)
        elif kind == "html_inline" and child.content.lower().startswith("<br"):
            parts.append("\n")
    return "".join(parts)


@dataclass(slots=True)
class _Block:
    text: str
    compact: bool  # an item of a tight list: joined to its neighbours by one newline


@dataclass(slots=True)
class _ListState:
    ordered: bool
    tight: bool
    depth: int
    pending_marker: str | None = None


@dataclass(slots=True)
class _OpenSection:
    heading: str | None
    level: int
    blocks: list[_Block] = field(default_factory=list)


class _Reader:
    """Walks block tokens once; see :func:`parse_markdown`."""

    def __init__(self) -> None:
        self.front_matter: dict[str, str] = {}
        self.headings: list[OutlineEntry] = []
        self.sections: list[_OpenSection] = [_OpenSection(None, 0)]
        self.all_blocks: list[_Block] = []
        self.links: list[Link] = []
        self.tables: list[Table] = []
        self.code_blocks: list[CodeBlock] = []
        self.first_paragraph: str | None = None
        self.lists: list[_ListState] = []

    def read(self, tokens: list[Token]) -> MarkdownDocument:
        index = 0
        while index < len(tokens):
            index = self._block(tokens, index)
        sections = tuple(
            Section(s.heading, s.level, _join(s.blocks))
            for s in self.sections
            if s.heading is not None or s.blocks
        )
        return MarkdownDocument(
            front_matter=self.front_matter,
            headings=tuple(self.headings),
            sections=sections,
            links=tuple(self.links),
            tables=tuple(self.tables),
            code_blocks=tuple(self.code_blocks),
            text=_join(self.all_blocks),
            first_paragraph=self.first_paragraph,
            opening=_opening(tokens),
        )

    def _block(self, tokens: list[Token], index: int) -> int:
        """Handle the block starting at ``tokens[index]``; return the next index."""
        token = tokens[index]
        kind = token.type
        if kind == "front_matter":
            self.front_matter = parse_front_matter(token.content)
        elif kind == "heading_open":
            inline = tokens[index + 1]
            self._collect_links(inline.children)
            title = collapse_whitespace(inline_text(inline.children))
            level = int(token.tag[1])
            self.headings.append(OutlineEntry(title=title, level=level, page=None))
            self.sections.append(_OpenSection(title, level))
            self.all_blocks.append(_Block(title, compact=False))
            return index + 3
        elif kind == "paragraph_open":
            inline = tokens[index + 1]
            self._collect_links(inline.children)
            text = inline_text(inline.children).strip()
            if (
                text
                and self.first_paragraph is None
                and not self.lists
                and not is_boilerplate(text)
            ):
                self.first_paragraph = collapse_whitespace(text)
            self._add(text)
            return index + 3
        elif kind in ("bullet_list_open", "ordered_list_open"):
            self.lists.append(
                _ListState(
                    ordered=kind == "ordered_list_open",
                    tight=_is_tight(tokens, index),
                    depth=len(self.lists) + 1,
                )
            )
        elif kind in ("bullet_list_close", "ordered_list_close"):
            self.lists.pop()
        elif kind == "list_item_open" and self.lists:
            current = self.lists[-1]
            current.pending_marker = f"{token.info}{token.markup}" if current.ordered else "•"
        elif kind in ("fence", "code_block"):
            language = token.info.split()[0] if token.info.strip() else None
            code = token.content.rstrip("\n")
            self.code_blocks.append(CodeBlock(language=language, code=code))
            self._add(code)
        elif kind == "html_block":
            self._add(html_to_text(token.content))
        elif kind == "table_open":
            return self._table(tokens, index)
        return index + 1

    def _table(self, tokens: list[Token], index: int) -> int:
        rows, after = table_rows(tokens, index)
        header: list[str] = []
        body: list[list[str]] = []
        for row in rows:
            cells = []
            for cell in row.cells:
                self._collect_links(cell)
                cells.append(collapse_whitespace(inline_text(cell)))
            if row.header:
                header.extend(cells)
            else:
                body.append(cells)
        self.tables.append(Table(tuple(header), tuple(tuple(row) for row in body)))
        self._add("\n".join("\t".join(cells) for cells in [header, *body]))
        return after

    def _collect_links(self, children: Sequence[Token] | None) -> None:
        children = children or []
        for position, child in enumerate(children):
            if child.type != "link_open":
                continue
            depth = 0
            inner: list[Token] = []
            for follower in children[position + 1 :]:
                if follower.type == "link_open":
                    depth += 1
                elif follower.type == "link_close":
                    if depth == 0:
                        break
                    depth -= 1
                inner.append(follower)
            href = str(child.attrGet("href") or "")
            self.links.append(Link(text=collapse_whitespace(inline_text(inner)), href=href))

    def _add(self, text: str) -> None:
        if not text:
            return
        compact = False
        if self.lists:
            current = self.lists[-1]
            indent = "  " * (current.depth - 1)
            if current.pending_marker is not None:
                prefix = f"{indent}{current.pending_marker} "
                current.pending_marker = None
            else:
                prefix = f"{indent}  "
            text = "\n".join(
                prefix + line if i == 0 else f"{indent}  {line}"
                for i, line in enumerate(text.split("\n"))
            )
            compact = current.tight
        block = _Block(text, compact)
        self.all_blocks.append(block)
        self.sections[-1].blocks.append(block)


def _opening(tokens: list[Token]) -> tuple[Token, ...]:
    """The tokens of the first :data:`OPENING_BLOCKS` top-level blocks."""
    blocks = 0
    for index, token in enumerate(tokens):
        if token.level == 0 and token.nesting <= 0:
            blocks += 1
            if blocks == OPENING_BLOCKS:
                return tuple(tokens[: index + 1])
    return tuple(tokens)


def _is_tight(tokens: list[Token], index: int) -> bool:
    """A list is tight when markdown-it hid its paragraphs."""
    level = tokens[index].level
    for token in tokens[index + 1 :]:
        if token.level == level and token.nesting == -1:
            break
        if token.type == "paragraph_open" and token.level == level + 2:
            return token.hidden
    return True


def _join(blocks: Sequence[_Block]) -> str:
    parts: list[str] = []
    previous: _Block | None = None
    for block in blocks:
        if previous is not None:
            parts.append("\n" if previous.compact and block.compact else "\n\n")
        parts.append(block.text)
        previous = block
    return "".join(parts) + ("\n" if parts else "")
