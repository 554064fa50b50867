"""HTML → Markdown, with the standard library's tolerant parser.

The page is first built into a small element tree (closing what HTML closes
implicitly: ``<p>`` before a block, ``<li>``, ``<td>``, ``<tr>`` before their
siblings), then written as Markdown: headings, paragraphs, emphasis, links,
images (as references, never fetched), lists, code blocks, block quotes,
definition lists and tables. Invisible content (script, style, template,
``hidden``) is dropped, and so are the labels of controls (a ``<button>``'s
"move to sidebar", a ``<select>``'s options: interface, not text) and permalink
anchors (the ``¶`` Sphinx and texinfo put after headings and terms). A link
through a search engine's or mail filter's redirector is written to where it
leads (:mod:`converters.html.redirects`), a MathML formula with TeX is written
as LaTeX (:mod:`converters.html.mathml`). Tables used for page layout are written
as the blocks their cells hold; only data tables become Markdown tables.
Also collected: ``<title>``, ``<html lang>`` and ``<meta name=... content=...>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser

from docshelf.converters.html.chrome import drop_chrome, lead_paragraph
from docshelf.converters.html.mathml import math_markdown
from docshelf.converters.html.redirects import redirect_target
from docshelf.converters.html.text import INVISIBLE_ELEMENTS
from docshelf.converters.textutil import (
    code_fence,
    code_span,
    collapse_whitespace,
    escape_line_start,
    escape_markdown_inline,
    link_destination,
    markdown_heading,
    markdown_link,
    markdown_table,
)

VOID_ELEMENTS = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    ]
)
BLOCK_ELEMENTS = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "center",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "html",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "ul",
        "caption",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "td",
        "th",
    ]
)
HEADINGS = {f"h{level}": level for level in range(1, 7)}
#: Permalink anchors by class: Sphinx and MkDocs (``headerlink``), texinfo 7
#: (``copiable-anchor``, later ``copiable-link``), Docusaurus (``hash-link``).
PERMALINK_CLASSES = frozenset({"headerlink", "copiable-anchor", "copiable-link", "hash-link"})
#: The text of a permalink anchor that has none of those classes.
PERMALINK_GLYPHS = frozenset({"", "¶", "#", "§", "🔗", "⚓"})
#: What a cell of a data table cannot hold in Markdown (a GFM table cell is one
#: line of inline content): a table holding any of these is laid out, not data.
#: Paragraphs do not count: Word tables (mammoth) wrap every cell in ``<p>``.
LAYOUT_CONTENT = frozenset(
    [*HEADINGS, "table", "ul", "ol", "dl", "menu", "pre", "blockquote", "hr", "form", "fieldset"]
)
#: Controls: their labels are the page's interface, not its text.
CONTROLS = frozenset({"button", "select"})
#: Elements nested deeper than this are flattened into their ancestor: Markdown
#: cannot express it, and the writer recurses.
MAX_DEPTH = 150

_CLOSES_P = BLOCK_ELEMENTS - {
    "li",
    "dd",
    "dt",
    "td",
    "th",
    "tr",
    "tbody",
    "thead",
    "tfoot",
    "caption",
}
_HARD_BREAK = "\\\n"
_SAFE_IMAGE_SCHEMES = ("http://", "https://")
_SPACES = re.compile(r"[ \t\r\n\f]+")
_LIST_START = re.compile(r"^(?:-|\d{1,9}\.) ")


@dataclass(slots=True)
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element | str] = field(default_factory=list)

    def iter(self) -> Iterator[Element]:
        """This element and all elements below it, in document order."""
        stack: list[Element] = [self]
        while stack:
            element = stack.pop()
            yield element
            stack.extend(reversed([c for c in element.children if isinstance(c, Element)]))

    def text(self) -> str:
        """All text below this element, as written."""
        parts: list[str] = []
        for child in self.children:
            parts.append(child if isinstance(child, str) else child.text())
        return "".join(parts)

    @property
    def hidden(self) -> bool:
        if self.tag in INVISIBLE_ELEMENTS or self.tag in CONTROLS or "hidden" in self.attrs:
            return True
        if self.attrs.get("aria-hidden", "").lower() == "true":
            return True
        style = self.attrs.get("style", "").replace(" ", "").lower()
        return "display:none" in style or "visibility:hidden" in style


@dataclass(frozen=True, slots=True)
class HtmlDocument:
    markdown: str
    title: str | None
    first_h1: str | None
    language: str | None
    meta: dict[str, str]
    lead: str | None = None


def html_to_markdown(
    source: str,
    *,
    image_source: Callable[[str], str | None] | None = None,
    heading_offset: int = 0,
    web_page: bool = False,
) -> HtmlDocument:
    """Parse ``source`` and write it as Markdown.

    For HTML that is one part of a larger document (an e-book's chapter, a
    feed's entry): ``image_source`` maps each image's ``src`` to the reference
    to write (None: the alt text alone), and ``heading_offset`` moves every
    heading that many levels down (at most to ``######``), below the headings
    the larger document gives its parts. A ``web_page`` (a whole page, not a part)
    is written without its chrome, and its lead paragraph is found
    (:mod:`converters.html.chrome`).
    """
    builder = _TreeBuilder()
    builder.feed(source)
    builder.close()
    root = builder.root
    _drop_permalinks(root)
    title = _first_text(root, "title")
    if web_page:
        drop_chrome(root)
    first_h1 = _first_text(root, "h1")
    body = _join_blocks(_Writer(image_source, heading_offset).blocks(root))
    return HtmlDocument(
        markdown=body,
        title=title,
        first_h1=first_h1,
        language=builder.language,
        meta=builder.meta,
        lead=lead_paragraph(root) if web_page else None,
    )


def _first_text(root: Element, tag: str) -> str | None:
    for element in root.iter():
        if element.tag == tag:
            return collapse_whitespace(element.text()) or None
    return None


def _drop_permalinks(root: Element) -> None:
    """Remove permalink anchors: navigation chrome, not text (a ``¶`` in a heading)."""
    for element in root.iter():
        element.children = [
            child for child in element.children if isinstance(child, str) or not _permalink(child)
        ]


def _permalink(element: Element) -> bool:
    """A link to its own place in the page, shown as a glyph (or nothing)."""
    if element.tag != "a":
        return False
    if PERMALINK_CLASSES.intersection(element.attrs.get("class", "").split()):
        return True
    if not element.attrs.get("href", "").strip().startswith("#"):
        return False
    if any(child.tag == "img" for child in element.iter()):
        return False
    return element.text().strip(" \t\r\n\f\u00a0\u200b\ufe0f") in PERMALINK_GLYPHS


def _layout_table(table: Element) -> bool:
    """Whether ``table`` lays out a page rather than holding data.

    Layout tables (the norm before CSS; still what e.g. the libxslt pages use)
    put navigation in one cell and the whole page in another; written as a
    Markdown table that page became one unreadable row. A table is layout when
    it says so (``role="presentation"``/``"none"``, WAI-ARIA), has a single row,
    a single column without header cells, or a cell holding block structure
    (:data:`LAYOUT_CONTENT`).
    """
    if table.attrs.get("role", "").strip().lower() in ("presentation", "none"):
        return True
    rows = [
        [c for c in row.children if isinstance(c, Element) and c.tag in ("td", "th")]
        for row in _rows(table)
        if row.tag == "tr"
    ]
    rows = [row for row in rows if row]
    if len(rows) <= 1:
        return True
    cells = [cell for row in rows for cell in row]
    if max(len(row) for row in rows) == 1 and all(cell.tag == "td" for cell in cells):
        return True
    return any(
        element.tag in LAYOUT_CONTENT and not element.hidden
        for cell in cells
        for element in cell.iter()
        if element is not cell
    )


def _join_blocks(blocks: Sequence[str]) -> str:
    text = "\n\n".join(block for block in blocks if block.strip())
    return text + "\n" if text else ""


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack: list[Element] = [self.root]
        self.language: str | None = None
        self.meta: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "html" and attributes.get("lang", "").strip():
            self.language = attributes["lang"].strip()
        if tag == "meta":
            name = (attributes.get("name") or attributes.get("property") or "").strip().lower()
            content = collapse_whitespace(attributes.get("content", ""))
            if name and content:
                self.meta.setdefault(name, content)
        self._close_implied(tag)
        element = Element(tag, attributes)
        self.stack[-1].children.append(element)
        if tag not in VOID_ELEMENTS and len(self.stack) < MAX_DEPTH:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID_ELEMENTS and self.stack[-1].tag == tag and len(self.stack) > 1:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        children = self.stack[-1].children
        if children and isinstance(children[-1], str):
            children[-1] += data
        else:
            children.append(data)

    def _close_implied(self, tag: str) -> None:
        """Close the elements HTML ends implicitly when ``tag`` opens."""
        if tag in _CLOSES_P:
            self._close_within("p", stop={"button", "table", "li", "td", "th", "blockquote", "div"})
        if tag == "li":
            self._close_within("li", stop={"ul", "ol", "menu"})
        elif tag in ("dt", "dd"):
            self._close_within("dt", stop={"dl"})
            self._close_within("dd", stop={"dl"})
        elif tag in ("td", "th"):
            self._close_within("td", stop={"tr", "table"})
            self._close_within("th", stop={"tr", "table"})
        elif tag == "tr":
            self._close_within("tr", stop={"table", "thead", "tbody", "tfoot"})
        elif tag in ("thead", "tbody", "tfoot"):
            for section in ("thead", "tbody", "tfoot"):
                self._close_within(section, stop={"table"})

    def _close_within(self, tag: str, stop: set[str]) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            current = self.stack[depth].tag
            if current == tag:
                del self.stack[depth:]
                return
            if current in stop:
                return


class _Writer:
    """Element tree → Markdown blocks."""

    def __init__(
        self, image_source: Callable[[str], str | None] | None = None, heading_offset: int = 0
    ) -> None:
        self._image_source = image_source
        self._heading_offset = heading_offset
        # Emphasis already open around the current node: nested ``<b>`` in
        # ``<b>`` (or a bold term) is written once, not as ``**a **b** c**``.
        self._open: dict[str, int] = {"**": 0, "*": 0, "~~": 0}

    def blocks(self, element: Element) -> list[str]:
        """The children of ``element`` as blocks; inline runs become paragraphs."""
        out: list[str] = []
        run: list[Element | str] = []
        for child in element.children:
            if isinstance(child, Element) and child.hidden:
                continue
            if isinstance(child, Element) and child.tag in BLOCK_ELEMENTS:
                out.extend(self._paragraph(run))
                run = []
                out.extend(self.block(child))
            else:
                run.append(child)
        out.extend(self._paragraph(run))
        return out

    def block(self, element: Element) -> list[str]:
        tag = element.tag
        if tag in HEADINGS:
            text = self._one_line(element.children)
            level = min(HEADINGS[tag] + self._heading_offset, 6)
            return [markdown_heading(level, text, escaped=True)] if text else []
        if tag in ("ul", "ol", "menu"):
            return [self._list(element)]
        if tag == "pre":
            return [code_fence(element.text().strip("\n"), _code_language(element)).rstrip("\n")]
        if tag == "blockquote":
            inner = _join_blocks(self.blocks(element)).rstrip("\n")
            return (
                ["\n".join(f"> {line}" if line else ">" for line in inner.split("\n"))]
                if inner
                else []
            )
        if tag == "table":
            return self.blocks(element) if _layout_table(element) else self._table(element)
        if tag == "hr":
            return ["---"]
        if tag == "dt":
            # The term on a line of its own, in bold; its definitions (``dd``)
            # follow as blocks. CommonMark has no definition lists, and the
            # ``term\n: definition`` extension would read as one paragraph to
            # every CommonMark parser, ours included (converters.markdown.model).
            text = self._emphasised("**", lambda: self._one_line(element.children))
            return [f"**{text}**"] if text else []
        return self.blocks(element)

    def _paragraph(self, run: Sequence[Element | str]) -> list[str]:
        text = "".join(self._inline(node) for node in run)
        lines = [_SPACES.sub(" ", line).strip() for line in text.split(_HARD_BREAK)]
        while lines and not lines[-1]:
            lines.pop()
        while lines and not lines[0]:
            lines.pop(0)
        if not lines:
            return []
        return [_HARD_BREAK.join(escape_line_start(line) for line in lines)]

    def _one_line(self, nodes: Sequence[Element | str]) -> str:
        text = "".join(self._inline(node) for node in nodes).replace(_HARD_BREAK, " ")
        return _SPACES.sub(" ", text).strip()

    def _inline(self, node: Element | str) -> str:
        if isinstance(node, str):
            return escape_markdown_inline(_SPACES.sub(" ", node))
        if node.hidden:
            return ""
        tag = node.tag
        if tag == "br":
            return _HARD_BREAK
        if tag == "img":
            return _image(node, self._image_source)
        if tag == "math" and (formula := math_markdown(node)) is not None:
            return formula
        if tag in ("code", "kbd", "samp", "tt"):
            text = _SPACES.sub(" ", node.text())
            return code_span(text) if text.strip() else text
        marker = _EMPHASIS.get(tag)
        if marker is not None:
            inner = self._emphasised(marker, lambda: self._inline_children(node))
            return inner if self._open[marker] else _wrap(inner, marker)
        inner = self._inline_children(node)
        if tag == "a":
            return _link(inner, node.attrs.get("href", ""))
        if tag in BLOCK_ELEMENTS:
            return f" {inner} "
        return inner

    def _inline_children(self, node: Element) -> str:
        return "".join(self._inline(child) for child in node.children)

    def _emphasised(self, marker: str, write: Callable[[], str]) -> str:
        """``write()`` with ``marker`` counted as open (inner ones are then left out)."""
        self._open[marker] += 1
        try:
            return write()
        finally:
            self._open[marker] -= 1

    def _list(self, element: Element) -> str:
        ordered = element.tag == "ol"
        number = _start(element.attrs.get("start")) if ordered else 0
        items: list[str] = []
        for child in element.children:
            if isinstance(child, str):
                if child.strip():
                    items.append(
                        f"- {escape_line_start(escape_markdown_inline(collapse_whitespace(child)))}"
                    )
                continue
            if child.hidden:
                continue
            marker = f"{number}." if ordered else "-"
            number += 1
            body = _item_body(self.blocks(child) if child.tag == "li" else self.block(child))
            lines = body.split("\n") if body else [""]
            indent = " " * (len(marker) + 1)
            rest = [f"{indent}{line}" if line else "" for line in lines[1:]]
            items.append("\n".join([f"{marker} {lines[0]}".rstrip(), *rest]))
        return "\n".join(items)

    def _table(self, table: Element) -> list[str]:
        rows: list[list[str]] = []
        caption: str | None = None
        for row in _rows(table):
            if row.tag == "caption":
                caption = self._one_line(row.children)
                continue
            cells = [c for c in row.children if isinstance(c, Element) and c.tag in ("td", "th")]
            rows.append([self._one_line(cell.children) for cell in cells])
        rows = [row for row in rows if row]
        out = [f"**{caption}**"] if caption else []
        if rows:
            out.append(markdown_table(rows[0], rows[1:], markdown_cells=True).rstrip("\n"))
        return out


_EMPHASIS = {
    **dict.fromkeys(("strong", "b"), "**"),
    **dict.fromkeys(("em", "i", "cite", "dfn"), "*"),
    **dict.fromkeys(("del", "s", "strike"), "~~"),
}


def _item_body(blocks: Sequence[str]) -> str:
    """A list item's blocks; a single paragraph and its sub-lists stay tight."""
    blocks = [block for block in blocks if block.strip()]
    prose = [block for block in blocks if not _LIST_START.match(block)]
    return ("\n" if len(prose) <= 1 else "\n\n").join(blocks)


def _rows(table: Element) -> Iterator[Element]:
    """Caption and rows of a table, not descending into nested tables."""
    for child in table.children:
        if not isinstance(child, Element):
            continue
        if child.tag in ("tr", "caption"):
            yield child
        elif child.tag in ("thead", "tbody", "tfoot"):
            yield from (c for c in child.children if isinstance(c, Element) and c.tag == "tr")


def _start(value: str | None) -> int:
    try:
        return min(max(int((value or "1").strip()), 0), 999_999_999)
    except ValueError:
        return 1


def _code_language(pre: Element) -> str:
    for element in pre.iter():
        for name in element.attrs.get("class", "").split():
            if name.startswith(("language-", "lang-")):
                return name.split("-", 1)[1]
    return ""


def _wrap(inner: str, marker: str) -> str:
    core = inner.strip()
    if not core:
        return inner
    lead = " " if inner[:1].isspace() else ""
    trail = " " if inner[-1:].isspace() else ""
    return f"{lead}{marker}{core}{marker}{trail}"


def _link(inner: str, href: str) -> str:
    text = inner.strip()
    href = redirect_target(href.strip())
    if not href or href.lower().startswith("javascript:"):
        return inner
    if not text:
        text = escape_markdown_inline(href)
    return markdown_link(text, href)


def _image(element: Element, image_source: Callable[[str], str | None] | None) -> str:
    alt = escape_markdown_inline(collapse_whitespace(element.attrs.get("alt", "")))
    src = element.attrs.get("src", "").strip()
    if image_source is not None:
        src = image_source(src) or ""
    if src.lower().startswith(_SAFE_IMAGE_SCHEMES) or (src and ":" not in src.split("/")[0]):
        return f"![{alt}]({link_destination(src)})"
    return alt
