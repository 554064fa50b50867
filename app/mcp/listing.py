"""The ``list_documents`` tool (issue 28): what is on the shelf, without guessing words.

A client that only calls tools cannot page through ``resources/list``; a model that
wants "the PDFs under reports/, newest first" should not have to search for words it
does not know yet. ``list_documents`` answers with one ``resource_link`` per document
(server/tools "Resource Links"), readable with ``read_document``, and the same
documents as ``structuredContent`` under an ``outputSchema`` (server/tools "Structured
Content", "Output Schema"), in the shape the client negotiated (the content negotiation
SEP's "Tool Results", :func:`app.mcp.toolkit.negotiated_result`).

Pages are cut by keyset (:mod:`storage.listing`), so every page of 100,000 documents
costs what the first does in every order; the total is counted on the first page only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC
from typing import Any

from docshelf.app.mcp import wire
from docshelf.app.mcp.context import RequestContext
from docshelf.app.mcp.listing_request import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MODIFIED_HELP,
    SORTS,
    TYPE_HELP,
    ListingRequest,
    parse_request,
)
from docshelf.app.mcp.toolkit import negotiated_result
from docshelf.app.negotiation import tool_result_style
from docshelf.converters.members import human_size
from docshelf.storage.listing import DocumentListing, ListedDocument, Page, Sort

LIST = "list_documents"

_ORDER_NAMES = {Sort.PATH: "by path", Sort.MODIFIED: "newest first", Sort.SIZE: "largest first"}
#: What a document's state means to someone choosing what to read.
_STATE_NOTES = {
    "pending": "converting",
    "failed": "could not be converted: original only",
    "unsupported": "no converter reads it: original only",
}

_DOCUMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "uri": {"type": "string", "description": "Read it with read_document"},
        "title": {"type": "string"},
        "path": {"type": "string", "description": "Its path on the shelf"},
        "shelf": {"type": "string"},
        "mimeType": {"type": "string", "description": "The original file's type"},
        "size": {"type": "integer", "minimum": 0, "description": "The original's bytes"},
        "modified": {
            "type": "string",
            "format": "date-time",
            "description": "When the file last changed (UTC)",
        },
        "pages": {"type": "integer", "minimum": 0, "description": "Pages or slides, if paged"},
        "state": {
            "type": "string",
            "enum": ["pending", "ready", "failed", "unsupported"],
            "description": "ready: every format is there; pending: converting; failed or "
            "unsupported: only the original",
        },
        "description": {"type": "string", "description": "What it is about, in a sentence"},
    },
    "required": ["uri", "title", "path", "shelf", "mimeType", "size", "modified", "state"],
    "additionalProperties": False,
}


def list_tool(shelves: Sequence[str]) -> dict[str, Any]:
    """The tool's definition (server/tools "Tool")."""
    return {
        "name": LIST,
        "title": "List documents",
        "description": (
            "List the documents on the shelf without searching: all of them, or those under "
            "a folder (path_prefix), of one kind (type: pdf, word, slides, spreadsheet, "
            "markdown, image, … or a MIME type) or changed since a date (modified_after); by "
            "path, newest first or largest first. Each is a link you can read with "
            "read_document. Long listings come in pages: pass the nextCursor of one answer "
            "as cursor to get the next."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "shelf": {
                    "type": "string",
                    "description": "Only this shelf",
                    **({"enum": list(shelves)} if shelves else {}),
                },
                "path_prefix": {
                    "type": "string",
                    "description": "Only documents whose path starts with this, e.g. reports/",
                },
                "type": {"type": "string", "description": f"Only documents of a kind: {TYPE_HELP}"},
                "modified_after": {
                    "type": "string",
                    "description": f"Only documents changed after this moment: {MODIFIED_HELP} "
                    "(UTC unless it has an offset; a date means its first moment)",
                },
                "sort": {
                    "type": "string",
                    "enum": list(SORTS),
                    "default": Sort.PATH.value,
                    "description": "path (default), modified (newest first) or size "
                    "(largest first)",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "default": DEFAULT_LIMIT,
                    "description": f"Documents per page (default {DEFAULT_LIMIT}, at most "
                    f"{MAX_LIMIT})",
                },
                "cursor": {
                    "type": "string",
                    "description": "The nextCursor of the previous page, with the same other "
                    "arguments",
                },
            },
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "documents": {"type": "array", "items": _DOCUMENT_SCHEMA},
                "nextCursor": {
                    "type": "string",
                    "description": "Pass as cursor for the next page; absent on the last page",
                },
                "total": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "How many documents match in all (on the first page only)",
                },
                "catalogComplete": {
                    "type": "boolean",
                    "description": "false while the shelf's first catalog pass runs: "
                    "documents not catalogued yet are missing",
                },
            },
            "required": ["documents", "catalogComplete"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False, "idempotentHint": True},
    }


class ListingTool:
    """``list_documents``: arguments in, a page of the catalog out."""

    def __init__(
        self,
        listing: DocumentListing,
        shelves: Collection[str],
        catalogued: Callable[[], bool] = lambda: True,
        served: Callable[[], tuple[str, ...] | None] = lambda: None,
    ) -> None:
        """``catalogued``: whether the first catalog pass has finished (it waits briefly
        for it, as ``resources/list`` does, and says so if it has not)."""
        self.listing = listing
        self.shelves = shelves
        self.catalogued = catalogued
        self.served = served
        self.definition = list_tool(sorted(shelves))

    def call(self, ctx: RequestContext, arguments: Mapping[str, Any]) -> dict[str, Any]:
        request = parse_request(arguments, self.shelves)
        complete = self.catalogued()
        where = dataclasses.replace(request.where, served=self.served())
        page = self.listing.page(
            where, request.sort, request.limit, request.after, count=request.after is None
        )
        style = tool_result_style(ctx.features)
        documents = [_document(d, with_description=not style.compact) for d in page.documents]
        structured: dict[str, Any] = {"documents": documents, "catalogComplete": complete}
        next_cursor = None
        if page.more and page.documents:
            next_cursor = request.cursor_after(page.documents[-1].position(request.sort))
            structured["nextCursor"] = next_cursor
        if page.total is not None:
            structured["total"] = page.total
        links = [_link(d, with_description=not style.compact) for d in page.documents]
        return negotiated_result(
            style, structured, lambda: _markdown(request, page, next_cursor, complete), links
        )


def _modified(document: ListedDocument) -> str:
    return document.modified_at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _document(document: ListedDocument, *, with_description: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "uri": document.uri,
        "title": document.title,
        "path": document.path,
        "shelf": document.shelf,
        "mimeType": document.mime_type,
        "size": document.size,
        "modified": _modified(document),
        "state": str(document.state),
    }
    if document.page_count is not None:
        entry["pages"] = document.page_count
    if with_description and document.description:
        entry["description"] = document.description
    return entry


def _link(document: ListedDocument, *, with_description: bool) -> dict[str, Any]:
    """A ``resource_link`` to the document, with the fields and annotations a resource in
    ``resources/list`` has (server/tools "Resource Links")."""
    meta: dict[str, Any] = {"shelf": document.shelf, "path": document.path}
    meta["state"] = str(document.state)
    if document.page_count is not None:
        meta["pageCount"] = document.page_count
    link: dict[str, Any] = {
        "type": "resource_link",
        "uri": document.uri,
        "name": document.path,
        "title": document.title,
        "mimeType": document.mime_type,
        "size": document.size,
        "annotations": {"lastModified": _modified(document)},
        "_meta": {wire.META_DOCSHELF: meta},
    }
    if with_description and document.description:
        link["description"] = document.description
    return link


def _markdown(request: ListingRequest, page: Page, next_cursor: str | None, complete: bool) -> str:
    """The page as a readable Markdown list."""
    lines = []
    if not complete:
        lines += [
            "The shelf is still being catalogued: documents not catalogued yet are missing "
            "from this list; list again shortly.",
            "",
        ]
    order = _ORDER_NAMES[request.sort]
    if not page.documents:
        what = "No documents match these arguments" if request.after is None else "No more"
        lines.append(f"{what} (sorted {order}).")
        return "\n".join(lines)
    total = f" of {page.total:,}" if page.total is not None else ""
    count = len(page.documents)
    lines += [f"{count} document{'s' if count != 1 else ''}{total}, {order}:", ""]
    for number, document in enumerate(page.documents, start=1):
        facts = [document.mime_type, human_size(document.size), f"modified {_modified(document)}"]
        if document.page_count is not None:
            facts.append(f"{document.page_count} page{'s' if document.page_count != 1 else ''}")
        if note := _STATE_NOTES.get(str(document.state)):
            facts.append(note)
        lines.append(f"{number}. **{document.title}** — `{document.path}` ({', '.join(facts)})  ")
        lines.append(f"   `{document.uri}`")
    if next_cursor is not None:
        lines += [
            "",
            f'More follow: call {LIST} again with the same arguments and cursor "{next_cursor}".',
        ]
    return "\n".join(lines)
