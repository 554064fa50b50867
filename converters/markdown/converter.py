"""Markdown sources (CommonMark + GFM tables, front matter; MDX unwrapped).

Derived: text/plain (Markdown stripped of syntax, from the token stream),
application/json (sections, links, tables, code blocks), application/pdf
(rendered), and text/markdown itself when the source was labelled otherwise
(an ``.md`` file libmagic called text/plain, an MDX page).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser

from markdown_it.token import Token

from docshelf.converters.assemble import parsed_markdown_result
from docshelf.converters.base import (
    TEXT_MARKDOWN,
    ConversionResult,
    Facts,
    Source,
)
from docshelf.converters.html.text import html_to_text
from docshelf.converters.markdown.mdx import mdx_to_markdown
from docshelf.converters.markdown.model import MarkdownDocument, inline_text, parse_markdown
from docshelf.converters.textutil import check_size, collapse_whitespace, decode, summarize

MARKDOWN_MIME_TYPES = frozenset({TEXT_MARKDOWN, "text/x-markdown", "text/mdx", "text/x-mdx"})
MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown", ".mdown", ".mkd", ".mkdn", ".mdx"})
_MDX_MIME_TYPES = frozenset({"text/mdx", "text/x-mdx"})


class MarkdownConverter:
    """Converts Markdown and MDX documents with markdown-it."""

    name = "markdown"
    version = "4"

    def accepts(self, source: Source) -> bool:
        return (
            source.base_mime_type in MARKDOWN_MIME_TYPES or source.extension in MARKDOWN_EXTENSIONS
        )

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data)
        decoded = decode(source.data)
        markdown = decoded.text
        if source.base_mime_type in _MDX_MIME_TYPES or source.filename.lower().endswith(".mdx"):
            markdown = mdx_to_markdown(markdown)
        document = parse_markdown(markdown)
        facts = markdown_facts(document, metadata={**document.front_matter, **decoded.metadata})
        return parsed_markdown_result(
            source, facts, markdown, document, pdf_author=facts.metadata.get("author")
        )


def markdown_facts(
    document: MarkdownDocument,
    *,
    title: str | None = None,
    description: str | None = None,
    language: str | None = None,
    metadata: Mapping[str, str] | None = None,
) -> Facts:
    """Facts of a Markdown document; explicit arguments win over what it declares.

    Title: front matter ``title``, else :func:`document_title`. Description:
    front matter ``description``, else the first prose of the document's
    opening (:func:`opening_prose`), boilerplate skipped by
    :func:`~converters.textutil.summarize`. Language: front matter
    ``lang``/``language``. Metadata: the front matter.
    """
    front = document.front_matter
    return Facts(
        title=title or front.get("title") or document_title(document),
        description=summarize(description or front.get("description"))
        or summarize(opening_prose(document)),
        language=language or front.get("lang") or front.get("language"),
        outline=document.headings,
        metadata=dict(metadata if metadata is not None else front),
    )


def document_title(document: MarkdownDocument) -> str | None:
    """The title a person would give the document, from its own content.

    In order:

    1. its first level-1 heading (``#`` or a setext ``===`` underline): the
       author's own title, wherever it stands;
    2. else the name it opens with (:func:`leading_name`): READMEs open with a
       logo and a sentence starting with the project's name in bold, and keep
       their headings for sections ("Benchmarks", "Installation") — a section
       is not what anyone calls the document;
    3. else its first heading of any level;
    4. else None: the catalog then names the document after its file.
    """
    for heading in document.headings:
        if heading.level == 1 and heading.title:
            return heading.title
    return leading_name(document.opening) or document.first_heading or None


def leading_name(tokens: Sequence[Token]) -> str | None:
    """The name a document opens with, before its first heading, if any.

    Blocks are read in order until the first heading:

    * a paragraph of only images and links is a logo or badges: a single image
      that is not a badge names the document by its alt text ("Zstandard";
      "Black Logo" gives "Black"); badges and link lines are passed over;
    * an HTML block names the document by its ``<h1>``, else by its single
      non-badge ``<img alt>``; one with other visible text starts the prose;
    * the first paragraph of prose names the document by the bold phrase it
      starts with (``__Zstandard__, or zstd ...``) — unless that phrase is a
      label or an admonition ("**Note:**", "**Warning**") — and ends the search;
    * anything else (a list, a quote, code, a table) ends it too.

    A name is short (at most :data:`_MAX_NAME_WORDS` words) and not a generic
    word such as "logo".
    """
    for block, inner in _top_level_blocks(tokens):
        kind = block.type
        if kind in ("front_matter", "hr"):
            continue
        if kind == "paragraph_open":
            children = (inner[0].children or []) if inner else []
            if _only_images_and_links(children):
                name = _image_name(children)
                if name:
                    return name
                continue
            return _leading_strong(children)
        if kind == "html_block":
            lead = _HtmlLead.read(block.content)
            if lead.name:
                return lead.name
            if lead.has_text:
                return None
            continue
        return None
    return None


def opening_prose(document: MarkdownDocument) -> str:
    """The prose paragraphs of the document's opening, blank-line separated.

    Paragraphs (in block quotes too) and the visible text of HTML blocks, in
    order; list items, headings, code and tables are not prose, and neither
    are paragraphs of only images and links (badges, logos, navigation).
    """
    tokens = document.opening
    parts: list[str] = []
    lists = 0
    for index, token in enumerate(tokens):
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists -= 1
        elif lists:
            continue
        elif kind == "paragraph_open" and index + 1 < len(tokens):
            children = tokens[index + 1].children or []
            if not _only_images_and_links(children):
                parts.append(inline_text(children))
        elif kind == "html_block":
            parts.append(html_to_text(token.content))
    return "\n\n".join(part for part in parts if part.strip())


#: A name is a few words; a longer bold phrase or alt text is a sentence.
_MAX_NAME_WORDS = 8
#: Words that stand in for a picture or an admonition, never for a document.
_NOT_NAMES = frozenset(
    {
        *("logo", "banner", "icon", "image", "picture", "screenshot", "header", "badge"),
        *("note", "notes", "warning", "important", "tip", "hint", "caution", "attention"),
        *("danger", "info", "disclaimer", "deprecated", "update", "news", "announcement"),
        *("tl;dr", "tldr", "wip", "nb", "n.b."),
    }
)
_PICTURE_WORDS = re.compile(r"(?i)^(?:logo|banner|icon)\s+(?:of\s+)?|\s+(?:logo|banner|icon)$")
#: Image addresses of status badges (CI, package indexes, coverage).
_BADGE_SRC = re.compile(
    r"(?i)shields\.io|badge|travis-ci|circleci|codecov|coveralls|appveyor|/workflows/"
)
#: Text between links and images on a badge or navigation line.
_SEPARATORS = re.compile(r"^[\s|·•,/\-\u2013\u2014]*$")


def _top_level_blocks(tokens: Sequence[Token]) -> Iterator[tuple[Token, Sequence[Token]]]:
    """Each top-level block until the first heading: its opening token and the tokens inside."""
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "heading_open":
            return
        end = index
        if token.nesting == 1:
            while end < len(tokens) and not (
                tokens[end].nesting == -1 and tokens[end].level == token.level
            ):
                end += 1
        yield token, tokens[index + 1 : end]
        index = end + 1


def _only_images_and_links(children: Sequence[Token]) -> bool:
    """Whether an inline run is only images and links (with separators between)."""
    depth = 0
    seen = False
    for child in children:
        kind = child.type
        if kind == "link_open":
            depth += 1
            seen = True
        elif kind == "link_close":
            depth -= 1
        elif kind == "image" or kind == "html_inline":
            seen = True
        elif depth or kind in ("softbreak", "hardbreak"):
            continue
        elif kind != "text" or not _SEPARATORS.match(child.content):
            return False
    return seen


def _image_name(children: Sequence[Token]) -> str | None:
    """The alt text of the only image in ``children``, if it is not a badge."""
    images = [child for child in children if child.type == "image"]
    if len(images) != 1 or _BADGE_SRC.search(str(images[0].attrGet("src") or "")):
        return None
    return _as_name(inline_text(images[0].children) or images[0].content)


def _leading_strong(children: Sequence[Token]) -> str | None:
    """The bold phrase an inline run starts with, unless it is a label."""
    position = 0
    while position < len(children) and (
        children[position].type == "text" and not children[position].content.strip()
    ):
        position += 1
    if position >= len(children) or children[position].type != "strong_open":
        return None
    close = next(
        (i for i in range(position + 1, len(children)) if children[i].type == "strong_close"),
        None,
    )
    if close is None:
        return None
    after = children[close + 1].content if close + 1 < len(children) else ""
    if after.lstrip().startswith(":"):
        return None
    return _as_name(inline_text(children[position + 1 : close]))


def _as_name(text: str) -> str | None:
    """``text`` as a document's name, or None if it cannot be one."""
    name = _PICTURE_WORDS.sub("", collapse_whitespace(text)).strip()
    if (
        not name
        or name[-1] in ".:!?"
        or name.lower() in _NOT_NAMES
        or len(name.split()) > _MAX_NAME_WORDS
        or not any(char.isalpha() for char in name)
    ):
        return None
    return name


class _HtmlLead(HTMLParser):
    """What an HTML block at the top of a README says: an ``<h1>``, images, text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.h1_depth = 0
        self.h1_text: list[str] = []
        self.h1_images: list[str] = []
        self.images: list[str] = []

    @classmethod
    def read(cls, content: str) -> _Lead:
        parser = cls()
        parser.feed(content)
        parser.close()
        h1 = collapse_whitespace("".join(parser.h1_text)) or (
            parser.h1_images[0] if len(parser.h1_images) == 1 else ""
        )
        name = collapse_whitespace(h1) or None
        if name is None and len(parser.images) == 1:
            name = _as_name(parser.images[0])
        return _Lead(name=name, has_text=bool(html_to_text(content).strip()))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h1":
            self.h1_depth += 1
        elif tag == "img":
            values = dict(attrs)
            if _BADGE_SRC.search(values.get("src") or ""):
                return
            alt = values.get("alt") or ""
            (self.h1_images if self.h1_depth else self.images).append(alt)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "h1":
            self.h1_depth = max(0, self.h1_depth - 1)

    def handle_data(self, data: str) -> None:
        if self.h1_depth:
            self.h1_text.append(data)


@dataclass(frozen=True, slots=True)
class _Lead:
    name: str | None
    has_text: bool
