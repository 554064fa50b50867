"""The official Python SDK client calls docshelf's tools, completes its template and reads
parts of documents (issue #10): over Streamable HTTP and stdio, in both protocol eras.

One connected ``mcp.Client`` per transport and era serves the whole module (a stdio child
costs seconds to start and stop, an HTTP session next to nothing), so every test below also
proves that the session it inherits from the tests before it still works. The HTTP peer is
the shared ``shelf_server``; the stdio peer runs ``docshelf stdio`` over the pre-indexed
``indexed_shelf``. Both shelves are ``make_shelf``'s, named ``shelf``.

The SDK parses every response with its own models and, for ``tools/call``, checks
``structuredContent`` against the tool's ``outputSchema``; each result is also fetched as
sent and validated against the era's ``schema.json``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from tests.support.peers import Peer
from tests.support.schema import validate
from tests.support.sdk import (
    content_negotiation,
    http_client,
    raw_metadata,
    raw_read,
    raw_result,
)
from tests.support.servers import LEGACY, MODERN, NOT_FOUND, RunningServer
from tests.support.shelves import MARKDOWN

pytestmark = pytest.mark.anyio

SEARCH = "search_documents"
READ = "read_document"
LIST = "list_documents"

TEMPLATE = "docshelf://shelf/{+path}{?pages,section}"
PDF = "docshelf://shelf/papers/pdflatex-4-pages.pdf"  # four pages of the same filler text
GUIDE = "docshelf://shelf/guides/field-guide.md"  # one heading: "# Field guide"
GUIDE_SECTION = f"{GUIDE}?section=field-guide"
PDF_PAGES = {f"{PDF}?pages={n}" for n in range(1, 5)}
#: Every format a part is offered in (converters.formats.DERIVED_MIME_TYPES).
PART_TYPES = {"text/plain", "text/markdown", "application/json", "application/pdf"}
#: The field guide's one section, as its Markdown has it: from its heading to the end.
SECTION_MARKDOWN = MARKDOWN[MARKDOWN.index("# Field guide") :]


# --------------------------------------------------------------------------- #
# One SDK session per transport and era, for the whole module
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so the module-scoped ``peer`` (tests.support.peers) may be async."""
    return "asyncio"


# --------------------------------------------------------------------------- #
# Helpers: each fetches a result twice, as sent (validated) and parsed by the SDK
# --------------------------------------------------------------------------- #


async def call(peer: Peer, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """``tools/call`` through the SDK (which checks structuredContent against the tool's
    outputSchema), after the same call as sent has passed the era's schema."""
    request = types.CallToolRequest(
        params=types.CallToolRequestParams(name=name, arguments=arguments)
    )
    validate(peer.era, "CallToolResult", await raw_result(peer.client, request))
    return await peer.client.call_tool(name, arguments)


def tool_error(result: types.CallToolResult) -> str:
    """The message of an ``isError`` result: one text block, no structured content."""
    assert result.is_error is True
    assert result.structured_content is None
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def embedded(
    result: types.CallToolResult,
) -> types.TextResourceContents | types.BlobResourceContents:
    """The one embedded resource a successful ``read_document`` returns."""
    assert result.is_error is False
    [block] = result.content
    assert isinstance(block, types.EmbeddedResource)
    return block.resource


def embedded_text(result: types.CallToolResult, uri: str, mime_type: str) -> str:
    resource = embedded(result)
    assert isinstance(resource, types.TextResourceContents)
    assert (resource.uri, resource.mime_type) == (uri, mime_type)
    return resource.text


async def complete(
    peer: Peer, argument: str, value: str, context: dict[str, str] | None = None
) -> types.Completion:
    """``completion/complete`` of the shelf's template (as listed) through the SDK."""
    [template] = (await peer.client.list_resource_templates()).resource_templates
    assert template.uri_template == TEMPLATE
    ref = types.ResourceTemplateReference(uri=template.uri_template)
    request = types.CompleteRequest(
        params=types.CompleteRequestParams(
            ref=ref,
            argument=types.CompletionArgument(name=argument, value=value),
            context=types.CompletionContext(arguments=context) if context else None,
        )
    )
    validate(peer.era, "CompleteResult", await raw_result(peer.client, request))
    result = await peer.client.complete(ref, {"name": argument, "value": value}, context)
    return result.completion


# --------------------------------------------------------------------------- #
# tools/list
# --------------------------------------------------------------------------- #


async def test_lists_the_three_tools_with_schemas_and_hints(peer: Peer) -> None:
    validate(peer.era, "ListToolsResult", await raw_result(peer.client, types.ListToolsRequest()))
    listed = await peer.client.list_tools()
    assert listed.next_cursor is None
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {SEARCH, READ, LIST}
    for tool in tools.values():
        assert tool.title and tool.description
        assert tool.input_schema["type"] == "object"
        Draft202012Validator.check_schema(tool.input_schema)
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.open_world_hint is False
    search, read = tools[SEARCH], tools[READ]
    assert search.input_schema["required"] == ["query"]
    assert {"query", "shelf", "mime_type", "path_prefix", "limit"} == set(
        search.input_schema["properties"]
    )
    assert search.output_schema is not None
    Draft202012Validator.check_schema(search.output_schema)
    assert search.output_schema["required"] == [
        "query",
        "hits",
        "pending",
        "unsearchable",
        "ocrPending",
        "catalogComplete",
    ]
    assert read.input_schema["required"] == ["uri"]
    assert read.input_schema["properties"]["format"]["enum"] == ["markdown", "text", "json", "pdf"]
    assert read.output_schema is None  # its result is an embedded resource, not structure
    listing = tools[LIST]
    assert listing.output_schema is not None
    Draft202012Validator.check_schema(listing.output_schema)
    assert listing.output_schema["required"] == ["documents", "catalogComplete"]


# --------------------------------------------------------------------------- #
# search_documents
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        pytest.param("gefburn", PDF_PAGES, id="pdf-pages"),  # in the filler text of pages 1-3
        pytest.param("week", {GUIDE_SECTION}, id="markdown-section"),  # under "# Field guide"
    ],
)
async def test_search_links_to_the_parts_that_matched(
    peer: Peer, query: str, parts: set[str]
) -> None:
    [search] = [t for t in (await peer.client.list_tools()).tools if t.name == SEARCH]
    result = await call(peer, SEARCH, {"query": query})  # no complaint from the SDK's check
    assert result.is_error is False
    # The SDK's own outputSchema check, done again here so it cannot have been skipped.
    assert search.output_schema is not None
    Draft202012Validator(search.output_schema).validate(result.structured_content)

    summary, *blocks = result.content
    assert isinstance(summary, types.TextContent) and query in summary.text
    links = {block.uri: block for block in blocks if isinstance(block, types.ResourceLink)}
    assert len(links) == len(blocks), "after the summary, only resource links"

    assert result.structured_content is not None
    structured = result.structured_content
    assert structured["query"] == query
    hits = structured["hits"]
    assert hits and all(hit["allTerms"] for hit in hits)
    assert {hit["uri"] for hit in hits} <= set(links), "every hit is linked"
    matched = {hit["uri"] for hit in hits if "?" in hit["uri"]}
    assert matched and matched <= parts, f"{query!r} matched {matched}, not parts of {parts}"
    for uri in matched:
        link = links[uri]
        [hit] = [h for h in hits if h["uri"] == uri]
        assert link.name == f"{hit['path']}?{uri.partition('?')[2]}"
        assert link.meta == {"dev.docshelf/documentUri": hit["documentUri"]}
        assert uri.startswith(hit["documentUri"] + "?")
        assert hit["heading"] and link.title == f"{hit['title']} — {hit['heading']}"
        assert link.description == hit["snippet"]

    # A link is something to read: the first part through resources/read.
    first = next(hit["uri"] for hit in hits if "?" in hit["uri"])
    read = await peer.client.read_resource(first)
    assert read.contents and {entry.uri for entry in read.contents} == {first}


BAD_SEARCHES = [
    ({"query": ""}, "query must be a non-empty string"),
    ({"query": "***"}, "the query has no words to search for"),
    ({"query": "x" * 501}, "the query is 501 characters; at most 500"),
    ({"query": "week", "limit": 0}, "limit must be an integer from 1 to 50"),
    ({"query": "week", "shelf": "attic"}, "there is no shelf 'attic'; the shelves are: shelf"),
    ({"query": "week", "sort": "date"}, "unknown argument sort"),
]


async def test_search_mistakes_are_tool_errors_and_the_session_carries_on(peer: Peer) -> None:
    for arguments, message in BAD_SEARCHES:
        text = tool_error(await call(peer, SEARCH, arguments))
        assert text.startswith(f"{SEARCH}: ") and message in text, text
    # The same session still searches, and the SDK still checks results against the schema.
    again = await call(peer, SEARCH, {"query": "week"})
    assert again.is_error is False
    assert again.structured_content is not None
    assert [hit["uri"] for hit in again.structured_content["hits"]] == [GUIDE_SECTION]


async def test_search_filters_by_type_and_by_exact_path_prefix(peer: Peer) -> None:
    async def hits(**filters: str) -> list[str]:
        result = await call(peer, SEARCH, {"query": "hello", **filters})
        assert result.is_error is False and result.structured_content is not None
        return [hit["uri"] for hit in result.structured_content["hits"]]

    everywhere = await hits()
    assert GUIDE_SECTION in everywhere and f"{PDF}?pages=1" in everywhere
    pdfs = await hits(mime_type="application/pdf")
    assert pdfs and all(uri.startswith(PDF) for uri in pdfs)
    assert await hits(path_prefix="guides/") == [GUIDE_SECTION]
    assert await hits(path_prefix="_uides/") == []  # no LIKE wildcards
    # Paths are case-sensitive, as everywhere else (URIs, completion, PostgreSQL): on a
    # case-sensitive shelf GUIDES/ is another folder, and this shelf has none.
    assert await hits(path_prefix="GUIDES/") == []


async def test_an_unknown_tool_is_a_protocol_error(peer: Peer) -> None:
    with pytest.raises(MCPError) as caught:
        await peer.client.call_tool("delete_documents", {})
    assert caught.value.error.code == -32602
    assert SEARCH in caught.value.error.message and READ in caught.value.error.message
    assert LIST in caught.value.error.message
    assert len((await peer.client.list_tools()).tools) == 3  # and the session goes on


@pytest.mark.parametrize("era", [MODERN, LEGACY])
async def test_an_agent_gets_tool_results_structured_first(
    shelf_server: RunningServer, era: str
) -> None:
    """The content negotiation SEP's "Tool Results": ``agent`` puts the structured result
    first, as JSON text, and picks a part's format for a model; ``verbosity=compact``
    shortens the snippets. Over HTTP only: stdio declares the same settings the same way."""
    agent = content_negotiation(["agent", "verbosity=compact"])
    async with (
        http_client(shelf_server.url, era, extensions=[agent]) as client,
        http_client(shelf_server.url, era) as plain,
    ):
        peer = Peer(client, era)
        result = await call(peer, SEARCH, {"query": "gefburn"})
        first = result.content[0]
        assert isinstance(first, types.TextContent)
        assert json.loads(first.text) == result.structured_content
        assert result.structured_content is not None
        compact = result.structured_content["hits"]
        default = (await plain.call_tool(SEARCH, {"query": "gefburn"})).structured_content
        assert default is not None
        assert [hit["uri"] for hit in compact] == [hit["uri"] for hit in default["hits"]]
        for short, long in zip(compact, default["hits"], strict=True):
            assert len(short["snippet"].split()) < len(long["snippet"].split())

        uri = f"{PDF}?pages=3"
        document = json.loads(
            embedded_text(await call(peer, READ, {"uri": uri}), uri, "application/json")
        )
        assert [page["number"] for page in document["pages"]] == [3]


# --------------------------------------------------------------------------- #
# list_documents
# --------------------------------------------------------------------------- #


async def listed_pages(peer: Peer, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Every page of a ``list_documents`` listing through the SDK (which checks each
    against the tool's outputSchema), following nextCursor; each document linked once."""
    pages: list[dict[str, Any]] = []
    while not pages or "nextCursor" in pages[-1]:
        cursor = {"cursor": pages[-1]["nextCursor"]} if pages else {}
        result = await call(peer, LIST, {**arguments, **cursor})
        assert result.is_error is False and result.structured_content is not None
        summary, *links = result.content
        assert isinstance(summary, types.TextContent)
        assert all(isinstance(link, types.ResourceLink) for link in links)
        documents = result.structured_content["documents"]
        assert [link.uri for link in links] == [d["uri"] for d in documents]  # type: ignore[union-attr]
        pages.append(result.structured_content)
    return pages


async def test_list_documents_holds_what_resources_list_holds_in_every_order(
    peer: Peer,
) -> None:
    listed: set[str] = set()
    cursor = None
    while True:
        page = await peer.client.list_resources(cursor=cursor)
        listed |= {resource.uri for resource in page.resources}
        if (cursor := page.next_cursor) is None:
            break
    for sort in ("path", "modified", "size"):
        pages = await listed_pages(peer, {"sort": sort, "limit": 4})
        uris = [d["uri"] for page in pages for d in page["documents"]]
        assert len(uris) == len(set(uris)) and set(uris) == listed, sort
        assert pages[0]["total"] == len(listed)
    by_path = await listed_pages(peer, {"limit": 200})
    paths = [d["path"] for d in by_path[0]["documents"]]
    assert paths == sorted(paths)


async def test_list_documents_by_type_links_what_read_document_reads(peer: Peer) -> None:
    [page] = await listed_pages(peer, {"type": "pdf", "sort": "size"})
    documents = page["documents"]
    assert {d["path"] for d in documents} == {
        "papers/broken.pdf",
        "papers/libreoffice-writer-password.pdf",
        "papers/pdflatex-4-pages.pdf",
    }
    assert [d["size"] for d in documents] == sorted((d["size"] for d in documents), reverse=True)
    [paper] = [d for d in documents if d["uri"] == PDF]
    assert paper["pages"] == 4 and paper["state"] == "ready"
    text = embedded_text(
        await call(peer, READ, {"uri": f"{PDF}?pages=2"}), f"{PDF}?pages=2", "text/markdown"
    )
    assert text.strip()


async def test_list_documents_mistakes_are_tool_errors_and_the_session_carries_on(
    peer: Peer,
) -> None:
    mistakes = [
        ({"sort": "date"}, "sort must be one of path, modified, size"),
        ({"type": "books"}, "type must be a format family (pdf, word, slides"),
        ({"modified_after": "2026-13-01"}, "modified_after must be an ISO 8601 date"),
        ({"cursor": "abc"}, "cursor is not one this tool gave"),
    ]
    for arguments, message in mistakes:
        text = tool_error(await call(peer, LIST, arguments))
        assert text.startswith(f"{LIST}: {message}"), text
    assert (await call(peer, LIST, {"limit": 1})).is_error is False


# --------------------------------------------------------------------------- #
# read_document
# --------------------------------------------------------------------------- #


async def test_read_document_returns_one_page_of_a_pdf(peer: Peer) -> None:
    whole = json.loads(
        embedded_text(
            await call(peer, READ, {"uri": PDF, "format": "json"}), PDF, "application/json"
        )
    )
    page_texts = {page["number"]: page["text"] for page in whole["pages"]}
    assert sorted(page_texts) == [1, 2, 3, 4]

    uri = f"{PDF}?pages=3"
    text = embedded_text(await call(peer, READ, {"uri": uri, "format": "text"}), uri, "text/plain")
    assert text == page_texts[3]

    document = json.loads(
        embedded_text(
            await call(peer, READ, {"uri": uri, "format": "json"}), uri, "application/json"
        )
    )
    assert document["schema"] == "docshelf.document/v1"
    assert [(page["number"], page["text"]) for page in document["pages"]] == [(3, page_texts[3])]
    assert document["pages"] == [p for p in whole["pages"] if p["number"] == 3]

    pages = f"{PDF}?pages=2-3"
    text = embedded_text(
        await call(peer, READ, {"uri": pages, "format": "text"}), pages, "text/plain"
    )
    assert text == f"{page_texts[2]}\n\n{page_texts[3]}"

    # Unasked, a client that declared no preferences gets text a model can read: the page's
    # Markdown, not the PDF's bytes (resources/read would put the original first).
    resource = embedded(await call(peer, READ, {"uri": uri}))
    assert isinstance(resource, types.TextResourceContents)
    assert (resource.uri, resource.mime_type) == (uri, "text/markdown")
    assert resource.text.startswith("<!-- page 3 -->")
    as_pdf = embedded(await call(peer, READ, {"uri": uri, "format": "pdf"}))
    assert isinstance(as_pdf, types.BlobResourceContents)
    assert base64.b64decode(as_pdf.blob)[:5] == b"%PDF-"
    assert resource.meta is not None
    assert resource.meta["dev.docshelf/document"]["part"] == {"document": PDF, "pages": [3, 3]}


async def test_read_document_returns_one_section_of_a_markdown_file(peer: Peer) -> None:
    # Unasked: the original's type, Markdown, cut at the heading.
    result = await call(peer, READ, {"uri": GUIDE_SECTION})
    assert embedded_text(result, GUIDE_SECTION, "text/markdown") == SECTION_MARKDOWN

    result = await call(peer, READ, {"uri": GUIDE_SECTION, "format": "json"})
    document = json.loads(embedded_text(result, GUIDE_SECTION, "application/json"))
    assert document["schema"] == "docshelf.document/v1"
    [section] = document["sections"]
    assert section["heading"] == "Field guide"
    assert "Notes are filed by week." in section["text"]
    assert document["tables"] == [
        {"header": ["week", "topic"], "rows": [["1", "setup"], ["2", "review"]]}
    ]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param(
            {"uri": f"{PDF}?pages=9"},
            "past the end: papers/pdflatex-4-pages.pdf has 4 pages",
            id="page",
        ),
        pytest.param(
            {"uri": f"{GUIDE}?section=nope"},
            "has no section 'nope'; its sections are: field-guide",
            id="section",
        ),
        pytest.param({"uri": "docshelf://shelf/nope.md"}, "there is no document at", id="document"),
        pytest.param(
            {"uri": GUIDE_SECTION, "format": "yaml"},
            "format must be one of markdown, text, json, pdf",
            id="format",
        ),
    ],
)
async def test_read_document_mistakes_are_tool_errors(
    peer: Peer, arguments: dict[str, str], message: str
) -> None:
    text = tool_error(await call(peer, READ, arguments))
    assert text.startswith(f"{READ}: ") and message in text, text


# --------------------------------------------------------------------------- #
# Part URIs as resources
# --------------------------------------------------------------------------- #

PARTS = [
    pytest.param(f"{PDF}?pages=2", id="page"),
    pytest.param(f"{PDF}?pages=2-3", id="pages"),
    pytest.param(GUIDE_SECTION, id="markdown-section"),
    pytest.param("docshelf://shelf/page.html?section=heading", id="html-section"),
    # Not ASCII: in 2026-07-28 over HTTP the SDK sends it base64 in the Mcp-Name header.
    pytest.param("docshelf://shelf/Stra%C3%9Fe%20plan.md?section=stra%C3%9Fenplan", id="unicode"),
]


@pytest.mark.parametrize("uri", PARTS)
async def test_read_resource_and_metadata_of_a_part(peer: Peer, uri: str) -> None:
    sent = await raw_read(peer.client, uri)
    validate(peer.era, "ReadResourceResult", sent)
    assert {entry["mimeType"] for entry in sent["contents"]} == PART_TYPES
    for entry in sent["contents"]:
        assert entry["uri"] == uri
        data = base64.b64decode(entry["blob"]) if "blob" in entry else entry["text"].encode()
        assert entry["size"] == len(data)

    read = await peer.client.read_resource(uri)
    assert [(c.uri, c.mime_type) for c in read.contents] == [
        (uri, entry["mimeType"]) for entry in sent["contents"]
    ]

    metadata = await raw_metadata(peer.client, uri)
    for resource in metadata["metadata"]:
        validate(peer.era, "Resource", resource)
        assert resource["uri"] == uri
    assert [r["mimeType"] for r in metadata["metadata"]] == [
        e["mimeType"] for e in sent["contents"]
    ]


MISSING_PARTS = [
    f"{PDF}?pages=9",  # past the end
    f"{PDF}?pages=0",
    f"{PDF}?pages=3-2",
    f"{PDF}?section=x",  # a PDF has pages, not sections
    f"{GUIDE}?section=nope",
    f"{GUIDE}?chapter=1",  # not a part query
    "docshelf://shelf/notes.txt?pages=1",
    "docshelf://shelf/papers/broken.pdf?pages=1",  # no derived formats to cut from
    "docshelf://shelf/nope.pdf?pages=1",  # no such document
]


async def test_a_part_that_does_not_exist_is_the_eras_not_found(peer: Peer) -> None:
    for uri in MISSING_PARTS:
        for name, request in (("read", peer.client.read_resource), ("metadata", None)):
            with pytest.raises(MCPError) as caught:
                if request is not None:
                    await request(uri)
                else:
                    await raw_metadata(peer.client, uri)
            error = caught.value.error
            assert (error.code, error.message) == (NOT_FOUND[peer.era], "Resource not found"), (
                name,
                uri,
            )
            assert isinstance(error.data, dict) and uri.startswith(error.data["uri"])
            if not uri.startswith("docshelf://shelf/nope"):
                assert error.data["reason"], (name, uri)
    assert (await peer.client.read_resource(f"{PDF}?pages=4")).contents


async def test_a_part_can_be_subscribed_to(peer: Peer) -> None:
    """Subscribing is accepted for parts (their changes are the document's); the content of
    the notifications is test_live_shelf's business, on a shelf that may change."""
    if peer.era == MODERN:
        async with peer.client.listen(resource_subscriptions=[GUIDE_SECTION]) as subscription:
            assert subscription.honored.resource_subscriptions == [GUIDE_SECTION]
        return
    with pytest.warns(MCPDeprecationWarning):
        await peer.client.subscribe_resource(GUIDE_SECTION)
    with pytest.warns(MCPDeprecationWarning):
        await peer.client.unsubscribe_resource(GUIDE_SECTION)
    with pytest.warns(MCPDeprecationWarning), pytest.raises(MCPError) as caught:
        await peer.client.subscribe_resource(f"{GUIDE}?section=nope")
    assert caught.value.error.code == NOT_FOUND[LEGACY]


# --------------------------------------------------------------------------- #
# completion/complete
# --------------------------------------------------------------------------- #


async def test_completes_the_templates_path_by_prefix(peer: Peer) -> None:
    guides = await complete(peer, "path", "guides/")
    assert (guides.values, guides.total, guides.has_more) == (["guides/field-guide.md"], 1, False)
    papers = await complete(peer, "path", "papers/")
    assert papers.values == [
        "papers/broken.pdf",
        "papers/libreoffice-writer-password.pdf",
        "papers/pdflatex-4-pages.pdf",
    ]
    assert (await complete(peer, "path", "Str")).values == ["Straße plan.md"]  # as is, unescaped
    assert (await complete(peer, "path", "pa_")).values == []  # no LIKE wildcards
    everything = await complete(peer, "path", "")
    assert everything.total == len(everything.values) == 9  # .hidden.md is not on the shelf


async def test_completes_pages_and_sections_once_the_path_is_known(peer: Peer) -> None:
    pages = await complete(peer, "pages", "", {"path": "papers/pdflatex-4-pages.pdf"})
    assert (pages.values, pages.total) == (["1", "2", "3", "4"], 4)
    section = await complete(peer, "section", "f", {"path": "guides/field-guide.md"})
    assert section.values == ["field-guide"]
    unicode = await complete(peer, "section", "", {"path": "Straße plan.md"})
    assert unicode.values == ["straßenplan"]
    assert (await complete(peer, "section", "")).values == []  # no path yet: nothing to offer
