"""reStructuredText, read by docutils into its document tree and written as Markdown.

docutils (public domain / BSD-2) parses with every door to the outside shut:
no ``include::``, no ``raw`` (nor ``csv-table``/``raw`` ``:file:``/``:url:``),
no configuration files (``/etc/docutils.conf``, ``~/.docutils``, the
``DOCUTILSCONFIG`` variable), no messages on stderr. A directive it disabled or
does not know (Sphinx's ``toctree``, ``:ref:``) leaves a ``system_message``
node, which is skipped; the text of a role it does not know is kept.

Title: the document title docutils promotes (or ``.. title::``). Description:
``.. meta:: :description:``, a docinfo ``:Description:`` or ``:Abstract:``,
else the first prose. Metadata: the docinfo fields (author, date, version...).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from docshelf.converters.base import ConversionResult, Source
from docshelf.converters.failures import conversion_failure, describe
from docshelf.converters.markup.common import (
    MAX_NESTING,
    admonition,
    join_blocks,
    list_item,
    markup_result,
    quote,
    read_markup,
    table,
    too_deep,
)
from docshelf.converters.textutil import (
    code_fence,
    code_span,
    collapse_whitespace,
    escape_markdown_inline,
    markdown_heading,
    markdown_link,
)

if TYPE_CHECKING:
    from docutils import nodes

RST_MIME_TYPES = frozenset({"text/x-rst", "text/prs.fallenstein.rst"})
RST_EXTENSIONS = frozenset({".rst", ".rest"})

#: docutils settings: nothing read but the source, nothing reported, never a halt.
SAFE_SETTINGS: dict[str, Any] = {
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "_disable_config": True,
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": False,
    "traceback": True,
    "input_encoding": "unicode",
    "syntax_highlight": "none",
    "embed_stylesheet": False,
}

#: Nodes that carry nothing for a reader (or must never pass through: raw).
_SKIPPED = frozenset(
    {
        *("system_message", "comment", "target", "substitution_definition", "raw"),
        *("pending", "meta", "decoration", "colspec", "problematic_message"),
    }
)
_ADMONITIONS = frozenset(
    {"attention", "caution", "danger", "error", "hint", "important", "note", "tip", "warning"}
)
#: What a role docutils does not know (``:ref:`Text <target>```) shows: its text.
_ROLE = re.compile(r"^(?::[\w.+:-]+:)?`(?P<body>.*?)`(?::[\w.+:-]+:)?_{0,2}$", re.DOTALL)
_ROLE_TARGET = re.compile(r"\s*<[^<>]*>$")


class RstConverter:
    """Converts reStructuredText with docutils."""

    name = "rst"
    version = "1"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in RST_MIME_TYPES or source.extension in RST_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        decoded = read_markup(source)
        doctree = _parse(decoded.text)
        writer = _Writer()
        markdown = writer.document(doctree)
        return markup_result(
            source,
            markdown,
            title=writer.title,
            description=writer.meta.get("description") or writer.abstract,
            metadata=writer.metadata,
            language=writer.meta.get("language"),
            data={"docinfo": writer.metadata} if writer.metadata else None,
            decoded=decoded,
        )


def _parse(text: str) -> nodes.document:
    from docutils.core import publish_doctree

    try:
        return publish_doctree(text, settings_overrides=dict(SAFE_SETTINGS))
    except RecursionError as exc:
        raise too_deep("reStructuredText blocks") from exc
    except Exception as exc:
        raise conversion_failure(exc, f"unreadable reStructuredText: {describe(exc)}") from exc


class _Writer:
    """Walks a docutils tree into Markdown, collecting the title and docinfo on the way."""

    def __init__(self) -> None:
        self.title: str | None = None
        self.abstract: str | None = None
        self.metadata: dict[str, str] = {}
        self.meta: dict[str, str] = {}

    def document(self, doctree: nodes.document) -> str:
        from docutils import nodes

        self.title = collapse_whitespace(str(doctree.get("title") or "")) or None
        for meta in doctree.findall(nodes.meta):
            name = str(meta.get("name") or "").lower()
            if name in ("description", "keywords") and meta.get("content"):
                self.meta[name] = str(meta["content"])
        if doctree.get("lang") or doctree.get("language"):
            self.meta["language"] = str(doctree.get("lang") or doctree.get("language"))
        for docinfo in doctree.findall(nodes.docinfo):
            self._docinfo(docinfo)
        offset = 1 if doctree.children and isinstance(doctree.children[0], nodes.title) else 0
        return join_blocks(self.blocks(doctree, offset, 0)) + "\n"

    def _docinfo(self, docinfo: nodes.docinfo) -> None:
        from docutils import nodes

        for field in docinfo.children:
            if isinstance(field, nodes.field):
                name = field.children[0].astext().strip().lower()
                value = field.children[1].astext()
            elif isinstance(field, nodes.authors):
                name, value = "author", "; ".join(child.astext() for child in field.children)
            else:
                name, value = field.tagname, field.astext()
            value = collapse_whitespace(value)
            if name and value:
                self.metadata.setdefault(name, value)
        if "description" in self.metadata:
            self.meta.setdefault("description", self.metadata["description"])

    def blocks(self, parent: nodes.Element, level: int, depth: int) -> list[str]:
        """The Markdown blocks of ``parent``'s children; ``level`` is the enclosing heading's."""
        if depth > MAX_NESTING:
            raise too_deep("reStructuredText blocks")
        out: list[str] = []
        for child in parent.children:
            out.extend(self.block(child, level, depth + 1))
        return out

    def block(self, node: nodes.Node, level: int, depth: int) -> list[str]:
        from docutils import nodes

        tag = node.tagname
        if tag in _SKIPPED or not isinstance(node, nodes.Element):
            return [escape_markdown_inline(node.astext())] if isinstance(node, nodes.Text) else []
        if isinstance(node, nodes.section):
            return self.blocks(node, level + 1, depth)
        if isinstance(node, nodes.title):
            if isinstance(node.parent, (nodes.section, nodes.document)):
                return [markdown_heading(min(max(level, 1), 6), self.inline(node), escaped=True)]
            return [f"**{self.inline(node)}**"]
        if isinstance(node, nodes.docinfo):
            return [
                "\n".join(
                    f"- **{k.capitalize()}:** {escape_markdown_inline(v)}"
                    for k, v in self.metadata.items()
                )
            ]
        if isinstance(node, nodes.subtitle):
            return [f"*{self.inline(node)}*"]
        if isinstance(node, (nodes.paragraph, nodes.rubric, nodes.caption)):
            text = self.inline(node)
            return [f"**{text}**" if isinstance(node, nodes.rubric) else text]
        if isinstance(node, nodes.bullet_list):
            return ["\n".join(list_item("-", self.blocks(i, level, depth)) for i in node.children)]
        if isinstance(node, nodes.enumerated_list):
            start = int(node.get("start", 1))
            return [
                "\n".join(
                    list_item(f"{start + n}.", self.blocks(item, level, depth))
                    for n, item in enumerate(node.children)
                )
            ]
        if isinstance(node, (nodes.definition_list, nodes.field_list, nodes.option_list)):
            return ["\n".join(self.labelled(item, level, depth) for item in node.children)]
        if isinstance(node, (nodes.literal_block, nodes.doctest_block)):
            classes = [str(c) for c in node.get("classes", ())]
            language = classes[1] if len(classes) > 1 and classes[0] == "code" else ""
            if isinstance(node, nodes.doctest_block):
                language = "pycon"
            return [code_fence(node.astext(), language).rstrip("\n")]
        if isinstance(node, nodes.line_block):
            return ["\\\n".join(self.inline(line) for line in node.findall(nodes.line))]
        if isinstance(node, nodes.block_quote):
            return [quote(self.blocks(node, level, depth))]
        if isinstance(node, nodes.attribution):
            return [f"— {self.inline(node)}"]
        if tag in _ADMONITIONS:
            return [admonition(tag, self.blocks(node, level, depth))]
        if isinstance(node, nodes.admonition):
            title = node.children[0] if node.children else None
            label = self.inline(title) if isinstance(title, nodes.title) else "Note"
            body = [c for c in node.children if not isinstance(c, nodes.title)]
            return [admonition(label, [b for c in body for b in self.block(c, level, depth)])]
        if isinstance(node, nodes.topic) and "contents" in node.get("classes", ()):
            return []
        if isinstance(node, nodes.topic) and "abstract" in node.get("classes", ()):
            body = [c for c in node.children if not isinstance(c, nodes.title)]
            self.abstract = self.abstract or collapse_whitespace(" ".join(c.astext() for c in body))
        if isinstance(node, nodes.table):
            return self.table(node)
        if isinstance(node, nodes.image):
            return [self.image(node)]
        if isinstance(node, nodes.transition):
            return ["---"]
        if isinstance(node, (nodes.footnote, nodes.citation)):
            label = node.children[0].astext() if node.children else ""
            body = self.blocks(node, level, depth)[1:]
            return [f"{escape_markdown_inline(f'[{label}]')} {join_blocks(body)}"]
        if isinstance(node, nodes.label):
            return [escape_markdown_inline(node.astext())]
        return self.blocks(node, level, depth)

    def labelled(self, item: nodes.Node, level: int, depth: int) -> str:
        """A definition, field or option list item as a bullet led by its term in bold."""
        from docutils import nodes

        if not isinstance(item, nodes.Element):
            return ""
        terms = [c for c in item.children if c.tagname in _TERMS]
        body = [c for c in item.children if c.tagname not in _TERMS]
        term = " ".join(self.inline(t) if isinstance(t, nodes.Element) else "" for t in terms)
        blocks = [b for c in body for b in self.block(c, level, depth + 1)]
        if blocks and not blocks[0].startswith(("```", ">", "|", "-", "#")):
            return list_item("-", [f"**{term}**: {blocks[0]}", *blocks[1:]])
        return list_item("-", [f"**{term}**", *blocks])

    def table(self, node: nodes.table) -> list[str]:
        from docutils import nodes

        caption = [f"**{self.inline(c)}**" for c in node.children if isinstance(c, nodes.title)]
        rows: list[list[str]] = []
        spans: dict[int, int] = {}  # column → rows still covered by a cell above
        for row in node.findall(nodes.row):
            cells: list[str] = []
            for entry in row.children:
                while spans.get(len(cells)):
                    spans[len(cells)] -= 1
                    cells.append("")
                column = len(cells)
                cells.append(" ".join(self.blocks(entry, 0, 1)) if entry.children else "")
                if int(entry.get("morerows", 0)):
                    spans[column] = int(entry["morerows"])
                cells.extend([""] * int(entry.get("morecols", 0)))
            while spans.get(len(cells)):
                spans[len(cells)] -= 1
                cells.append("")
            rows.append(cells)
        return [*caption, table(rows)]

    def image(self, node: nodes.Element) -> str:
        alt = escape_markdown_inline(str(node.get("alt") or ""))
        return f"!{markdown_link(alt, str(node.get('uri') or ''))}"

    def inline(self, node: nodes.Element, depth: int = 0) -> str:
        """The inline Markdown of ``node``'s children."""
        from docutils import nodes

        if depth > MAX_NESTING:
            raise too_deep("reStructuredText inline markup")
        out: list[str] = []
        for child in node.children:
            if isinstance(child, nodes.Text):
                out.append(escape_markdown_inline(child.astext().replace("\n", " ")))
            elif not isinstance(child, nodes.Element) or child.tagname in _SKIPPED:
                continue
            elif isinstance(child, nodes.emphasis | nodes.title_reference):
                out.append(_wrap("*", self.inline(child, depth + 1)))
            elif isinstance(child, nodes.strong):
                out.append(_wrap("**", self.inline(child, depth + 1)))
            elif isinstance(child, nodes.literal | nodes.math):
                out.append(code_span(child.astext()))
            elif isinstance(child, nodes.reference) and child.get("refuri"):
                text = self.inline(child, depth + 1) or escape_markdown_inline(child["refuri"])
                out.append(markdown_link(text, str(child["refuri"])))
            elif isinstance(child, nodes.image):
                out.append(self.image(child))
            elif isinstance(child, nodes.problematic):
                out.append(escape_markdown_inline(_role_text(child.astext())))
            elif isinstance(child, nodes.footnote_reference | nodes.citation_reference):
                out.append(escape_markdown_inline(f"[{child.astext()}]"))
            else:
                out.append(self.inline(child, depth + 1))
        return "".join(out).strip()


_TERMS = frozenset({"term", "classifier", "field_name", "option_group"})


def _wrap(marker: str, text: str) -> str:
    return f"{marker}{text}{marker}" if text else ""


def _role_text(source: str) -> str:
    """The words of a reference or role docutils could not resolve (``:ref:`Intro <i>```)."""
    match = _ROLE.match(source.strip())
    if not match:
        return source
    return _ROLE_TARGET.sub("", match["body"]) or match["body"]
