"""Web feeds: RSS 2.0 (and 0.9x), RSS 1.0 (RDF) and Atom 1.0, read with defusedxml.

The feed's title is the document's title and its ``#`` heading; each item
(entry) is a ``##`` section: its title, then its date, author and link as
``**Name:** value`` lines, then its text. Feeds carry HTML escaped inside
``description``, ``content:encoded`` and Atom's ``type="html"`` text (or inline
XHTML for ``type="xhtml"``): it takes the HTML path
(:func:`converters.html.markdown.html_to_markdown`) with its headings moved
below the item's. An item's full content wins over its summary.

Elements are matched by namespace URI, never by prefix: a feed may bind the
content module to ``ns3:`` as well as to ``content:``. The JSON ``data`` holds
the feed's own fields and its items (title, link, ISO date, author, categories,
summary as plain text) for programs.
"""

from __future__ import annotations

import email.utils
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from xml.etree.ElementTree import Element, tostring

from docshelf.converters.assemble import parsed_markdown_result
from docshelf.converters.base import ConversionError, ConversionResult, FailureReason, Source
from docshelf.converters.html.markdown import html_to_markdown
from docshelf.converters.html.text import html_to_text
from docshelf.converters.markdown.converter import markdown_facts
from docshelf.converters.markdown.model import parse_markdown
from docshelf.converters.safexml import child_text, local_name, parse_xml
from docshelf.converters.textutil import (
    check_size,
    collapse_whitespace,
    escape_markdown_inline,
    markdown_heading,
    markdown_link,
    summarize,
)

RSS_MIME_TYPE = "application/rss+xml"
ATOM_MIME_TYPE = "application/atom+xml"
FEED_EXTENSIONS = frozenset({".rss", ".atom"})
#: A feed is small XML; a parsed tree costs several times its size.
MAX_FEED_BYTES = 16 * 1024 * 1024
#: Items read (a podcast's whole back catalogue runs to a few thousand).
MAX_ITEMS = 10_000

ATOM = "{http://www.w3.org/2005/Atom}"
RSS1 = "{http://purl.org/rss/1.0/}"
RSS090 = "{http://my.netscape.com/rdf/simple/0.9/}"
RDF = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}"
DC = "{http://purl.org/dc/elements/1.1/}"
CONTENT = "{http://purl.org/rss/1.0/modules/content/}"
XHTML = "{http://www.w3.org/1999/xhtml}"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
#: An item's text is written below its ``##`` heading: its own headings start at ``###``.
ITEM_HEADING_OFFSET = 2


@dataclass(frozen=True, slots=True)
class Text:
    """Feed text that is either plain or HTML."""

    value: str
    html: bool

    def markdown(self, heading_offset: int) -> str:
        if self.html:
            return html_to_markdown(self.value, heading_offset=heading_offset).markdown
        return escape_markdown_inline(self.value).strip()

    def plain(self) -> str:
        return collapse_whitespace(html_to_text(self.value) if self.html else self.value)


@dataclass(frozen=True, slots=True)
class Entry:
    title: str | None
    link: str | None
    date: str | None  # as the feed writes it
    authors: tuple[str, ...]
    categories: tuple[str, ...]
    summary: Text | None
    content: Text | None


@dataclass(frozen=True, slots=True)
class Feed:
    format: str  # "rss", "rdf" or "atom"
    title: str | None
    link: str | None
    description: Text | None
    language: str | None
    updated: str | None
    authors: tuple[str, ...]
    entries: tuple[Entry, ...]


class FeedConverter:
    """Converts RSS and Atom feeds."""

    name = "feed"
    version = "1"

    def accepts(self, source: Source) -> bool:
        return (
            source.base_mime_type in (RSS_MIME_TYPE, ATOM_MIME_TYPE)
            or source.extension in FEED_EXTENSIONS
        )

    def convert(self, source: Source) -> ConversionResult:
        check_size(source.data, MAX_FEED_BYTES)
        feed = read_feed(parse_xml(source.data, "the feed"))
        markdown = feed_markdown(feed)
        document = parse_markdown(markdown)
        described = feed.description.plain() if feed.description else ""
        facts = markdown_facts(
            document,
            title=feed.title,
            description=described or _shape(feed),
            language=feed.language,
            metadata={
                key: value
                for key, value in {
                    "format": {"rss": "RSS 2.0", "rdf": "RSS 1.0", "atom": "Atom"}[feed.format],
                    "link": feed.link,
                    "updated": feed.updated,
                    "author": "; ".join(feed.authors),
                }.items()
                if value
            },
        )
        return parsed_markdown_result(source, facts, markdown, document, data=feed_data(feed))


def _shape(feed: Feed) -> str:
    count = len(feed.entries)
    first = next((entry.title for entry in feed.entries if entry.title), None)
    return f"Feed, {count} item{'s' if count != 1 else ''}" + (f": {first}" if first else "")


# --- Reading ---------------------------------------------------------------------------


def read_feed(root: Element) -> Feed:
    """The feed whose document element is ``root``: RSS 0.9x/2.0, RSS 1.0 (RDF) or Atom."""
    if root.tag == "rss":
        channel = root.find("channel")
        if channel is None:
            raise ConversionError(FailureReason.CORRUPT, "the RSS feed has no <channel>")
        return _rss(channel, _bounded(channel.iterfind("item")), "rss", "")
    if root.tag == f"{RDF}RDF":
        for ns in (RSS1, RSS090):
            channel = root.find(f"{ns}channel")
            if channel is not None:
                return _rss(channel, _bounded(root.iterfind(f"{ns}item")), "rdf", ns)
        raise ConversionError(FailureReason.CORRUPT, "the RDF document has no RSS 1.0 channel")
    if root.tag == f"{ATOM}feed":
        return _atom(root)
    raise ConversionError(
        FailureReason.UNSUPPORTED,
        f"not an RSS or Atom feed: the document element is <{local_name(root)}>",
    )


def _bounded(items: Iterator[Element]) -> list[Element]:
    found: list[Element] = []
    for item in items:
        if len(found) == MAX_ITEMS:
            raise ConversionError(FailureReason.TOO_LARGE, f"the feed has over {MAX_ITEMS} items")
        found.append(item)
    return found


def _rss(channel: Element, items: list[Element], kind: str, ns: str) -> Feed:
    """RSS 2.0 (``ns`` "") or RSS 1.0 (``ns`` its namespace): the same names, and Dublin Core."""

    def text(element: Element, name: str) -> str | None:
        return child_text(element, f"{ns}{name}")

    description = text(channel, "description")
    return Feed(
        format=kind,
        title=_line(text(channel, "title")),
        link=text(channel, "link"),
        description=Text(description, True) if description else None,
        language=text(channel, "language") or child_text(channel, f"{DC}language"),
        updated=(
            text(channel, "lastBuildDate")
            or text(channel, "pubDate")
            or child_text(channel, f"{DC}date")
        ),
        authors=_all(channel, f"{DC}creator") or _all(channel, f"{ns}managingEditor"),
        entries=tuple(
            Entry(
                title=_line(text(item, "title")),
                link=text(item, "link") or _permalink(item),
                date=text(item, "pubDate") or child_text(item, f"{DC}date"),
                authors=_all(item, f"{DC}creator") or _all(item, f"{ns}author"),
                categories=_all(item, f"{ns}category") or _all(item, f"{DC}subject"),
                summary=_html(text(item, "description")),
                content=_html(child_text(item, f"{CONTENT}encoded")),
            )
            for item in items
        ),
    )


def _permalink(item: Element) -> str | None:
    """An RSS 2.0 item's ``guid`` when it is its address (``isPermaLink`` is true by default)."""
    guid = item.find("guid")
    if guid is None or guid.get("isPermaLink", "true").strip().lower() == "false":
        return None
    text = (guid.text or "").strip()
    return text if text.startswith(("http://", "https://")) else None


def _atom(feed: Element) -> Feed:
    subtitle = feed.find(f"{ATOM}subtitle")
    return Feed(
        format="atom",
        title=_line(_atom_plain(feed.find(f"{ATOM}title"))),
        link=_atom_link(feed),
        description=_atom_text(subtitle) if subtitle is not None else None,
        language=(feed.get(XML_LANG) or "").strip() or None,
        updated=child_text(feed, f"{ATOM}updated"),
        authors=_atom_authors(feed),
        entries=tuple(
            Entry(
                title=_line(_atom_plain(entry.find(f"{ATOM}title"))),
                link=_atom_link(entry),
                date=child_text(entry, f"{ATOM}published") or child_text(entry, f"{ATOM}updated"),
                authors=_atom_authors(entry),
                categories=tuple(
                    label
                    for category in entry.iterfind(f"{ATOM}category")
                    if (label := (category.get("label") or category.get("term") or "").strip())
                ),
                summary=_atom_text(entry.find(f"{ATOM}summary")),
                content=_atom_text(entry.find(f"{ATOM}content")),
            )
            for entry in _bounded(feed.iterfind(f"{ATOM}entry"))
        ),
    )


def _atom_link(element: Element) -> str | None:
    """The ``alternate`` link (``rel`` absent means alternate), else the first with an address."""
    links = [link for link in element.iterfind(f"{ATOM}link") if (link.get("href") or "").strip()]
    alternate = [link for link in links if link.get("rel", "alternate") == "alternate"]
    chosen = alternate or links
    return chosen[0].get("href", "").strip() if chosen else None


def _atom_authors(element: Element) -> tuple[str, ...]:
    return tuple(
        name
        for author in element.iterfind(f"{ATOM}author")
        if (name := child_text(author, f"{ATOM}name") or child_text(author, f"{ATOM}email"))
    )


def _atom_text(element: Element | None) -> Text | None:
    """An Atom text construct: ``type`` text, html or xhtml (inline ``div``); None for others.

    Content given by address (``src``) or in another media type is not text to show.
    """
    if element is None or element.get("src"):
        return None
    kind = (element.get("type") or "text").strip().lower()
    if kind == "xhtml":
        div = element.find(f"{XHTML}div")
        return Text(_xhtml(div), True) if div is not None else None
    value = "".join(element.itertext()).strip()
    if not value:
        return None
    if kind in ("html", "text/html"):
        return Text(value, True)
    if kind in ("text", "text/plain"):
        return Text(value, False)
    return None


def _atom_plain(element: Element | None) -> str | None:
    text = _atom_text(element)
    return text.plain() if text else None


def _xhtml(div: Element) -> str:
    """Inline XHTML as an HTML string (namespaces dropped) for the HTML path."""
    for element in div.iter():
        element.tag = local_name(element)
    try:
        return tostring(div, encoding="unicode")
    except RecursionError as exc:
        raise ConversionError(
            FailureReason.CORRUPT, "the feed's XHTML content is nested too deeply"
        ) from exc


def _html(value: str | None) -> Text | None:
    return Text(value, True) if value and value.strip() else None


def _line(text: str | None) -> str | None:
    return collapse_whitespace(text) or None if text else None


def _all(element: Element, tag: str) -> tuple[str, ...]:
    values = (collapse_whitespace("".join(child.itertext())) for child in element.iterfind(tag))
    return tuple(dict.fromkeys(value for value in values if value))


def iso_date(text: str | None) -> str | None:
    """RFC 822 (RSS) or RFC 3339 (Atom, Dublin Core) ``text`` as ISO 8601; None if neither."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.strip()).isoformat()
    except ValueError:
        pass
    try:
        return email.utils.parsedate_to_datetime(text.strip()).isoformat()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


# --- Writing ---------------------------------------------------------------------------


def feed_markdown(feed: Feed) -> str:
    """``# title``, the feed's description, then one ``##`` section per item."""
    blocks: list[str] = []
    if feed.title:
        blocks.append(markdown_heading(1, feed.title))
    if feed.description:
        blocks.append(feed.description.markdown(heading_offset=1))
    for number, entry in enumerate(feed.entries, start=1):
        blocks.append(_entry_markdown(entry, number))
    return "\n\n".join(block.strip("\n") for block in blocks if block.strip()) + "\n"


def _entry_markdown(entry: Entry, number: int) -> str:
    body = entry.content or entry.summary
    title = entry.title or summarize(body.plain() if body else None, 80) or f"Item {number}"
    fields = [
        ("Published", escape_markdown_inline(entry.date) if entry.date else None),
        ("Author", escape_markdown_inline(", ".join(entry.authors)) if entry.authors else None),
        (
            "Link",
            markdown_link(escape_markdown_inline(entry.link), entry.link) if entry.link else None,
        ),
    ]
    header = "\\\n".join(f"**{name}:** {value}" for name, value in fields if value)
    blocks = [
        markdown_heading(2, title),
        header,
        body.markdown(ITEM_HEADING_OFFSET) if body else "",
    ]
    return "\n\n".join(block.strip("\n") for block in blocks if block.strip())


def feed_data(feed: Feed) -> dict[str, Any]:
    """The feed for programs: its fields and items, dates in ISO 8601, text without markup."""
    return {
        "format": feed.format,
        "title": feed.title,
        "link": feed.link,
        "description": feed.description.plain() if feed.description else None,
        "language": feed.language,
        "updated": iso_date(feed.updated),
        "authors": list(feed.authors),
        "items": [
            {
                "title": entry.title,
                "link": entry.link,
                "date": iso_date(entry.date),
                "authors": list(entry.authors),
                "categories": list(entry.categories),
                "summary": _summary(entry),
            }
            for entry in feed.entries
        ],
    }


def _summary(entry: Entry) -> str | None:
    if entry.summary:
        return entry.summary.plain() or None
    return summarize(entry.content.plain()) if entry.content else None
