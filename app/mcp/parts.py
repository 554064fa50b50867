"""Parts of a document as resources of their own (issue #10).

Every shelf's template is ``docshelf://{shelf}/{+path}{?pages,section}``
(RFC 6570 form-style query). A document URI never holds a literal ``?`` (a file
name's is percent-encoded, storage.uris), so the first ``?`` starts a part:

- ``…/report.pdf?pages=3`` or ``?pages=3-5`` (at most 50 pages) of a
  paginated document;
- ``…/guide.md?section=medium-tests``: the section under that heading, down to
  the next heading of the same or a higher level (converters.parts).

Parts are not listed. They are read, described and subscribed to like
documents, in the same formats, made on demand from what the index already
holds: the document's stored JSON and Markdown, and its original PDF.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from docshelf.converters import APPLICATION_JSON, APPLICATION_PDF, TEXT_MARKDOWN, TEXT_PLAIN
from docshelf.converters.base import OutlineEntry, Source
from docshelf.converters.markdown.converter import MarkdownConverter
from docshelf.converters.parts import (
    MAX_PART_PAGES,
    outline_parts,
    pages_markdown,
    pages_query,
    pdf_page_range,
    section_markdown,
    section_query,
    unique_slugs,
)
from docshelf.converters.pdf.converter import PdfConverter
from docshelf.converters.render import render_markdown_pdf
from docshelf.storage.catalog import DocumentRecord
from docshelf.storage.models import DocumentState

#: The formats of every part, in the canonical order of DESIGN D4.
PART_FORMATS = (TEXT_PLAIN, TEXT_MARKDOWN, APPLICATION_JSON, APPLICATION_PDF)
#: The formats a part is made from (besides a PDF's original).
SOURCE_FORMATS = (TEXT_MARKDOWN, APPLICATION_JSON)

_PAGES = re.compile(r"^([0-9]{1,9})(?:-([0-9]{1,9}))?$")

Load = Callable[[str], bytes]  # a document's format (or its original's type) → its bytes


class PartNotFound(LookupError):
    """No such part; ``reason`` says why, for the error's ``data``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class PartQuery:
    """What a part URI's query asks for: a page range or a section slug."""

    pages: tuple[int, int] | None = None
    section: str | None = None

    @property
    def query(self) -> str:
        """The canonical query string (without ``?``)."""
        if self.pages is not None:
            return pages_query(*self.pages)
        return section_query(self.section or "")


def split_uri(uri: str) -> tuple[str, str | None]:
    """The document URI and the part query of ``uri`` (None: the document itself)."""
    document_uri, sep, query = uri.partition("?")
    return document_uri, (query if sep else None)


def parse_query(query: str) -> PartQuery:
    """Read a part query; :class:`PartNotFound` says what is wrong with a malformed one."""
    fields: dict[str, str] = {}
    for pair in query.split("&"):
        name, sep, value = pair.partition("=")
        if not sep or name not in ("pages", "section"):
            raise PartNotFound(
                f"malformed part query {query!r}: use ?pages=N, ?pages=N-M or ?section=slug"
            )
        if name in fields:
            raise PartNotFound(f"malformed part query {query!r}: {name} is given twice")
        fields[name] = value
    if len(fields) != 1:
        raise PartNotFound(f"malformed part query {query!r}: give pages or section, not both")
    if "pages" in fields:
        return PartQuery(pages=_page_range(fields["pages"]))
    try:
        slug = unquote(fields["section"], errors="strict")
    except UnicodeDecodeError:
        raise PartNotFound("malformed section: its percent-encoding is not UTF-8") from None
    if not slug:
        raise PartNotFound("malformed part query: section needs a slug (?section=slug)")
    return PartQuery(section=slug)


def _page_range(value: str) -> tuple[int, int]:
    match = _PAGES.match(value)
    if match is None:
        raise PartNotFound(f"malformed pages {value!r}: use a page (3) or a range (3-5)")
    first = int(match.group(1))
    last = int(match.group(2) or first)
    if first < 1:
        raise PartNotFound("page 0 does not exist: pages are numbered from 1")
    if last < first:
        raise PartNotFound(f"the range {first}-{last} runs backwards")
    if last - first + 1 > MAX_PART_PAGES:
        raise PartNotFound(
            f"{last - first + 1} pages is more than one part may hold ({MAX_PART_PAGES})"
        )
    return first, last


@dataclass(frozen=True, slots=True)
class Part:
    """A checked part of one document."""

    document: DocumentRecord
    query: PartQuery
    uri: str
    title: str

    @property
    def meta(self) -> dict[str, Any]:
        """What the part is, for its Resource's ``_meta``."""
        meta: dict[str, Any] = {"document": self.document.uri}
        if self.query.pages is not None:
            meta["pages"] = list(self.query.pages)
        else:
            meta["section"] = self.query.section
        return meta


def check(record: DocumentRecord, query: PartQuery, uri: str) -> Part:
    """The part ``query`` names in ``record``; :class:`PartNotFound` if it has none such.
    A document's sections are its outline's headings (what its converter found)."""
    if record.error_reason or record.state not in (DocumentState.READY, DocumentState.PENDING):
        raise PartNotFound(
            f"{record.path} has no derived formats ({record.error_reason or record.state}); "
            "only the whole document can be read"
        )
    if query.pages is not None:
        first, last = query.pages
        if record.page_count is None:
            raise PartNotFound(
                f"{record.path} has no pages; address its sections with ?section=slug"
            )
        if last > record.page_count:
            raise PartNotFound(
                f"past the end: {record.path} has {record.page_count} "
                f"page{'s' if record.page_count != 1 else ''}"
            )
        span = f"page {first}" if first == last else f"pages {first}\u2013{last}"
        return Part(record, query, uri, f"{record.title} ({span})")
    if record.page_count is not None:
        raise PartNotFound(f"{record.path} is paginated: address its pages with ?pages=N")
    headings = [title for title, _, _ in record.outline]
    slugs = unique_slugs(headings)
    if query.section not in slugs:
        known = ", ".join(slugs[:20]) + (", …" if len(slugs) > 20 else "")
        raise PartNotFound(
            f"{record.path} has no section {query.section!r}"
            + (f"; its sections are: {known}" if slugs else "; it has no headings")
        )
    return Part(record, query, uri, headings[slugs.index(query.section)])


#: Outline entries a document's ``_meta`` lists (a long manual's are cut here).
MAX_LISTED_PARTS = 200


def document_parts(record: DocumentRecord) -> dict[str, Any] | None:
    """How to address the parts of ``record``, for its Resource's ``_meta``: a template for
    its pages, and the part URI of each outline entry. None if it has no parts."""
    if record.error_reason or record.state not in (DocumentState.READY, DocumentState.PENDING):
        return None
    described: dict[str, Any] = {}
    if record.page_count:
        described["pages"] = {
            "count": record.page_count,
            "uriTemplate": f"{record.uri}{{?pages}}",  # RFC 6570 form-style query
        }
    outline = [OutlineEntry(title, level, page) for title, level, page in record.outline]
    named = outline_parts(outline, record.page_count)
    entries = [
        {"title": entry.title, "level": entry.level, "uri": f"{record.uri}?{part}"}
        for entry, part in zip(outline, named, strict=True)
        if part is not None
    ]
    if entries:
        described["outline"] = entries[:MAX_LISTED_PARTS]
        if len(entries) > MAX_LISTED_PARTS:
            described["outlineTruncated"] = True
    return described or None


def producers(part: Part, load: Load) -> Mapping[str, Callable[[], bytes]]:
    """How to make each of :data:`PART_FORMATS` for ``part`` from the document's formats."""
    if part.query.pages is not None:
        first, last = part.query.pages
        return {
            TEXT_PLAIN: lambda: _page_texts(load, first, last).encode("utf-8"),
            TEXT_MARKDOWN: lambda: _pages_markdown(load, first, last).encode("utf-8"),
            APPLICATION_JSON: lambda: _pages_json(load, first, last),
            APPLICATION_PDF: lambda: _pages_pdf(part, load, first, last),
        }
    slug = part.query.section or ""
    state: dict[str, Any] = {}

    def markdown() -> str:
        if "markdown" not in state:
            found = section_markdown(load(TEXT_MARKDOWN).decode("utf-8"), slug)
            if found is None:  # the document changed under us: the index is catching up
                raise PartNotFound(f"{part.document.path} no longer has a section {slug!r}")
            state["markdown"] = found[1]
        return str(state["markdown"])

    def derived(mime_type: str) -> bytes:
        if "result" not in state:
            source = Source.of("part.md", TEXT_MARKDOWN, markdown().encode("utf-8"))
            state["result"] = MarkdownConverter().convert(source)
        representation = state["result"].get(mime_type)
        return bytes(representation.data)

    return {
        TEXT_PLAIN: lambda: derived(TEXT_PLAIN),
        TEXT_MARKDOWN: lambda: markdown().encode("utf-8"),
        APPLICATION_JSON: lambda: derived(APPLICATION_JSON),
        APPLICATION_PDF: lambda: derived(APPLICATION_PDF),
    }


def _document(load: Load) -> dict[str, Any]:
    document = json.loads(load(APPLICATION_JSON))
    if not isinstance(document, dict) or not isinstance(document.get("pages"), list):
        raise PartNotFound("the document's JSON format holds no pages")
    return document


def _pages(document: Mapping[str, Any], first: int, last: int) -> list[dict[str, Any]]:
    return [p for p in document["pages"] if first <= p.get("number", 0) <= last]


def _page_texts(load: Load, first: int, last: int) -> str:
    return "\n\n".join(p["text"] for p in _pages(_document(load), first, last) if p["text"])


def _pages_markdown(load: Load, first: int, last: int) -> str:
    markdown = pages_markdown(load(TEXT_MARKDOWN).decode("utf-8"), first, last)
    return markdown if markdown is not None else _page_texts(load, first, last)


def _pages_pdf(part: Part, load: Load, first: int, last: int) -> bytes:
    """A PDF source's own pages; any other source's pages (a deck's slides) are not pages of
    its rendered PDF, so their part renders its own Markdown."""
    record = part.document
    if PdfConverter().accepts(Source.of(record.name, record.mime_type)):
        return pdf_page_range(load(APPLICATION_PDF), first, last)
    return render_markdown_pdf(_pages_markdown(load, first, last), title=part.title)


def _pages_json(load: Load, first: int, last: int) -> bytes:
    """The document's JSON with only these pages and the outline entries that start on them:
    still a ``docshelf.document/v1`` document."""
    document = _document(load)
    document["pages"] = _pages(document, first, last)
    document["outline"] = [
        entry
        for entry in document.get("outline", [])
        if isinstance(entry.get("page"), int) and first <= entry["page"] <= last
    ]
    return json.dumps(document, ensure_ascii=False, indent=2).encode("utf-8")


class PartCache:
    """Parts made recently, up to ``max_bytes`` in all (the oldest go first): a model
    reading a section often reads it again, and a PDF's pages cost a parse to cut.

    Each part is kept in one version, that of the document it was cut from (its content
    hash): once the document changes, the part is made again and replaces the old one,
    which no read can ask for any more (kept, such versions filled the cache on a busy
    shelf)."""

    def __init__(self, max_bytes: int = 32 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, tuple[str | None, bytes]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Parts held."""
        return len(self._entries)

    def get(self, key: Hashable, version: str | None) -> bytes | None:
        """The part under ``key`` if it was cut from this ``version`` of its document."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != version:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def forget(self, gone: Callable[[Hashable], bool]) -> None:
        """Drop the parts whose key ``gone`` says belongs to a document that is no more."""
        with self._lock:
            for key in [key for key in self._entries if gone(key)]:
                self._size -= len(self._entries.pop(key)[1])

    def put(self, key: Hashable, version: str | None, data: bytes) -> None:
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._size -= len(old[1])
            if len(data) > self.max_bytes // 4:
                return  # one big part would push out everything else
            self._entries[key] = (version, data)
            self._size += len(data)
            while self._size > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._size -= len(dropped)
