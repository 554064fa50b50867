"""The resource methods: list, templates, read, and the SEP's ``resources/metadata``.

:class:`ResourceService` answers them from its parts: :class:`Documents` finds a
document and remembers its negotiated formats (app.mcp.documents), :class:`DocumentReads`
reads a whole document (app.mcp.reads), :class:`PartReads` its pages and sections
(app.mcp.parts), and :class:`DocumentBytes` holds the bytes they return, stored formats
made again when the store lost them (storage.document_bytes).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from docshelf.app.mcp import wire
from docshelf.app.mcp.context import RequestContext
from docshelf.app.mcp.cursor import InvalidCursor, decode_cursor, encode_cursor
from docshelf.app.mcp.documents import Documents, resource_object
from docshelf.app.mcp.params import PageParams, UriParams
from docshelf.app.mcp.parts import PartReads, document_parts
from docshelf.app.mcp.reads import DocumentReads, StillConverting, with_omissions
from docshelf.storage.builder import FormatBuilder
from docshelf.storage.catalog import Catalog
from docshelf.storage.document_bytes import DocumentBytes
from docshelf.storage.events import ChangeSet
from docshelf.storage.shelves import AnyShelf, ShelfSet
from docshelf.storage.store import Store


class ResourceService:
    def __init__(
        self,
        catalog: Catalog,
        store: Store,
        shelves: ShelfSet | Sequence[AnyShelf],
        *,
        page_size: int,
        binary_cap: int,
        builder: FormatBuilder,
        max_read_bytes: int,
        build_timeout_s: float,
        read_wait_s: float,
        large_reads: int = 2,
        catalogued: threading.Event | None = None,
        first_list_wait_s: float = 15.0,
    ) -> None:
        self.catalogued = catalogued
        self.first_list_wait_s = first_list_wait_s
        self.max_read_bytes = max_read_bytes
        self.catalog = catalog
        self.shelves = ShelfSet.of(shelves)  # the process's own: a stdio server's roots change it
        self.page_size = page_size
        self.binary_cap = binary_cap
        self.documents = Documents(
            catalog, self.shelves, builder, binary_cap=binary_cap, read_wait_s=read_wait_s
        )
        self.stored = DocumentBytes(
            catalog,
            store,
            self.shelves,
            builder,
            max_read_bytes=max_read_bytes,
            build_timeout_s=build_timeout_s,
        )
        self.reads = DocumentReads(
            self.documents,
            self.stored,
            builder,
            max_read_bytes=max_read_bytes,
            build_timeout_s=build_timeout_s,
            large_reads=large_reads,
        )
        self.parts = PartReads(
            self.documents, self.stored, max_read_bytes=max_read_bytes, binary_cap=binary_cap
        )

    def forget(self, changes: ChangeSet) -> None:
        """Drop what the caches hold of documents that changed or are gone (an event-bus
        hook): no read can ask for those parts or outcomes again, and on a churning shelf
        they filled the caches, a serving process growing for hours (issue 24, item 17)."""
        gone = changes.changed | changes.removed
        if gone:
            self.documents.forget(gone)
            self.stored.forget(gone)

    # -- methods ---------------------------------------------------------------------------

    def list_resources(self, ctx: RequestContext, params: PageParams) -> dict[str, Any]:
        try:
            after = decode_cursor(params.cursor) if params.cursor is not None else None
        except InvalidCursor as exc:
            raise wire.McpError(wire.INVALID_PARAMS, f"Invalid cursor: {exc}") from exc
        self.first_pass()
        records, more = self.catalog.page(after, self.page_size, self.shelves.bound())
        result: dict[str, Any] = {"resources": [resource_object(r) for r in records]}
        if more and records:
            result["nextCursor"] = encode_cursor(records[-1].uri)
        return result

    def first_pass(self) -> None:
        """On a fresh shelf, wait (briefly) for the first catalog pass: most desktop clients
        list once on connect, and a list answered before it would be empty."""
        if self.catalogued is not None and not self.catalogued.is_set():
            self.catalogued.wait(self.first_list_wait_s)

    def catalog_complete(self) -> bool:
        """Whether the shelves' first catalog pass is done (or an index from before was
        there): until then, files not catalogued yet are missing from every answer."""
        return self.catalogued is None or self.catalogued.is_set()

    def templates(self, ctx: RequestContext, params: PageParams) -> dict[str, Any]:
        if params.cursor is not None:
            raise wire.McpError(
                wire.INVALID_PARAMS, "Invalid cursor: the template list has one page"
            )
        return {
            "resourceTemplates": [
                {
                    # RFC 6570: {+path} keeps the path's slashes; {?pages,section} is the
                    # form-style query that names a part (app.mcp.parts).
                    "uriTemplate": f"docshelf://{name}/{{+path}}{{?pages,section}}",
                    "name": name,
                    "title": f"Shelf {name}",
                    "description": (
                        f"Any document on the {name!r} shelf, by its path on the shelf; "
                        "?pages=3 or ?pages=3-5 (at most 50) for pages of a PDF, "
                        "?section=slug for the section under a heading"
                    ),
                }
                for name in sorted(self.shelves)
            ]
        }

    def metadata(self, ctx: RequestContext, params: UriParams) -> dict[str, Any]:
        """SEP §2 ``resources/metadata``: one Resource per representation, from the index only."""
        if "?" in params.uri:
            return self.parts.metadata(ctx, params.uri)
        record = self.documents.require(ctx, params.uri)
        variants, omitted = self.documents.variants(ctx, record)
        described = [resource_object(record, v) for v in variants]
        # Issue #10: the document's _meta says how to address its pages and sections.
        addressable = document_parts(record)
        if addressable is not None:
            for resource in described:
                resource["_meta"][wire.META_DOCSHELF]["parts"] = addressable
        return with_omissions({"metadata": described}, omitted)

    def read(self, ctx: RequestContext, params: UriParams) -> dict[str, Any]:
        return self.read_formats(ctx, params.uri)

    def read_formats(
        self, ctx: RequestContext, uri: str, pick: str | None = None
    ) -> dict[str, Any]:
        """A ``resources/read`` result for a document or a part: every negotiated format,
        or only one (``pick``: a MIME type, or :data:`~app.mcp.reads.BEST` for the
        negotiated first). A MIME type the document is not offered in is -32602 naming
        the ones it is."""
        if "?" in uri:
            return self.parts.read(ctx, uri, pick)
        return self.reads.read(ctx, uri, pick)

    def subscription_uri(self, ctx: RequestContext, uri: str) -> str:
        """What ``resources/subscribe`` keeps for ``uri``: the document's URI, or a part's
        (its subscriber hears about every change to the document). A part of a document
        still being converted past the read wait is kept as given: the document exists,
        and its subscriber hears when it is converted."""
        if "?" not in uri:
            return self.documents.require(ctx, uri).uri
        try:
            return self.parts.require(ctx, uri).uri
        except StillConverting:
            return uri
