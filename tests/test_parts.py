"""Parts of documents are resources (issue #10): ``docshelf://{shelf}/{+path}{?pages,section}``.

Pages of a PDF and sections under a heading are read, described and subscribed to
like documents, in both eras; every answer is checked against the spec's schema.
A part that does not exist is the era's resource-not-found error (2025-11-25
server/resources "Error Handling": -32002; 2026-07-28: -32602) with the reason in
``data``, and the server keeps serving.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from mcp.shared.exceptions import MCPDeprecationWarning
from pptx import Presentation
from pypdf import PdfReader

from docshelf.converters import document_schema
from tests.support.schema import validate, validate_error, validate_response
from tests.support.sdk import http_client
from tests.support.servers import LEGACY, MODERN, RawClient, RunningServer, serve
from tests.support.shelves import make_shelf

PDF = "docshelf://shelf/papers/pdflatex-4-pages.pdf"
GUIDE = "docshelf://shelf/guide.md"
DECK = "docshelf://shelf/deck.pptx"
GUIDE_MD = """# Testing guide

Why we test.

## Small tests

Run in milliseconds.

## Medium tests

Take under a minute.

### Fixtures

Real databases only.

Setext heading
--------------

Underlined, level two.

## Medium tests

The same heading again.

# Appendix

The end.
"""
NOT_FOUND = {LEGACY: -32002, MODERN: -32602}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    base = tmp_path_factory.mktemp("parts")
    shelf = make_shelf(base / "shelf")
    (shelf / "guide.md").write_text(GUIDE_MD)
    (shelf / "manual.html").write_text(
        "<html><head><title>Manual</title></head><body><h1>Manual</h1><p>Start.</p>"
        "<h2>Install</h2><p>Use pip.</p><h2>Configure</h2><p>Set the root.</p></body></html>"
    )
    deck = Presentation()
    deck.core_properties.title = "Deck"
    for title in ("First slide", "Second slide"):
        deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = title
    deck.save(str(shelf / "deck.pptx"))
    with serve(shelf, base / "data") as running:
        yield running


@pytest.fixture
def raw(server: RunningServer) -> Iterator[RawClient]:
    client = RawClient(server.url)
    yield client
    client.close()


def read(raw: RawClient, uri: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    body = raw.modern("resources/read", {"uri": uri}, capabilities=capabilities).json()
    validate_response(MODERN, "ReadResourceResult", body)
    return body["result"]


def by_type(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["mimeType"]: entry for entry in result["contents"]}


def test_pages_part_comes_in_every_format_under_the_part_uri(raw: RawClient) -> None:
    uri = f"{PDF}?pages=2-3"
    contents = by_type(read(raw, uri))
    assert list(contents) == ["application/pdf", "text/markdown", "text/plain", "application/json"]
    assert {entry["uri"] for entry in contents.values()} == {uri}
    # The PDF is a page subset of the original, written with pypdf.
    import base64

    subset = PdfReader(io.BytesIO(base64.b64decode(contents["application/pdf"]["blob"])))
    assert len(subset.pages) == 2
    # Markdown runs from page 2's marker to page 3's end; the JSON holds just pages 2 and 3.
    assert contents["text/markdown"]["text"].startswith("<!-- page 2 -->\n")
    assert "<!-- page 3 -->" in contents["text/markdown"]["text"]
    assert "<!-- page 4 -->" not in contents["text/markdown"]["text"]
    document = json.loads(contents["application/json"]["text"])
    Draft202012Validator(document_schema()).validate(document)
    assert [page["number"] for page in document["pages"]] == [2, 3]
    assert [page["part"] for page in document["pages"]] == ["?pages=2", "?pages=3"]
    plain = contents["text/plain"]["text"]
    assert plain == "\n\n".join(page["text"] for page in document["pages"])
    assert contents["text/plain"]["title"] == "pdflatex-4-pages.pdf (pages 2\u20133)"


def test_a_slides_pdf_is_its_own_markdown_rendered(raw: RawClient) -> None:
    # A deck's pages are slides, not pages of its rendered PDF: the part renders its slide.
    import base64

    contents = by_type(read(raw, f"{DECK}?pages=2"))
    assert contents["text/markdown"]["text"].startswith("<!-- page 2 -->\n\n## Second slide\n")
    pdf = PdfReader(io.BytesIO(base64.b64decode(contents["application/pdf"]["blob"])))
    text = "".join(page.extract_text() for page in pdf.pages)
    assert "Second slide" in text and "First slide" not in text
    assert pdf.metadata is not None and pdf.metadata.title == "Deck (page 2)"


def test_one_page_is_a_part_too(raw: RawClient) -> None:
    contents = by_type(read(raw, f"{PDF}?pages=4"))
    assert contents["text/markdown"]["text"].startswith("<!-- page 4 -->\n")


@pytest.mark.parametrize(
    ("slug", "starts", "ends_before"),
    [
        # Down to the next heading of the same or a higher level: "Fixtures" (###) is inside.
        ("medium-tests", "## Medium tests\n\nTake under a minute.\n\n### Fixtures", "Setext"),
        ("fixtures", "### Fixtures\n\nReal databases only.", "Setext"),
        # A setext heading is a heading like any other.
        ("setext-heading", "Setext heading\n--------------\n\nUnderlined", "The same heading"),
        # The second "Medium tests" is "-1", as GitHub numbers repeated anchors.
        ("medium-tests-1", "## Medium tests\n\nThe same heading again.", "# Appendix"),
        # A level-1 section holds every level-2 one under it, to the next level-1 heading.
        ("testing-guide", "# Testing guide\n\nWhy we test.", "# Appendix"),
    ],
)
def test_section_runs_to_the_next_heading_of_the_same_or_higher_level(
    raw: RawClient, slug: str, starts: str, ends_before: str
) -> None:
    contents = by_type(read(raw, f"{GUIDE}?section={slug}"))
    markdown = contents["text/markdown"]["text"]
    assert markdown.startswith(starts)
    assert ends_before not in markdown
    # Every format of the section is made from the same cut.
    assert starts.split("\n")[0].lstrip("# ") in contents["text/plain"]["text"]
    document = json.loads(contents["application/json"]["text"])
    Draft202012Validator(document_schema()).validate(document)
    assert contents["application/pdf"]["blob"]


def test_section_of_an_html_page(raw: RawClient) -> None:
    contents = by_type(read(raw, "docshelf://shelf/manual.html?section=install"))
    assert contents["text/markdown"]["text"].startswith("## Install")
    assert "Use pip." in contents["text/plain"]["text"]
    assert "Set the root" not in contents["text/plain"]["text"]
    assert "text/html" not in contents  # a section of a page is no HTML page


def test_a_unicode_slug_is_percent_encoded_in_the_uri(raw: RawClient) -> None:
    # "Straße plan.md" has the heading "Straßenplan" (tests.support.shelves).
    uri = "docshelf://shelf/Stra%C3%9Fe%20plan.md?section=stra%C3%9Fenplan"
    contents = by_type(read(raw, uri))
    assert contents["text/markdown"]["text"].startswith("# Straßenplan")


def test_negotiation_orders_a_parts_formats_too(raw: RawClient) -> None:
    features = {
        "extensions": {
            "io.modelcontextprotocol/content-negotiation": {
                "features": ["agent", "verbosity=compact"]
            }
        }
    }
    result = read(raw, f"{GUIDE}?section=fixtures", features)
    assert [entry["mimeType"] for entry in result["contents"]] == ["application/json"]


@pytest.mark.parametrize("era", [LEGACY, MODERN])
@pytest.mark.parametrize(
    ("uri", "reason"),
    [
        (f"{PDF}?pages=0", "page 0 does not exist: pages are numbered from 1"),
        (f"{PDF}?pages=5", "past the end: papers/pdflatex-4-pages.pdf has 4 pages"),
        (f"{PDF}?pages=3-2", "the range 3-2 runs backwards"),
        (f"{PDF}?pages=1-51", "51 pages is more than one part may hold (50)"),
        (f"{PDF}?pages=two", "malformed pages 'two': use a page (3) or a range (3-5)"),
        (
            f"{PDF}?section=intro",
            "papers/pdflatex-4-pages.pdf is paginated: address its pages with ?pages=N",
        ),
        (f"{GUIDE}?pages=1", "guide.md has no pages; address its sections with ?section=slug"),
        (
            f"{GUIDE}?section=large-tests",
            "guide.md has no section 'large-tests'; its sections are: testing-guide, small-tests, "
            "medium-tests, fixtures, setext-heading, medium-tests-1, appendix",
        ),
        (
            f"{GUIDE}?pages=1&section=x",
            "malformed part query 'pages=1&section=x': give pages or section, not both",
        ),
        (
            f"{GUIDE}?lines=1",
            "malformed part query 'lines=1': use ?pages=N, ?pages=N-M or ?section=slug",
        ),
        (f"{GUIDE}?section=", "malformed part query: section needs a slug (?section=slug)"),
        (
            "docshelf://shelf/papers/broken.pdf?pages=1",
            "papers/broken.pdf has no derived formats (corrupt); "
            "only the whole document can be read",
        ),
    ],
)
def test_a_part_that_does_not_exist_is_not_found_with_the_reason(
    raw: RawClient, era: str, uri: str, reason: str
) -> None:
    if era == MODERN:
        body = raw.modern("resources/read", {"uri": uri}).json()
    else:
        body = raw.legacy(raw.initialize(), "resources/read", {"uri": uri}).json()
    validate_error(era, body)
    assert body["error"]["code"] == NOT_FOUND[era]
    assert body["error"]["data"] == {"uri": uri, "reason": reason}
    # Nothing lost: the document itself still reads.
    assert read(raw, uri.partition("?")[0])["contents"]


def test_part_metadata_comes_from_the_index(raw: RawClient) -> None:
    uri = f"{GUIDE}?section=fixtures"
    body = raw.modern("resources/metadata", {"uri": uri}).json()
    validate(MODERN, "JSONRPCResultResponse", body)
    described = body["result"]["metadata"]
    for resource in described:
        validate(MODERN, "Resource", resource)
        assert resource["uri"] == uri and resource["title"] == "Fixtures"
        assert "size" not in resource  # made on demand: its size is not known before
        part = resource["_meta"]["dev.docshelf/document"]["part"]
        assert part == {"document": GUIDE, "section": "fixtures"}
    assert [r["mimeType"] for r in described] == [
        "text/markdown",
        "text/plain",
        "application/json",
        "application/pdf",
    ]


def test_document_metadata_says_how_to_address_its_parts(raw: RawClient) -> None:
    pdf = raw.modern("resources/metadata", {"uri": PDF}).json()["result"]["metadata"][0]
    pages = pdf["_meta"]["dev.docshelf/document"]["parts"]["pages"]
    assert pages == {"count": 4, "uriTemplate": f"{PDF}{{?pages}}"}
    guide = raw.modern("resources/metadata", {"uri": GUIDE}).json()["result"]["metadata"][0]
    outline = guide["_meta"]["dev.docshelf/document"]["parts"]["outline"]
    assert [entry["uri"] for entry in outline][:3] == [
        f"{GUIDE}?section=testing-guide",
        f"{GUIDE}?section=small-tests",
        f"{GUIDE}?section=medium-tests",
    ]
    # Every listed part reads.
    for entry in outline:
        assert read(raw, entry["uri"])["contents"]


def test_parts_are_not_listed(raw: RawClient) -> None:
    uris: list[str] = []
    cursor = None
    while True:
        result = raw.modern("resources/list", {"cursor": cursor} if cursor else {}).json()["result"]
        uris += [r["uri"] for r in result["resources"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert GUIDE in uris and not any("?" in uri for uri in uris)


@pytest.mark.anyio
async def test_a_part_subscriber_hears_about_its_document(
    tmp_path: Path,
) -> None:
    """2025-11-25 server/resources "Subscriptions": the update names the URI subscribed to."""
    shelf = make_shelf(tmp_path / "shelf")
    (shelf / "guide.md").write_text(GUIDE_MD)
    uri = f"{GUIDE}?section=fixtures"
    updated = anyio.Event()
    received: list[types.ResourceUpdatedNotification] = []

    async def on_message(message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            received.append(message)
            updated.set()

    with serve(shelf, tmp_path / "data") as running:
        async with http_client(running.url, LEGACY, message_handler=on_message) as client:
            with pytest.warns(MCPDeprecationWarning):
                await client.subscribe_resource(uri)
            await anyio.sleep(0.5)  # the SDK opens its GET stream in the background
            temporary = shelf / "guide.md.tmp"
            temporary.write_text(GUIDE_MD.replace("Real databases only.", "Real files too."))
            os.replace(temporary, shelf / "guide.md")
            with anyio.fail_after(20):
                await updated.wait()
            again = await client.read_resource(uri)
    assert received[0].params.uri == uri
    assert "Real files too." in again.contents[0].text  # type: ignore[union-attr]
