"""The tools (server/tools): ``search_documents`` and ``read_document`` (issue #10).

Resources are how a client application reads the shelf; tools are how a model
finds its way around it on its own. ``search_documents`` answers with links to
the pages and sections that matched; ``read_document`` returns one document or
part for clients that call tools but never read resources themselves.

Errors a model can fix (a bad query, an unknown URI, a format the document is
not offered in) are tool results with ``isError: true`` and a message saying
what to do instead (server/tools "Error Handling": "Tool Execution Errors ...
contain actionable feedback that language models can use to self-correct").
An unknown tool name is a protocol error, -32602.

Results follow the content negotiation SEP ("Tool Results"): an ``agent`` or
``format=json`` client gets the structured result first, serialized as JSON
text; a ``human`` client (and one that declared nothing) a Markdown list first;
``verbosity=compact`` shortens the snippets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from docshelf.app.mcp import wire
from docshelf.app.mcp.completeness import (
    COMPLETENESS_PROPERTIES,
    NOTICE_PROPERTY,
    what_was_not_read,
)
from docshelf.app.mcp.context import RequestContext
from docshelf.app.mcp.listing import LIST, ListingTool
from docshelf.app.mcp.params import CallToolParams, PageParams
from docshelf.app.mcp.reads import BEST, BEST_TEXT
from docshelf.app.mcp.resources import ResourceService
from docshelf.app.mcp.toolkit import (
    Arguments,
    ToolInputError,
    negotiated_result,
    tool_error,
)
from docshelf.app.negotiation import shapes_output, tool_result_style
from docshelf.converters.formats import DERIVED_FORMATS, DERIVED_MIME_TYPES
from docshelf.storage.listing import DocumentListing
from docshelf.storage.search import MAX_LIMIT, Filters, InvalidQuery, SearchHit, SearchIndex

SEARCH = "search_documents"
READ = "read_document"
META_DOCUMENT_URI = "dev.docshelf/documentUri"

# Snippet length in words: a compact client gets a glimpse, others a sentence or two.
SNIPPET_WORDS = {True: 8, False: 24}

#: read_document's ``format`` names (the content negotiation SEP's format tags), in the
#: order a client with no preferences gets them.
FORMATS: Mapping[str, str] = {
    f.role.value: f.mime_type for f in sorted(DERIVED_FORMATS, key=lambda f: f.default_rank)
}


SEARCH_ARGUMENTS = frozenset({"query", "shelf", "mime_type", "path_prefix", "limit"})


_HIT_SCHEMA = {
    "type": "object",
    "properties": {
        "uri": {"type": "string", "description": "What matched: a page or section, or a document"},
        "documentUri": {"type": "string", "description": "The document it belongs to"},
        "title": {"type": "string", "description": "The document's title"},
        "heading": {
            "type": ["string", "null"],
            "description": "The section heading or page that matched; null for the document",
        },
        "path": {"type": "string"},
        "shelf": {"type": "string"},
        "mimeType": {"type": "string", "description": "The document's original type"},
        "snippet": {"type": "string", "description": "Matching text, terms in **bold**"},
        "score": {"type": "number", "description": "Relevance; higher is better"},
        "allTerms": {"type": "boolean", "description": "Whether every query term matched"},
    },
    "required": [
        "uri",
        "documentUri",
        "title",
        "heading",
        "path",
        "shelf",
        "mimeType",
        "snippet",
        "score",
        "allTerms",
    ],
    "additionalProperties": False,
}


def _search_tool(shelves: Sequence[str]) -> dict[str, Any]:
    return {
        "name": SEARCH,
        "title": "Search documents",
        "description": (
            "Full-text search over every document on the shelf (PDF, Markdown, HTML, text, "
            "DOCX, CSV, JSON), by content, title and path. Returns the best-matching pages and "
            "sections, each as a link you can read with read_document (or resources/read) "
            "without loading the whole document. Query syntax: words (all must match, "
            'stemmed), "an exact phrase", and prefix* for word beginnings. When no document '
            "has every word, documents with some of them follow, marked as partial matches."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": 'What to look for: words, "a phrase" or prefix*',
                    "minLength": 1,
                    "maxLength": 500,
                },
                "shelf": {
                    "type": "string",
                    "description": "Only this shelf",
                    **({"enum": list(shelves)} if shelves else {}),
                },
                "mime_type": {
                    "type": "string",
                    "description": "Only documents of this original type, e.g. application/pdf",
                },
                "path_prefix": {
                    "type": "string",
                    "description": "Only documents whose path starts with this, e.g. guides/",
                },
                "limit": {
                    "type": "integer",
                    "description": f"How many hits at most (default 10, at most {MAX_LIMIT})",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "default": 10,
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "hits": {"type": "array", "items": _HIT_SCHEMA},
                # Honest search (issue 28): what the answer could not read.
                **COMPLETENESS_PROPERTIES,
                **NOTICE_PROPERTY,
            },
            "required": ["query", "hits", *COMPLETENESS_PROPERTIES],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False, "idempotentHint": True},
    }


READ_TOOL: dict[str, Any] = {
    "name": READ,
    "title": "Read a document",
    "description": (
        "Read one document, or one part of it, from the shelf by its docshelf:// URI (as "
        "returned by search_documents or listed as a resource). Parts keep long documents "
        "small: append ?pages=3 or ?pages=3-5 (at most 50 pages) to a PDF's URI, or "
        "?section=slug to a Markdown, HTML or DOCX document's URI for the section under that "
        "heading. Returns the best format for you (Markdown for most documents) unless you "
        "ask for one: markdown, text, json (structure: pages, sections, tables, links) or pdf."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "uri": {
                "type": "string",
                "description": "docshelf://shelf/path, optionally with ?pages=… or ?section=…",
            },
            "format": {
                "type": "string",
                "enum": list(FORMATS),
                "description": "The format to return; default: the best for you",
            },
        },
        "required": ["uri"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True, "openWorldHint": False, "idempotentHint": True},
}


class ToolService:
    def __init__(self, resources: ResourceService, search: SearchIndex) -> None:
        self.resources = resources
        self.search = search
        # A stdio server following its client's roots starts with none, so its search tool
        # names no shelves: the tool list never changes while serving.
        shelves = sorted(resources.shelves)
        listing = ListingTool(
            DocumentListing(search.database),
            resources.shelves,
            resources.catalog_complete,
            resources.shelves.bound,
        )
        self.tools: list[dict[str, Any]] = [_search_tool(shelves), READ_TOOL, listing.definition]
        self._calls: Mapping[str, Callable[[RequestContext, Mapping[str, Any]], dict[str, Any]]]
        self._calls = {SEARCH: self._search, READ: self._read, LIST: listing.call}

    def list_tools(self, ctx: RequestContext, params: PageParams) -> dict[str, Any]:
        """server/tools "Listing Tools" (one page: there are three)."""
        if params.cursor is not None:
            raise wire.McpError(wire.INVALID_PARAMS, "Invalid cursor: the tool list has one page")
        return {"tools": self.tools}

    def call(self, ctx: RequestContext, params: CallToolParams) -> dict[str, Any]:
        """server/tools "Calling Tools"."""
        call = self._calls.get(params.name)
        if call is None:
            # server/tools "Error Handling": unknown tools are a protocol error (-32602).
            raise wire.McpError(
                wire.INVALID_PARAMS,
                f"Unknown tool: {params.name!r}; this server has {SEARCH}, {READ} and {LIST}",
                {"name": params.name},
            )
        try:
            return call(ctx, params.arguments)
        except ToolInputError as exc:
            return tool_error(f"{params.name}: {exc}")

    # -- search_documents ------------------------------------------------------------------

    def _search(self, ctx: RequestContext, arguments: Mapping[str, Any]) -> dict[str, Any]:
        args = Arguments(arguments, SEARCH_ARGUMENTS)
        args.check()
        query = args.string("query", required=True) or ""
        shelf = args.shelf(self.resources.shelves)
        style = tool_result_style(ctx.features)
        filters = Filters(
            shelf,
            args.string("mime_type"),
            args.string("path_prefix"),
            self.resources.shelves.bound(),
        )
        try:
            hits = self.search.search(
                query,
                filters=filters,
                limit=args.integer("limit", 10, 1, MAX_LIMIT),
                snippet_words=SNIPPET_WORDS[style.compact],
            )
        except InvalidQuery as exc:
            raise ToolInputError(str(exc)) from None
        # Honest search (issue 28): what the answer could not see is part of the answer.
        unread = what_was_not_read(
            self.search.database, filters, self.resources.shelves, self.resources.catalog_complete()
        )
        structured = {"query": query, "hits": [_hit(h) for h in hits], **unread}
        notice = unread.get("notice")
        links = [_link(h) for h in hits]
        documents = {h.document_uri: h for h in hits if h.part}
        linked = {h.uri for h in hits}
        links += [_document_link(h) for uri, h in documents.items() if uri not in linked]
        return negotiated_result(style, structured, lambda: _markdown(query, hits, notice), links)

    # -- read_document ---------------------------------------------------------------------

    def _read(self, ctx: RequestContext, arguments: Mapping[str, Any]) -> dict[str, Any]:
        args = Arguments(arguments, frozenset({"uri", "format"}))
        args.check()
        uri = args.string("uri", required=True) or ""
        name = args.string("format")
        if name is not None and name not in FORMATS:
            raise ToolInputError(f"format must be one of {', '.join(FORMATS)}")
        try:
            # A client that negotiated nothing gets text it can read, not a PDF's bytes.
            default = BEST if shapes_output(ctx.features) else BEST_TEXT
            result = self.resources.read_formats(
                ctx, uri, FORMATS[name] if name is not None else default
            )
        except wire.McpError as exc:
            return tool_error(_read_failure(uri, exc))
        contents = result["contents"]
        if not contents:
            return tool_error(f"read_document: {uri} could not be read in any format")
        return {
            "content": [{"type": "resource", "resource": embedded_resource(c)} for c in contents],
            "isError": False,
        }


def _read_failure(uri: str, error: wire.McpError) -> str:
    data = error.data if isinstance(error.data, dict) else {}
    if error.message == "Resource not found":
        reason = data.get("reason")
        if reason:
            return f"read_document: {uri} does not exist: {reason}"
        return (
            f"read_document: there is no document at {uri}; find documents with "
            "search_documents (its hits carry the URIs to read)"
        )
    return f"read_document: {error.message}"


def embedded_resource(content: Mapping[str, Any]) -> dict[str, Any]:
    """A read's contents entry as an embedded resource (uri, mimeType, text or blob, _meta)."""
    keep = ("uri", "mimeType", "text", "blob", "_meta")
    return {key: content[key] for key in keep if key in content}


def _hit(hit: SearchHit) -> dict[str, Any]:
    return {
        "uri": hit.uri,
        "documentUri": hit.document_uri,
        "title": hit.title,
        "heading": hit.heading,
        "path": hit.path,
        "shelf": hit.shelf,
        "mimeType": hit.mime_type,
        "snippet": hit.snippet,
        "score": round(hit.score, 4),
        "allTerms": not hit.partial,
    }


def _link(hit: SearchHit) -> dict[str, Any]:
    """A ``resource_link`` to what matched (server/tools "Resource Links")."""
    name = f"{hit.path}?{hit.part}" if hit.part else hit.path
    title = f"{hit.title} — {hit.heading}" if hit.heading else hit.title
    link: dict[str, Any] = {
        "type": "resource_link",
        "uri": hit.uri,
        "name": name,
        "title": title,
        "description": hit.snippet,
    }
    # A part is offered in the derived formats only: an HTML page's section is no HTML.
    if not hit.part or hit.mime_type in DERIVED_MIME_TYPES:
        link["mimeType"] = hit.mime_type
    link["_meta"] = {META_DOCUMENT_URI: hit.document_uri}
    return link


def _document_link(hit: SearchHit) -> dict[str, Any]:
    return {
        "type": "resource_link",
        "uri": hit.document_uri,
        "name": hit.path,
        "title": hit.title,
        "mimeType": hit.mime_type,
    }


def _markdown(query: str, hits: Sequence[SearchHit], notice: str | None) -> str:
    """The hits as a readable Markdown list, and what the search could not read."""
    after = f"\n\n{notice}" if notice else ""
    if not hits:
        return f"No documents match {query!r}. Try fewer or other words, or a prefix*.{after}"
    lines = [f"{len(hits)} result{'s' if len(hits) != 1 else ''} for {query!r}:", ""]
    for number, hit in enumerate(hits, start=1):
        where = f" — {hit.heading}" if hit.heading else ""
        partial = " (some of the words)" if hit.partial else ""
        lines.append(f"{number}. **{hit.title}**{where}{partial}  ")
        lines.append(f"   `{hit.uri}`  ")
        if hit.snippet:
            lines.append(f"   {hit.snippet}")
    return "\n".join(lines) + after
