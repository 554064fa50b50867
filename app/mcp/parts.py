"""Parts of a document as resources of their own (issue #10).

Every shelf's template is ``docshelf://{shelf}/{+path}{?pages,section}``
(RFC 6570 form-style query). A document URI never holds a literal ``?`` (a file
name's is percent-encoded, storage.uris), so the first ``?`` starts a part:

- ``…/report.pdf?pages=3`` or ``?pages=3-5`` (at most 50 pages) of a
  paginated document;
- ``…/guide.md?section=medium-tests``: the section under that heading, down to
  the next heading of the same or a higher level (converters.parts).

Parts are not listed. They are read, described and subscribed to like
documents, in every derived format, made on demand (``storage.document_bytes``,
``converters.part_formats``) from what the index already holds: the document's
stored JSON and Markdown, and its original PDF. This module reads the query,
checks the part against its document and answers for it.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from docshelf.app.mcp import wire
from docshelf.app.mcp.context import RequestContext, WouldBlock
from docshelf.app.mcp.documents import Documents, iso
from docshelf.app.mcp.reads import (
    BEST,
    BEST_TEXT,
    Omitted,
    best,
    content,
    format_unavailable,
    over_cap,
    still_converting,
    storage_errors,
    with_omissions,
)
from docshelf.app.negotiation import Role, Variant, negotiate
from docshelf.converters import ConversionError
from docshelf.converters.base import OutlineEntry
from docshelf.converters.formats import DERIVED_MIME_TYPES, ROLE_BY_MIME_TYPE, is_textual
from docshelf.converters.parts import (
    MAX_PART_PAGES,
    PartNotFound,
    PartQuery,
    outline_parts,
    unique_slugs,
)
from docshelf.storage.catalog import DocumentRecord
from docshelf.storage.document_bytes import DocumentBytes
from docshelf.storage.models import DocumentState

_PAGES = re.compile(r"^([0-9]{1,9})(?:-([0-9]{1,9}))?$")


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

    def resource(self, mime_type: str) -> dict[str, Any]:
        """The part's ``Resource`` in ``mime_type``."""
        record = self.document
        return {
            "uri": self.uri,
            "name": f"{record.path}?{self.query.query}",
            "title": self.title,
            "mimeType": mime_type,
            "annotations": {"lastModified": iso(record)},
            "_meta": {
                wire.META_DOCSHELF: {"shelf": record.shelf, "path": record.path, "part": self.meta}
            },
        }


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


class PartReads:
    """Parts as resources: checked against their document, described and read."""

    def __init__(
        self, documents: Documents, stored: DocumentBytes, *, max_read_bytes: int, binary_cap: int
    ) -> None:
        self.documents = documents
        self.stored = stored
        self.max_read_bytes = max_read_bytes
        self.binary_cap = binary_cap

    def require(self, ctx: RequestContext, uri: str) -> Part:
        """The part ``uri`` names; the era's resource-not-found error, with the reason in
        ``data``, if its document or the part does not exist.

        Which parts exist is known once the document is converted (its pages, its
        headings): a document still waiting for that is converted now, as a whole-document
        read would do (issue "Nothing lost on a first read"), for as long as a read waits;
        past that, :func:`still_converting`.
        """
        document_uri, query = split_uri(uri)
        record = self.documents.converted(ctx, self.documents.require(ctx, document_uri))
        if record.pending:
            raise still_converting(uri, "to know its parts")
        with _part_errors(ctx, uri):
            return check(record, parse_query(query or ""), uri)

    def metadata(self, ctx: RequestContext, uri: str) -> dict[str, Any]:
        part = self.require(ctx, uri)
        formats, omitted = self._formats(ctx, part)
        return with_omissions({"metadata": [part.resource(mime) for mime in formats]}, omitted)

    def read(self, ctx: RequestContext, uri: str, pick: str | None) -> dict[str, Any]:
        """The part's formats (``pick``: as for a document), made from its document's and
        kept a while; those that would take the read over its cap are left out."""
        if not ctx.may_block:
            raise WouldBlock  # parts are made from files: a worker thread's job
        part = self.require(ctx, uri)
        formats, omitted = self._picked(ctx, part, pick)
        contents: list[dict[str, Any]] = []
        total = 0
        with _part_errors(ctx, uri), storage_errors(ctx, part.document.uri):
            for mime, data in self.stored.part(part.document, part.query, part.title, formats):
                if total + len(data) > self.max_read_bytes:
                    omitted.append(over_cap(mime, len(data), self.max_read_bytes))
                    continue
                total += len(data)
                contents.append(content(part.resource(mime), data))
        return with_omissions({"contents": contents}, omitted)

    def _picked(
        self, ctx: RequestContext, part: Part, pick: str | None
    ) -> tuple[list[str], Omitted]:
        if pick is None:
            return self._formats(ctx, part)
        if pick in (BEST, BEST_TEXT):
            return best(self._formats(ctx, part)[0], pick, str), []
        if pick not in DERIVED_MIME_TYPES:
            raise format_unavailable(part.uri, pick, DERIVED_MIME_TYPES)
        return [pick], []

    def _formats(self, ctx: RequestContext, part: Part) -> tuple[list[str], Omitted]:
        """The part's formats in negotiated order, and those left out. A part's format is the
        document's original role when it has the original's type (a PDF's pages, a Markdown
        file's section)."""
        candidates = [
            Variant(
                mime,
                Role.ORIGINAL if mime == part.document.mime_type else ROLE_BY_MIME_TYPE[mime],
                0,
                not is_textual(mime),
            )
            for mime in DERIVED_MIME_TYPES
        ]
        candidates.sort(key=lambda v: v.role is not Role.ORIGINAL)
        selection = negotiate(candidates, ctx.features, binary_cap=self.binary_cap)
        omitted = [{"mimeType": o.mime_type, "reason": o.reason} for o in selection.omitted]
        return [v.mime_type for v in selection.variants], omitted


@contextlib.contextmanager
def _part_errors(ctx: RequestContext, uri: str) -> Iterator[None]:
    """A part that does not exist is not found, with the reason in ``data``; one that cannot
    be made is an internal error."""
    try:
        yield
    except PartNotFound as exc:
        error = ctx.era.resource_not_found(uri)
        error.data = {"uri": uri, "reason": exc.reason}
        raise error from None
    except ConversionError as exc:
        raise wire.McpError(
            wire.INTERNAL_ERROR,
            f"Cannot make {uri}: {exc.message}",
            {"uri": uri, "reason": exc.reason},
        ) from exc
