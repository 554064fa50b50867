"""The ``list_documents`` tool (issue 28, item 2) on the wire, in both eras.

server/tools: the tool is listed with an ``outputSchema`` and ``readOnlyHint``; a call
answers with ``resource_link`` blocks ("Resource Links") and ``structuredContent`` that
conforms to the schema ("Output Schema"), in the shape the client negotiated (content
negotiation SEP, "Tool Results"); mistakes are results with ``isError: true`` ("Tool
Execution Errors") and the server keeps serving. Every response is validated against
its era's ``schema.json``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.support.paths import FIXTURE_PDF
from tests.support.schema import validate_response
from tests.support.servers import LEGACY, MODERN, RawClient, serve
from tests.support.shelves import make_shelf
from tests.support.tools import call_tool, features

LIST = "list_documents"
# make_shelf's documents by path, and the mtime each is given: one minute apart, in this
# order, so "newest first" is the reverse of it.
PATHS = [
    "Straße plan.md",
    "data.json",
    "guides/field-guide.md",
    "notes.txt",
    "page.html",
    "papers/broken.pdf",
    "papers/libreoffice-writer-password.pdf",
    "papers/pdflatex-4-pages.pdf",
    "table.csv",
]
EPOCH_2026 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawClient]:
    base = tmp_path_factory.mktemp("listing")
    shelf = make_shelf(base / "shelf")
    for minute, path in enumerate(PATHS):
        moment = EPOCH_2026 + 60 * minute
        os.utime(shelf / path, (moment, moment))
    with serve(shelf, base / "data") as server:
        client = RawClient(server.url)
        yield client
        client.close()


@pytest.fixture(scope="module")
def output_schema(raw: RawClient) -> dict[str, Any]:
    body = raw.modern("tools/list").json()
    validate_response(MODERN, "ListToolsResult", body)
    [tool] = [tool for tool in body["result"]["tools"] if tool["name"] == LIST]
    schema: dict[str, Any] = tool["outputSchema"]
    return schema


def listing(
    raw: RawClient,
    era: str,
    arguments: dict[str, Any],
    schema: dict[str, Any],
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A successful call: its structured content conforms to the tool's outputSchema and
    each document has its resource_link, in the same order."""
    result = call_tool(raw, era, LIST, arguments, capabilities)
    assert result["isError"] is False, result
    structured = result["structuredContent"]
    Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).validate(
        structured
    )
    links = [block for block in result["content"] if block["type"] == "resource_link"]
    assert [link["uri"] for link in links] == [d["uri"] for d in structured["documents"]]
    return result


def walk(
    raw: RawClient, era: str, arguments: dict[str, Any], schema: dict[str, Any]
) -> list[dict[str, Any]]:
    """Every page of a listing, following nextCursor."""
    pages = [listing(raw, era, arguments, schema)["structuredContent"]]
    while "nextCursor" in pages[-1]:
        following = {**arguments, "cursor": pages[-1]["nextCursor"]}
        pages.append(listing(raw, era, following, schema)["structuredContent"])
    return pages


def test_the_tool_is_listed_read_only_with_its_schemas(raw: RawClient) -> None:
    session = raw.initialize()
    for body, era in (
        (raw.modern("tools/list").json(), MODERN),
        (raw.legacy(session, "tools/list").json(), LEGACY),
    ):
        validate_response(era, "ListToolsResult", body)
        [tool] = [tool for tool in body["result"]["tools"] if tool["name"] == LIST]
        assert tool["annotations"]["readOnlyHint"] is True
        Draft202012Validator.check_schema(tool["inputSchema"])
        Draft202012Validator.check_schema(tool["outputSchema"])
        assert set(tool["inputSchema"]["properties"]) == {
            "shelf",
            "path_prefix",
            "type",
            "modified_after",
            "sort",
            "limit",
            "cursor",
        }
        assert tool["inputSchema"]["properties"]["sort"]["enum"] == ["path", "modified", "size"]


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_pages_by_path_hold_the_shelf_once_with_the_total_first(
    raw: RawClient, era: str, output_schema: dict[str, Any]
) -> None:
    pages = walk(raw, era, {"limit": 4}, output_schema)
    assert [len(page["documents"]) for page in pages] == [4, 4, 1]
    assert pages[0]["total"] == 9 and all("total" not in page for page in pages[1:])
    assert [d["path"] for page in pages for d in page["documents"]] == PATHS
    assert all(page["catalogComplete"] is True for page in pages)


@pytest.mark.parametrize("era", [LEGACY, MODERN])
def test_newest_first_and_largest_first(
    raw: RawClient, era: str, output_schema: dict[str, Any]
) -> None:
    newest = walk(raw, era, {"sort": "modified", "limit": 2}, output_schema)
    assert [d["path"] for page in newest for d in page["documents"]] == PATHS[::-1]
    largest = walk(raw, era, {"sort": "size", "limit": 3}, output_schema)
    sizes = [d["size"] for page in largest for d in page["documents"]]
    assert len(sizes) == 9 and sizes == sorted(sizes, reverse=True)


def test_a_document_and_its_link(raw: RawClient, output_schema: dict[str, Any]) -> None:
    path = "papers/pdflatex-4-pages.pdf"
    result = listing(raw, MODERN, {"path_prefix": path}, output_schema)
    [document] = result["structuredContent"]["documents"]
    modified = datetime.fromtimestamp(EPOCH_2026 + 60 * PATHS.index(path), UTC)
    assert document == {
        "uri": f"docshelf://shelf/{path}",
        "title": document["title"],
        "path": path,
        "shelf": "shelf",
        "mimeType": "application/pdf",
        "size": (FIXTURE_PDF / "pdflatex-4-pages.pdf").stat().st_size,
        "modified": modified.isoformat().replace("+00:00", "Z"),
        "pages": 4,
        "state": "ready",
        **({"description": document["description"]} if "description" in document else {}),
    }
    [link] = [block for block in result["content"] if block["type"] == "resource_link"]
    assert link["name"] == path and link["title"] == document["title"]
    assert (link["mimeType"], link["size"]) == ("application/pdf", document["size"])
    assert link["annotations"] == {"lastModified": document["modified"]}
    assert link["_meta"] == {
        "dev.docshelf/document": {"shelf": "shelf", "path": path, "state": "ready", "pageCount": 4}
    }


@pytest.mark.parametrize(
    ("arguments", "paths"),
    [
        ({"type": "pdf"}, [p for p in PATHS if p.endswith(".pdf")]),
        ({"type": "PDFs"}, [p for p in PATHS if p.endswith(".pdf")]),
        ({"type": "application/pdf"}, [p for p in PATHS if p.endswith(".pdf")]),
        ({"type": "markdown"}, ["Straße plan.md", "guides/field-guide.md"]),
        ({"type": "spreadsheet"}, ["table.csv"]),
        ({"type": "text"}, ["notes.txt"]),
        ({"type": "json"}, ["data.json"]),
        ({"type": "html"}, ["page.html"]),
        (
            {"type": "text/"},
            ["Straße plan.md", "guides/field-guide.md", "notes.txt", "page.html", "table.csv"],
        ),
        ({"type": "image"}, []),
        ({"path_prefix": "papers/", "sort": "size"}, None),
        ({"path_prefix": "Papers/"}, []),
        ({"modified_after": "2026-01-01T00:06:00Z"}, PATHS[7:]),
        ({"modified_after": "2026-01-01T01:06:00+01:00"}, PATHS[7:]),
        ({"modified_after": "2026-01-02"}, []),
        (
            {"shelf": "shelf", "type": "markup", "sort": "modified"},
            ["guides/field-guide.md", "Straße plan.md"],
        ),
    ],
)
def test_filters(
    raw: RawClient,
    output_schema: dict[str, Any],
    arguments: dict[str, Any],
    paths: list[str] | None,
) -> None:
    [page] = walk(raw, MODERN, arguments, output_schema)
    listed = [d["path"] for d in page["documents"]]
    if paths is None:  # papers/, largest first
        assert sorted(listed) == [p for p in PATHS if p.startswith("papers/")]
        sizes = [d["size"] for d in page["documents"]]
        assert sizes == sorted(sizes, reverse=True)
    else:
        assert listed == paths
    assert page["total"] == len(listed)


def test_markdown_for_people_and_json_for_agents(
    raw: RawClient, output_schema: dict[str, Any]
) -> None:
    """Content negotiation SEP "Tool Results": ``human`` (or nothing declared) gets a
    Markdown list first, ``agent`` the structured result as JSON text."""
    arguments = {"type": "pdf", "limit": 2}
    human = listing(raw, MODERN, arguments, output_schema, features("human"))
    text = human["content"][0]["text"]
    first, second = human["structuredContent"]["documents"]
    cursor = human["structuredContent"]["nextCursor"]
    assert text.startswith("2 documents of 3, by path:\n\n1. **")
    assert f"`{first['path']}` (application/pdf, " in text and f"`{first['uri']}`" in text
    assert "could not be converted: original only" in text  # papers/broken.pdf
    assert text.endswith(
        f'More follow: call list_documents again with the same arguments and cursor "{cursor}".'
    )
    assert second["uri"] in text
    plain = listing(raw, MODERN, arguments, output_schema)
    assert plain["content"][0]["text"] == text
    agent = listing(raw, LEGACY, arguments, output_schema, features("agent"))
    assert json.loads(agent["content"][0]["text"]) == agent["structuredContent"]
    nothing = listing(raw, MODERN, {"type": "video"}, output_schema, features("human"))
    assert nothing["content"][0]["text"] == "No documents match these arguments (sorted by path)."


def test_compact_leaves_the_descriptions_out(raw: RawClient, output_schema: dict[str, Any]) -> None:
    full = listing(raw, MODERN, {}, output_schema)["structuredContent"]["documents"]
    assert any("description" in d for d in full)
    compact = listing(raw, MODERN, {}, output_schema, features("verbosity=compact"))
    assert all("description" not in d for d in compact["structuredContent"]["documents"])
    assert all("description" not in b for b in compact["content"][1:])


@pytest.mark.parametrize("era", [LEGACY, MODERN])
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"sort": "name"}, "sort must be one of path, modified, size"),
        ({"limit": 500}, "limit must be an integer from 1 to 200"),
        ({"shelf": "attic"}, "there is no shelf 'attic'; the shelves are: shelf"),
        (
            {"type": "documents"},
            "type must be a format family (pdf, word, slides, spreadsheet, odt, rtf, ebook, "
            "mail, markup, markdown, notebook, feed, html, json, text, archive, image, audio, "
            "video), a MIME type such as application/pdf, or a MIME prefix such as image/; "
            "got 'documents'",
        ),
        (
            {"modified_after": "last week"},
            "modified_after must be an ISO 8601 date or date-time, such as 2026-03-01 or "
            "2026-03-01T09:30:00Z; got 'last week'",
        ),
        (
            {"cursor": "not-a-cursor"},
            "cursor is not one this tool gave; leave it out to list from the first page",
        ),
        (
            {"query": "pdf"},
            "unknown argument query; this tool takes cursor, limit, modified_after, "
            "path_prefix, shelf, sort, type",
        ),
    ],
)
def test_mistakes_are_tool_errors_a_model_can_act_on(
    raw: RawClient, era: str, arguments: dict[str, Any], message: str
) -> None:
    session = raw.initialize()
    result = call_tool(raw, era, LIST, arguments, session=session)
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": f"list_documents: {message}"}]
    assert call_tool(raw, era, LIST, {"limit": 1}, session=session)["isError"] is False


def test_a_cursor_with_another_order_or_other_filters_is_refused(
    raw: RawClient, output_schema: dict[str, Any]
) -> None:
    first = listing(raw, MODERN, {"type": "pdf", "limit": 1}, output_schema)
    cursor = first["structuredContent"]["nextCursor"]
    by_size = call_tool(raw, MODERN, LIST, {"type": "pdf", "sort": "size", "cursor": cursor})
    assert by_size["content"][0]["text"] == (
        "list_documents: cursor continues a listing sorted by path; pass sort=path with it, "
        "or leave cursor out to start over"
    )
    other = call_tool(raw, MODERN, LIST, {"type": "markdown", "cursor": cursor})
    assert other["content"][0]["text"] == (
        "list_documents: cursor continues a listing with other filters; pass the same shelf, "
        "path_prefix, type and modified_after with it, or leave cursor out to start over"
    )
    same = listing(raw, MODERN, {"type": "pdf", "limit": 1, "cursor": cursor}, output_schema)
    assert (
        same["structuredContent"]["documents"][0]["path"]
        == "papers/libreoffice-writer-password.pdf"
    )
