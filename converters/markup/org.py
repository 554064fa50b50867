"""Org mode: orgparse splits the outline, a small block pass writes each body as Markdown.

orgparse (BSD-2) reads headings with their TODO keyword, tags, planning
(SCHEDULED/DEADLINE) and property drawers; bodies are taken raw (its "plain"
body drops link targets) and read here: lists (nested by indentation, ``term ::``
items), ``#+BEGIN_SRC lang`` / EXAMPLE / QUOTE / VERSE blocks, ``: `` fixed-width
lines, tables, ``[[url][text]]`` links, ``*bold*``, ``/italic/``, ``=code=``,
``~code~``, ``+strike+``. Export blocks (raw HTML/LaTeX) and comments are dropped.

Title: ``#+TITLE``, else the first heading. Description: ``#+DESCRIPTION``, else
the first prose. Metadata: ``#+AUTHOR``, ``#+DATE``, ``#+EMAIL``, ``#+KEYWORDS``.
The JSON ``data`` lists each heading's TODO state, own tags, planning and properties.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from docshelf.converters.base import ConversionResult, Source
from docshelf.converters.failures import conversion_failure, describe
from docshelf.converters.markup.common import (
    MAX_NESTING,
    join_blocks,
    list_item,
    markup_result,
    quote,
    read_markup,
    scan_inline,
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
    from orgparse.node import OrgNode, OrgRootNode

ORG_MIME_TYPES = frozenset({"text/x-org", "text/org"})
ORG_EXTENSIONS = frozenset({".org"})

_FILE_PROPERTIES = {
    "AUTHOR": "author",
    "DATE": "date",
    "EMAIL": "email",
    "KEYWORDS": "keywords",
}

_BEGIN = re.compile(r"^\s*#\+begin_(\w+)(?:\s+(\S+))?", re.IGNORECASE)
_KEYWORD = re.compile(r"^\s*#\+\w+:")
_COMMENT = re.compile(r"^\s*#(?:\s|$)")
_DRAWER = re.compile(r"^\s*:[\w-]+:\s*$")
_DRAWER_END = re.compile(r"^\s*:end:\s*$", re.IGNORECASE)
_FIXED = re.compile(r"^\s*:(?: |$)")
_RULE = re.compile(r"^\s*-{5,}\s*$")
_TABLE_LINE = re.compile(r"^\s*\|")
_TABLE_RULE = re.compile(r"^\s*\|[-+]+\|?\s*$")
_ITEM = re.compile(r"^(?P<indent>\s*)(?P<marker>[-+]|(?<=\s)\*|\d{1,9}[.)])\s+(?P<text>.*)$")
_CHECKBOX = re.compile(r"^\[(?P<state>[ xX-])\]\s+")
_TERM = re.compile(r"^(?P<term>.*?)\s+::(?:\s+(?P<rest>.*))?$")
_INLINE = re.compile(
    r"""\[\[(?P<target>[^\]\n]+)\](?:\[(?P<label>[^\]\n]*)\])?\]
    | (?P<url>\bhttps?://[^\s<>\[\]]+[^\s<>\[\].,;:!?'")])
    | (?:(?<=^)|(?<=[\s(\-'"{]))(?P<marker>[*/=~+_])
      (?P<body>[^\s](?:[^\n]*?[^\s])??)(?P=marker)(?=$|[\s\-.,;:!?'")}\]])""",
    re.VERBOSE,
)
_EMPHASIS = {"*": "**", "/": "*", "+": "~~", "_": ""}


class OrgConverter:
    """Converts Org mode documents with orgparse."""

    name = "org"
    version = "1"

    def accepts(self, source: Source) -> bool:
        return source.base_mime_type in ORG_MIME_TYPES or source.extension in ORG_EXTENSIONS

    def convert(self, source: Source) -> ConversionResult:
        import orgparse

        decoded = read_markup(source)
        try:
            root = orgparse.loads(decoded.text)
        except RecursionError as exc:
            raise too_deep("Org headings") from exc
        except Exception as exc:
            raise conversion_failure(exc, f"unreadable Org document: {describe(exc)}") from exc
        title = _file_property(root, "TITLE")
        shift = 1 if title else 0
        blocks = [markdown_heading(1, title)] if title else []
        blocks.extend(body_blocks(root.get_body(format="raw")))
        headings: list[dict[str, Any]] = []
        for node in root[1:]:
            heading = inline(node.get_heading(format="raw"))
            blocks.append(markdown_heading(min(node.level + shift, 6), heading, escaped=True))
            blocks.extend(body_blocks(node.get_body(format="raw")))
            headings.append(_heading_data(node))
        metadata = {
            key: value
            for name, key in _FILE_PROPERTIES.items()
            if (value := _file_property(root, name))
        }
        return markup_result(
            source,
            join_blocks(blocks) + "\n",
            title=title,
            description=_file_property(root, "DESCRIPTION"),
            metadata=metadata,
            language=_file_property(root, "LANGUAGE"),
            data={"headings": headings} if headings else None,
            decoded=decoded,
        )


def _file_property(root: OrgRootNode, name: str) -> str | None:
    value = root.get_file_property(name)
    return collapse_whitespace(str(value)) or None if value else None


def _heading_data(node: OrgNode) -> dict[str, Any]:
    """What a program filters Org headings by: state, tags, dates, properties."""
    out: dict[str, Any] = {
        "heading": collapse_whitespace(node.heading),
        "level": node.level,
        "todo": node.todo,
        "tags": sorted(node.shallow_tags),
    }
    for name in ("scheduled", "deadline", "closed"):
        date = getattr(node, name)
        if date:
            out[name] = str(date)
    if node.properties:
        out["properties"] = {str(k): str(v) for k, v in node.properties.items()}
    return out


def inline(text: str, depth: int = 0) -> str:
    """Org inline markup as Markdown."""

    def render(match: re.Match[str]) -> str:
        if match["target"]:
            target = match["target"].strip()
            label = match["label"]
            if target.startswith(("*", "#")) or not _linkable(target):
                return inline(label or target.lstrip("*#"), depth + 1)
            href = target.removeprefix("file:")
            text = inline(label, depth + 1) if label else escape_markdown_inline(href)
            return markdown_link(text, href)
        if match["url"]:
            return markdown_link(escape_markdown_inline(match["url"]), match["url"])
        marker, body = match["marker"], match["body"]
        if marker in "=~":
            return code_span(body)
        if depth >= MAX_NESTING:
            return escape_markdown_inline(body)
        wrap = _EMPHASIS[marker]
        return f"{wrap}{inline(body, depth + 1)}{wrap}"

    return scan_inline(text, _INLINE, render)


def _linkable(target: str) -> bool:
    return bool(re.match(r"^(?:[a-z][a-z0-9+.-]*:|\.{0,2}/|[\w.-]+\.\w+$)", target))


def body_blocks(body: str, depth: int = 0) -> list[str]:
    """The Markdown blocks of an Org body (text under a heading, or before the first)."""
    if depth > MAX_NESTING:
        raise too_deep("Org blocks")
    lines = body.split("\n")
    blocks: list[str] = []
    paragraph: list[str] = []
    index = 0

    def flush() -> None:
        if paragraph:
            blocks.append("\n".join(inline(line.strip()) for line in paragraph))
            paragraph.clear()

    while index < len(lines):
        line = lines[index]
        begin = _BEGIN.match(line)
        if begin:
            flush()
            kind, argument = begin[1].lower(), begin[2] or ""
            end = _block_end(lines, index + 1, kind)
            inner = _dedent(lines[index + 1 : end])
            if kind == "src":
                blocks.append(code_fence("\n".join(inner), argument).rstrip("\n"))
            elif kind == "example":
                blocks.append(code_fence("\n".join(inner)).rstrip("\n"))
            elif kind == "quote":
                blocks.append(quote(body_blocks("\n".join(inner), depth + 1)))
            elif kind == "verse":
                blocks.append("\\\n".join(inline(v.strip()) for v in inner if v.strip()))
            elif kind not in ("comment", "export"):
                blocks.extend(body_blocks("\n".join(inner), depth + 1))
            index = end + 1
        elif _DRAWER.match(line) and not _DRAWER_END.match(line):
            flush()
            end = index + 1
            while end < len(lines) and not _DRAWER_END.match(lines[end]):
                end += 1
            index = end + 1 if end < len(lines) else index + 1
        elif _TABLE_LINE.match(line):
            flush()
            end = index
            while end < len(lines) and _TABLE_LINE.match(lines[end]):
                end += 1
            blocks.append(_table(lines[index:end]))
            index = end
        elif _FIXED.match(line):
            flush()
            end = index
            while end < len(lines) and _FIXED.match(lines[end]):
                end += 1
            fixed = [re.sub(r"^\s*: ?", "", fixed) for fixed in lines[index:end]]
            blocks.append(code_fence("\n".join(fixed)).rstrip("\n"))
            index = end
        elif _ITEM.match(line):
            flush()
            items, index = _list(lines, index)
            blocks.append(items)
        elif not line.strip() or _KEYWORD.match(line) or _COMMENT.match(line):
            flush()
            index += 1
        elif _RULE.match(line):
            flush()
            blocks.append("---")
            index += 1
        else:
            paragraph.append(line)
            index += 1
    flush()
    return blocks


def _block_end(lines: list[str], start: int, kind: str) -> int:
    end_pattern = re.compile(rf"^\s*#\+end_{re.escape(kind)}\b", re.IGNORECASE)
    for index in range(start, len(lines)):
        if end_pattern.match(lines[index]):
            return index
    return len(lines)


def _dedent(lines: list[str]) -> list[str]:
    margin = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return [line[margin:] for line in lines]


def _table(lines: list[str]) -> str:
    rows: list[list[str]] = []
    header_end = 0
    for line in lines:
        if _TABLE_RULE.match(line):
            header_end = header_end or len(rows)
            continue
        cells = line.strip().strip("|").split("|")
        rows.append([inline(cell.strip()) for cell in cells])
    if header_end > 1:  # several header rows: one header line
        merged = [" ".join(cells).strip() for cells in zip(*rows[:header_end], strict=False)]
        rows = [merged, *rows[header_end:]]
    return table(rows)


def _list(lines: list[str], start: int) -> tuple[str, int]:
    """The list starting at ``lines[start]`` as Markdown, and the index after it."""
    # (indentation, ordered, text lines) per item; nesting follows indentation.
    items: list[tuple[int, bool, list[str]]] = []
    index = start
    base = len(lines[start]) - len(lines[start].lstrip())
    while index < len(lines):
        line = lines[index]
        item = _ITEM.match(line)
        indent = len(line) - len(line.lstrip())
        if item and indent >= base:
            ordered = item["marker"][0].isdigit()
            items.append((indent, ordered, [item["text"]]))
        elif line.strip() and items and indent > items[-1][0] and not _BEGIN.match(line):
            items[-1][2].append(line.strip())
        elif not line.strip() and index + 1 < len(lines) and _ITEM.match(lines[index + 1]):
            pass  # a blank line between items
        else:
            break
        index += 1
    return _render_list(items), index


def _render_list(items: list[tuple[int, bool, list[str]]]) -> str:
    out: list[str] = []
    stack: list[int] = []  # the Org indentation of each open level
    for indent, ordered, text in items:
        while stack and indent < stack[-1]:
            stack.pop()
        if not stack or indent > stack[-1]:
            if len(stack) >= MAX_NESTING:
                raise too_deep("Org lists")
            stack.append(indent)
        marker = "1." if ordered else "-"
        out.append("   " * (len(stack) - 1) + list_item(marker, [_item(text)]))
    return "\n".join(out)


def _item(lines: list[str]) -> str:
    text = " ".join(lines)
    box = _CHECKBOX.match(text)
    prefix = ""
    if box:
        prefix = "☑ " if box["state"] in "xX" else "☐ "
        text = text[box.end() :]
    term = _TERM.match(text)
    if term:
        rest = f": {inline(term['rest'])}" if term["rest"] else ""
        return f"{prefix}**{inline(term['term'])}**{rest}"
    return prefix + inline(text)
