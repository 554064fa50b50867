"""What the three markup readers share: the result, Markdown block writers, inline scanning.

The readers write Markdown; the Markdown model (:func:`parse_markdown`) then
gives the sections, outline, links, tables and search segments, exactly as for
a Markdown source, so ``?section=`` works on the headings the document declares.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from docshelf.converters.assemble import parsed_markdown_result
from docshelf.converters.base import ConversionError, ConversionResult, FailureReason, Source
from docshelf.converters.markdown.converter import markdown_facts
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.textutil import (
    DecodedText,
    check_size,
    decode,
    escape_markdown_inline,
    markdown_table,
)

#: Markup sources larger than this are refused: parsing is pure Python (docutils
#: reads ~1 MB in seconds), and a bigger one is generated output, not a document.
MAX_MARKUP_BYTES = 8 * 1024 * 1024
#: Lists, quotes and blocks nested deeper than this are refused (recursion bound).
MAX_NESTING = 40


def read_markup(source: Source, limit: int = MAX_MARKUP_BYTES) -> DecodedText:
    """The source's text, size-checked and decoded (binary bytes are ``unsupported``)."""
    check_size(source.data, limit)
    return decode(source.data)


def too_deep(kind: str) -> ConversionError:
    return ConversionError(
        FailureReason.TOO_LARGE, f"{kind} nested more than {MAX_NESTING} levels deep"
    )


def markup_result(
    source: Source,
    markdown: str,
    *,
    title: str | None,
    description: str | None,
    metadata: Mapping[str, str],
    language: str | None = None,
    data: Any,
    decoded: DecodedText,
) -> ConversionResult:
    """All formats of a markup document written as ``markdown``.

    Title and description fall back as for Markdown (first ``#`` heading, first
    prose); ``data`` is the JSON's ``data`` member (what the format declares);
    ``decoded``: the source's text, whose encoding the metadata records.
    """
    document = parse_markdown(markdown)
    facts = markdown_facts(
        document,
        title=title or None,
        description=description or None,
        language=language or None,
        metadata={key: value for key, value in metadata.items() if value} | decoded.metadata,
    )
    return parsed_markdown_result(
        source, facts, markdown, document, pdf_author=facts.metadata.get("author"), data=data
    )


def join_blocks(blocks: Iterable[str]) -> str:
    """Markdown blocks separated by blank lines (empty blocks dropped)."""
    return "\n\n".join(block.strip("\n") for block in blocks if block.strip())


def indent_block(text: str, first: str, rest: str) -> str:
    """``text`` with ``first`` before its first line and ``rest`` before the others."""
    lines = text.split("\n")
    return "\n".join(
        [first + lines[0], *((rest + line) if line.strip() else "" for line in lines[1:])]
    )


_LIST_START = re.compile(r"^(?:[-*+]|\d{1,9}[.)])(?: |$)")


def list_item(marker: str, blocks: Iterable[str]) -> str:
    """One list item: its blocks, continued at the item's content column.

    A nested list follows its item's text on the next line, keeping the list tight.
    """
    body = ""
    for block in (b.strip("\n") for b in blocks if b.strip()):
        separator = "\n" if _LIST_START.match(block) else "\n\n"
        body = f"{body}{separator}{block}" if body else block
    return indent_block(body, f"{marker} ", " " * (len(marker) + 1))


def quote(blocks: Iterable[str]) -> str:
    """A block quote of ``blocks``."""
    return "\n".join(f"> {line}".rstrip() for line in join_blocks(blocks).split("\n"))


def admonition(label: str, blocks: list[str]) -> str:
    """A note, tip or warning: a quote that starts with its label in bold."""
    head = f"**{escape_markdown_inline(label.strip().capitalize())}:**"
    if blocks and not blocks[0].startswith(("```", ">", "|", "-", "#")):
        return quote([f"{head} {blocks[0]}", *blocks[1:]])
    return quote([head, *blocks])


def scan_inline(text: str, pattern: re.Pattern[str], render: Callable[[re.Match[str]], str]) -> str:
    """Markdown for ``text``: each match of ``pattern`` rendered, the text between escaped."""
    out: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        out.append(escape_markdown_inline(text[position : match.start()]))
        out.append(render(match))
        position = match.end()
    out.append(escape_markdown_inline(text[position:]))
    return "".join(out)


def table(rows: list[list[str]]) -> str:
    """A pipe table of inline-Markdown cells; GFM needs a header, so the first row is it."""
    return markdown_table(rows[0], rows[1:], markdown_cells=True) if rows else ""
