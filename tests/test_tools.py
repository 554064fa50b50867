"""The tools and completion (issue #10), on the wire, in both eras, checked against the schema.

2025-11-25 and 2026-07-28 server/tools: ``tools/list`` and ``tools/call``; input
mistakes are results with ``isError: true`` ("Tool Execution Errors"), an unknown
tool is -32602 ("Protocol Errors"). server/utilities/completion for the template.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.support.schema import validate, validate_error, validate_response
from tests.support.servers import LEGACY, MODERN, RawClient, RunningServer, serve
from tests.support.shelves import make_shelf
from tests.support.tools import call_tool, features

TEMPLATE = "docshelf://shelf/{+path}{?pages,section}"
GUIDE_MD = """# Deployment guide

## Reverse proxies

Put docshelf behind nginx with buffering off for event streams.

## Backups

Copy the SQLite file while the server runs: WAL keeps it consistent.
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    base = tmp_path_factory.mktemp("tools")
    shelf = make_shelf(base / "shelf")
    (shelf / "guides" / "deploy.md").write_text(GUIDE_MD)
    with serve(shelf, base / "data") as running:
        yield running


@pytest.fixture(scope="module")
def raw(server: RunningServer) -> Iterator[RawClient]:
    client = RawClient(server.url)
    yield client
    client.close()


@pytest.fixture(scope="module")
def session(raw: RawClient) -> str:
    return raw.initialize()


def tools(raw: RawClient) -> dict[str, dict[str, Any]]:
    body = raw.modern("tools/list").json()
    validate_response(MODERN, "ListToolsResult", body)
    return {tool["name"]: tool for tool in body["result"]["tools"]}


def test_tools_list_2026_has_the_three_tools_with_cache_hints(raw: RawClient) -> None:
    body = raw.modern("tools/list").json()
    validate_response(MODERN, "ListToolsResult", body)
    result = body["result"]
    # 2026-07-28 server/utilities/caching: tools/list is a cacheable result.
    assert result["ttlMs"] > 0 and result["cacheScope"] == "public"
    listed = {tool["name"]: tool for tool in result["tools"]}
    assert set(listed) == {"search_documents", "read_document", "list_documents"}
    for tool in listed.values():
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["openWorldHint"] is False
        assert tool["title"] and len(tool["description"]) > 100
    assert listed["search_documents"]["inputSchema"]["required"] == ["query"]
    assert "outputSchema" in listed["search_documents"]
    assert "outputSchema" in listed["list_documents"]


def test_tools_list_2025_and_capabilities(raw: RawClient, session: str) -> None:
    body = raw.legacy(session, "tools/list").json()
    validate_response(LEGACY, "ListToolsResult", body)
    assert len(body["result"]["tools"]) == 3
    discovered = raw.modern("server/discover").json()["result"]["capabilities"]
    assert discovered["tools"] == {"listChanged": False}
    assert discovered["completions"] == {}


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_search_links_the_section_that_matched(raw: RawClient, era: str) -> None:
    result = call_tool(raw, era, "search_documents", {"query": "nginx buffering"})
    assert result["isError"] is False
    links = [block for block in result["content"] if block["type"] == "resource_link"]
    assert links[0]["uri"] == "docshelf://shelf/guides/deploy.md?section=reverse-proxies"
    assert links[0]["title"] == "Deployment guide — Reverse proxies"
    assert "**nginx**" in links[0]["description"]
    # ... and its document, once, after the hits.
    assert links[-1]["uri"] == "docshelf://shelf/guides/deploy.md"
    # structuredContent conforms to the declared outputSchema (server/tools "Output Schema").
    schema = tools(raw)["search_documents"]["outputSchema"]
    Draft202012Validator(schema).validate(result["structuredContent"])
    hit = result["structuredContent"]["hits"][0]
    assert hit["documentUri"] == "docshelf://shelf/guides/deploy.md"
    assert hit["heading"] == "Reverse proxies" and hit["allTerms"] is True


def test_search_finds_a_pdf_page_and_filters(raw: RawClient) -> None:
    result = call_tool(
        raw,
        MODERN,
        "search_documents",
        {"query": "blind text", "mime_type": "application/pdf", "limit": 2},
    )
    hits = result["structuredContent"]["hits"]
    assert 0 < len(hits) <= 2
    assert all(h["mimeType"] == "application/pdf" for h in hits)
    assert any("?pages=" in h["uri"] for h in hits)
    nothing = call_tool(
        raw, MODERN, "search_documents", {"query": "blind text", "path_prefix": "guides/"}
    )
    assert nothing["structuredContent"]["hits"] == []
    assert nothing["content"][0]["text"].startswith("No documents match 'blind text'")


def test_search_result_follows_the_negotiated_style(raw: RawClient) -> None:
    """Content negotiation SEP "Tool Results": agents get the structured result first."""
    query = {"query": "nginx"}
    agent = call_tool(raw, MODERN, "search_documents", query, features("agent"))
    assert json.loads(agent["content"][0]["text"]) == agent["structuredContent"]
    human = call_tool(raw, MODERN, "search_documents", query, features("human"))
    assert human["content"][0]["text"].startswith("1 result for 'nginx':")
    plain = call_tool(raw, MODERN, "search_documents", query)  # no extension: readable by default
    assert plain["content"][0]["text"] == human["content"][0]["text"]
    compact = call_tool(
        raw, MODERN, "search_documents", query, features("human", "verbosity=compact")
    )
    short = compact["structuredContent"]["hits"][0]["snippet"]
    long = human["structuredContent"]["hits"][0]["snippet"]
    assert len(short.split()) < len(long.split())


@pytest.mark.parametrize("era", [LEGACY, MODERN])
@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("search_documents", {}, "search_documents: query is required"),
        ("search_documents", {"query": "  "}, "search_documents: query must be a non-empty string"),
        (
            "search_documents",
            {"query": "!!! ???"},
            "search_documents: the query has no words to search for; give one or more words, "
            '"a quoted phrase" or a prefix*',
        ),
        (
            "search_documents",
            {"query": "x", "limit": 0},
            "search_documents: limit must be an integer from 1 to 50",
        ),
        (
            "search_documents",
            {"query": "x", "shelf": "other"},
            "search_documents: there is no shelf 'other'; the shelves are: shelf",
        ),
        (
            "search_documents",
            {"query": "x", "path_prefix": "guides/\x00"},
            "search_documents: path_prefix holds a character no document name or text can: "
            "NUL or an unpaired surrogate",
        ),
        (
            "search_documents",
            {"query": "x", "colour": "red"},
            "search_documents: unknown argument colour; "
            "this tool takes limit, mime_type, path_prefix, query, shelf",
        ),
        ("read_document", {}, "read_document: uri is required"),
        (
            "read_document",
            {"uri": "docshelf://shelf/missing.md"},
            "read_document: there is no document at docshelf://shelf/missing.md; "
            "find documents with search_documents (its hits carry the URIs to read)",
        ),
        (
            "read_document",
            {"uri": "docshelf://shelf/guides/deploy.md?section=nope"},
            "read_document: docshelf://shelf/guides/deploy.md?section=nope does not exist: "
            "guides/deploy.md has no section 'nope'; "
            "its sections are: deployment-guide, reverse-proxies, backups",
        ),
        (
            "read_document",
            {"uri": "docshelf://shelf/notes.txt", "format": "docx"},
            "read_document: format must be one of markdown, text, json, pdf",
        ),
    ],
)
def test_input_mistakes_are_tool_errors_a_model_can_act_on(
    raw: RawClient, session: str, era: str, name: str, arguments: dict[str, Any], message: str
) -> None:
    result = call_tool(raw, era, name, arguments, session=session)
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": message}]
    # Nothing lost: the next call works.
    assert (
        call_tool(raw, era, "search_documents", {"query": "nginx"}, session=session)["isError"]
        is False
    )


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_an_unknown_tool_is_a_protocol_error(raw: RawClient, session: str, era: str) -> None:
    params = {"name": "delete_everything", "arguments": {}}
    if era == MODERN:
        body = raw.modern("tools/call", params, headers={"Mcp-Name": "delete_everything"}).json()
    else:
        body = raw.legacy(session, "tools/call", params).json()
    validate_error(era, body)
    assert body["error"]["code"] == -32602
    assert body["error"]["message"] == (
        "Unknown tool: 'delete_everything'; this server has search_documents, read_document "
        "and list_documents"
    )


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_read_document_returns_the_best_format_of_a_part(
    raw: RawClient, session: str, era: str
) -> None:
    uri = "docshelf://shelf/guides/deploy.md?section=backups"
    result = call_tool(raw, era, "read_document", {"uri": uri}, session=session)
    assert result["isError"] is False
    (block,) = result["content"]
    assert block["type"] == "resource"
    assert block["resource"]["uri"] == uri
    assert block["resource"]["mimeType"] == "text/markdown"
    assert block["resource"]["text"].startswith("## Backups\n\nCopy the SQLite file")
    as_json = call_tool(raw, era, "read_document", {"uri": uri, "format": "json"}, session=session)
    document = json.loads(as_json["content"][0]["resource"]["text"])
    assert document["title"] == "Backups"


def test_read_document_of_a_pdf_page_as_pdf(raw: RawClient) -> None:
    uri = "docshelf://shelf/papers/pdflatex-4-pages.pdf?pages=2"
    result = call_tool(raw, MODERN, "read_document", {"uri": uri, "format": "pdf"})
    block = result["content"][0]["resource"]
    assert block["mimeType"] == "application/pdf" and block["blob"]


# -- completion/complete (server/utilities/completion) ----------------------------------------


def complete(
    raw: RawClient,
    era: str,
    session: str,
    argument: dict[str, str],
    context: dict[str, str] | None = None,
    template: str = TEMPLATE,
) -> dict[str, Any]:
    params: dict[str, Any] = {
        "ref": {"type": "ref/resource", "uri": template},
        "argument": argument,
    }
    if context:
        params["context"] = {"arguments": context}
    if era == MODERN:
        return raw.modern("completion/complete", params).json()
    return raw.legacy(session, "completion/complete", params).json()


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_completion_of_paths_sections_and_pages(raw: RawClient, session: str, era: str) -> None:
    paths = complete(raw, era, session, {"name": "path", "value": "guides/"})
    validate_response(era, "CompleteResult", paths)
    assert paths["result"]["completion"] == {
        "values": ["guides/deploy.md", "guides/field-guide.md"],
        "total": 2,
        "hasMore": False,
    }
    sections = complete(
        raw, era, session, {"name": "section", "value": "b"}, {"path": "guides/deploy.md"}
    )
    validate_response(era, "CompleteResult", sections)
    assert sections["result"]["completion"]["values"] == ["backups"]
    pages = complete(
        raw, era, session, {"name": "pages", "value": ""}, {"path": "papers/pdflatex-4-pages.pdf"}
    )
    assert pages["result"]["completion"]["values"] == ["1", "2", "3", "4"]
    unknown = complete(
        raw, era, session, {"name": "path", "value": ""}, template="docshelf://other/{+path}"
    )
    validate_error(era, unknown)
    assert unknown["error"]["code"] == -32602


def test_path_completion_is_capped_at_100_with_total_and_has_more(tmp_path: Path) -> None:
    shelf = tmp_path / "shelf"
    (shelf / "many").mkdir(parents=True)
    for number in range(130):
        (shelf / "many" / f"note-{number:03}.txt").write_text(f"note {number}\n")
    with serve(shelf, tmp_path / "data") as running:
        client = RawClient(running.url)
        body = complete(client, MODERN, "", {"name": "path", "value": "many/note-"})
        validate(MODERN, "JSONRPCResultResponse", body)
        completion = body["result"]["completion"]
        assert len(completion["values"]) == 100
        assert completion["values"][0] == "many/note-000.txt"
        assert completion["total"] == 130 and completion["hasMore"] is True
        client.close()


# server/utilities/completion "Error Handling": a malformed request is -32602 (Invalid params),
# in both eras, with a message naming the field — never HTTP 500 or -32603 (Internal error).
@pytest.mark.parametrize("era", [LEGACY, MODERN])
@pytest.mark.parametrize(
    ("argument", "context", "says"),
    [
        (
            {"name": "section", "value": ""},
            {"arguments": [1]},
            "context.arguments must be an object",
        ),
        (
            {"name": "section", "value": ""},
            {"arguments": "x"},
            "context.arguments must be an object",
        ),
        ({"name": "section", "value": ""}, "x", "params.context must be an object"),
        (
            {"name": "section", "value": ""},
            {"arguments": {"path": 1}},
            "context.arguments must map names to strings",
        ),
        # JSON may escape a lone surrogate; no UTF-8 (and no database) can hold one.
        ({"name": "path", "value": "\ud800"}, None, "argument.value is not valid Unicode"),
        (
            {"name": "section", "value": ""},
            {"arguments": {"path": "\udfff.md"}},
            "context.arguments.path is not valid Unicode",
        ),
    ],
    ids=[
        "arguments-array",
        "arguments-string",
        "context-string",
        "value-number",
        "surrogate-value",
        "surrogate-context",
    ],
)
def test_completion_with_malformed_params_is_32602_and_the_server_keeps_serving(
    raw: RawClient,
    session: str,
    era: str,
    argument: dict[str, str],
    context: object,
    says: str,
) -> None:
    params: dict[str, Any] = {
        "ref": {"type": "ref/resource", "uri": TEMPLATE},
        "argument": argument,
    }
    if context is not None:
        params["context"] = context
    if era == MODERN:
        response = raw.modern("completion/complete", params)
    else:
        response = raw.legacy(session, "completion/complete", params)
    assert response.status_code == 200, response.text
    body = response.json()
    validate_error(era, body)
    assert body["error"]["code"] == -32602
    assert says in body["error"]["message"]
    assert body["error"]["message"].startswith("completion/complete: ")
    after = complete(raw, era, session, {"name": "path", "value": "guides/d"})
    validate_response(era, "CompleteResult", after)
    assert after["result"]["completion"]["values"] == ["guides/deploy.md"]
