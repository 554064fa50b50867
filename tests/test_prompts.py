"""The prompts (issue 28, item 3), on the wire, in both eras, checked against the schema.

2025-11-25 server/prompts: ``prompts/list`` (paginated), ``prompts/get`` with its
"Error Handling" (-32602 for an unknown prompt or a missing argument); 2026-07-28
server/utilities/caching: ``prompts/list`` carries caching hints; server/utilities/
completion for a ``ref/prompt``. What a prompt embeds stays within the read cap
(``DOCSHELF_MAX_READ_MB``): parts, not whole books.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.schema import validate_error, validate_response
from tests.support.servers import (
    LEGACY,
    MODERN,
    NOT_FOUND,
    RawClient,
    child_env,
    serve,
)
from tests.support.shelves import MARKDOWN, catalogued_only, long_pdf, page_mark

ERAS = [LEGACY, MODERN]
# make_shelf's, served by the session's shelf_server (tests/conftest.py).
GUIDE = "docshelf://shelf/guides/field-guide.md"  # front matter, then one section
NOTES = "docshelf://shelf/notes.txt"
PDF = "docshelf://shelf/papers/pdflatex-4-pages.pdf"  # the same filler text on pages 1-4
# The capped server: a read (and a prompt) holds at most this much.
CAP_MB = "0.03"
CAP = int(float(CAP_MB) * 1024 * 1024)
BOOK = "docshelf://shelf/book.pdf"
BOOK_PAGES = 120
HANDBOOK = "docshelf://shelf/handbook.md"
HANDBOOK_SECTIONS = 40


@pytest.fixture
def session(raw: RawClient) -> str:
    return raw.initialize()


def request(
    raw: RawClient, era: str, session: str, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    """One request in ``era`` (a 2026-07-28 ``prompts/get`` names its prompt in Mcp-Name)."""
    if era == MODERN:
        headers = {"Mcp-Name": params["name"]} if method == "prompts/get" else None
        response = raw.modern(method, params, headers=headers)
    else:
        response = raw.legacy(session, method, params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def get(
    raw: RawClient, era: str, session: str, name: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    """A ``prompts/get`` result, checked against the era's schema."""
    body = request(raw, era, session, "prompts/get", {"name": name, "arguments": arguments})
    validate_response(era, "GetPromptResult", body)
    result: dict[str, Any] = body["result"]
    assert all(message["role"] == "user" for message in result["messages"])
    return result


def get_error(
    raw: RawClient, era: str, session: str, name: str, arguments: object
) -> dict[str, Any]:
    body = request(raw, era, session, "prompts/get", {"name": name, "arguments": arguments})
    validate_error(era, body)
    error: dict[str, Any] = body["error"]
    return error


def blocks(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [message["content"] for message in result["messages"]]


def embedded(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The embedded resources of a prompt, in order."""
    return [block["resource"] for block in blocks(result) if block["type"] == "resource"]


def texts(result: dict[str, Any]) -> list[str]:
    return [block["text"] for block in blocks(result) if block["type"] == "text"]


# -- prompts/list ----------------------------------------------------------------------------


def test_prompts_list_2026_has_the_three_prompts_with_cache_hints(raw: RawClient) -> None:
    body = raw.modern("prompts/list").json()
    validate_response(MODERN, "ListPromptsResult", body)
    result = body["result"]
    # 2026-07-28 server/utilities/caching "Cacheable Results": prompts/list is one.
    assert result["ttlMs"] > 0 and result["cacheScope"] == "public"
    assert "nextCursor" not in result
    prompts = {prompt["name"]: prompt for prompt in result["prompts"]}
    assert list(prompts) == ["answer_from_shelf", "compare_documents", "summarize_document"]
    arguments = {
        name: [(a["name"], a["required"]) for a in prompt["arguments"]]
        for name, prompt in prompts.items()
    }
    assert arguments == {
        "answer_from_shelf": [("question", True), ("path_prefix", False)],
        "compare_documents": [("uri_a", True), ("uri_b", True)],
        "summarize_document": [("uri", True)],
    }
    for prompt in prompts.values():
        assert prompt["title"] and prompt["description"]
        assert all(a["title"] and a["description"] for a in prompt["arguments"])


def test_prompts_list_2025_and_the_prompts_capability(raw: RawClient) -> None:
    initialized = raw.post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {}},
        }
    ).json()
    validate_response(LEGACY, "InitializeResult", initialized)
    # server/prompts "Capabilities": the set never changes while serving.
    assert initialized["result"]["capabilities"]["prompts"] == {"listChanged": False}
    discovered = raw.modern("server/discover").json()["result"]["capabilities"]
    assert discovered["prompts"] == {"listChanged": False}
    session = raw.initialize()
    body = raw.legacy(session, "prompts/list").json()
    validate_response(LEGACY, "ListPromptsResult", body)
    assert len(body["result"]["prompts"]) == 3 and "ttlMs" not in body["result"]


@pytest.mark.parametrize("era", ERAS)
def test_a_cursor_this_server_did_not_issue_is_32602(
    raw: RawClient, session: str, era: str
) -> None:
    body = request(raw, era, session, "prompts/list", {"cursor": "bogus"})
    validate_error(era, body)
    assert body["error"] == {
        "code": -32602,
        "message": "Invalid cursor: cursor was not issued by this server",
    }


# -- prompts/get -----------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_summarize_embeds_a_short_document_whole(raw: RawClient, session: str, era: str) -> None:
    result = get(raw, era, session, "summarize_document", {"uri": GUIDE})
    assert result["description"] == f"Summarize \u201cField Guide\u201d ({GUIDE})"
    instructions, *rest = texts(result)
    assert instructions == (
        f"Summarize the document \u201cField Guide\u201d ({GUIDE}): its purpose, its main "
        "points and what it concludes. Its text is embedded below."
    )
    assert rest == []  # nothing left out
    [document] = embedded(result)
    assert document["uri"] == GUIDE and document["mimeType"] == "text/markdown"
    assert document["text"] == MARKDOWN
    assert document["_meta"]["dev.docshelf/document"]["path"] == "guides/field-guide.md"


@pytest.mark.parametrize("era", ERAS)
def test_summarize_a_part_embeds_that_part(raw: RawClient, session: str, era: str) -> None:
    part = f"{PDF}?pages=2-3"
    result = get(raw, era, session, "summarize_document", {"uri": part})
    assert texts(result)[0].startswith(
        f"Summarize the part of the document \u201cpdflatex-4-pages.pdf\u201d ({part}):"
    )
    [pages] = embedded(result)
    assert pages["uri"] == part and pages["mimeType"] == "text/markdown"
    assert pages["text"].startswith("<!-- page 2 -->") and "<!-- page 3 -->" in pages["text"]
    assert "<!-- page 4 -->" not in pages["text"]


@pytest.mark.parametrize("era", ERAS)
def test_compare_embeds_both_documents_after_their_labels(
    raw: RawClient, session: str, era: str
) -> None:
    result = get(raw, era, session, "compare_documents", {"uri_a": GUIDE, "uri_b": NOTES})
    kinds = [(block["type"], block.get("text", "")[:11]) for block in blocks(result)]
    assert kinds == [
        ("text", "Compare two"),
        ("text", "Document A:"),
        ("resource", ""),
        ("text", "Document B:"),
        ("resource", ""),
    ]
    assert [r["uri"] for r in embedded(result)] == [GUIDE, NOTES]
    assert "Second line." in embedded(result)[1]["text"]


@pytest.mark.parametrize("era", ERAS)
def test_answer_from_shelf_embeds_the_parts_that_matched(
    raw: RawClient, session: str, era: str
) -> None:
    question = "How are notes filed, by week?"
    result = get(raw, era, session, "answer_from_shelf", {"question": question})
    assert texts(result)[0] == (
        f"Answer this question from the documents of the shelf:\n\n{question}\n\n"
        "A search of the shelf for 'notes filed week' found the passages embedded below, "
        "best match first, each under the URI of its page, section or document. Answer from "
        "them, cite the URIs you use, and say plainly if they do not answer the question.\n\n"
        # Honest search: the shelf's broken and unsupported files are not searched by content.
        "The search did not read everything: 2 documents are not searched by content "
        "(conversion failed or no converter reads the type): a search finds them by title and "
        "path only."
    )
    first = embedded(result)[0]
    assert first["uri"] == f"{GUIDE}?section=field-guide"
    assert first["text"].startswith("# Field guide\n\nNotes are filed **by week**.")
    # A PDF's pages that matched, each once, under its page's URI.
    pages = get(raw, era, session, "answer_from_shelf", {"question": "What is gefburn?"})
    uris = [r["uri"] for r in embedded(pages)]
    assert uris and len(uris) == len(set(uris))
    assert all(uri.startswith(f"{PDF}?pages=") for uri in uris)


@pytest.mark.parametrize("era", ERAS)
def test_answer_from_shelf_says_plainly_when_nothing_matches(
    raw: RawClient, session: str, era: str
) -> None:
    arguments = {"question": "Where is the blind text?", "path_prefix": "guides/"}
    result = get(raw, era, session, "answer_from_shelf", arguments)
    assert blocks(result) == [
        {
            "type": "text",
            "text": "Answer this question from the documents of the shelf:\n\n"
            "Where is the blind text?\n\nA search of the shelf under 'guides/' for "
            "'blind text' found nothing: no document's title, path or text matches it. Say "
            "so plainly rather than answer from general knowledge; the "
            "question may need other words, or another folder.",
        }
    ]
    # Without the folder, the PDF's pages match.
    anywhere = get(raw, era, session, "answer_from_shelf", {"question": "blind text"})
    assert embedded(anywhere)[0]["uri"].startswith("docshelf://shelf/papers/pdflatex-4-pages.pdf?")


def test_a_long_question_is_searched_by_its_first_sixteen_words(raw: RawClient) -> None:
    question = " ".join(["filed"] + [f"word{n}" for n in range(30)]) + "?"
    result = get(raw, MODERN, "", "answer_from_shelf", {"question": question})
    words = " ".join(["filed"] + [f"word{n}" for n in range(15)])
    assert f"for '{words}' found the passages" in texts(result)[0]
    assert embedded(result)[0]["uri"] == f"{GUIDE}?section=field-guide"


# server/prompts "Error Handling": an unknown prompt and a missing argument are -32602; an
# unknown document is the era's resource-not-found code, as for resources/read.
PROMPT_ERRORS = [
    pytest.param(
        "delete_everything",
        {},
        -32602,
        "prompts/get: unknown prompt 'delete_everything'; this server has "
        "answer_from_shelf, compare_documents, summarize_document",
        id="unknown-prompt",
    ),
    pytest.param(
        "summarize_document",
        {},
        -32602,
        "summarize_document: argument uri is required: the document's URI: "
        "docshelf://shelf/path, or a part of it (?pages=3-5, ?section=slug)",
        id="missing-argument",
    ),
    pytest.param(
        "compare_documents",
        {"uri_a": GUIDE, "uri_b": "  "},
        -32602,
        "compare_documents: argument uri_b is required: the second document's URI: "
        "docshelf://shelf/path, or a part of it (?pages=3-5, ?section=slug)",
        id="blank-argument",
    ),
    pytest.param(
        "summarize_document",
        {"uri": GUIDE, "style": "short"},
        -32602,
        "summarize_document: unknown argument 'style'; this prompt takes uri",
        id="unknown-argument",
    ),
    pytest.param(
        "summarize_document",
        {"uri": 3},
        -32602,
        "prompts/get: params.arguments must map names to strings; the value of 'uri' is not "
        "a string",
        id="not-a-string",
    ),
    pytest.param(
        "summarize_document",
        ["uri"],
        -32602,
        'prompts/get: params.arguments must be an object of strings, e.g. {"uri": '
        '"docshelf://shelf/guide.md"}',
        id="not-an-object",
    ),
    pytest.param(
        "compare_documents",
        {"uri_a": GUIDE, "uri_b": GUIDE},
        -32602,
        f"compare_documents: uri_a and uri_b are the same, {GUIDE}; name two documents "
        "(or two parts) to compare",
        id="same-document",
    ),
    pytest.param(
        "summarize_document",
        {"uri": "docshelf://shelf/papers/broken.pdf"},
        -32602,
        "summarize_document: docshelf://shelf/papers/broken.pdf has no text to embed "
        "(corrupt: not a readable PDF (PdfStreamError: Stream has ended unexpectedly)); its "
        "original can still be read with resources/read",
        id="failed-document",
    ),
    pytest.param(
        "answer_from_shelf",
        {"question": "???"},
        -32602,
        "answer_from_shelf: the question cannot be searched for: the query has no words to "
        'search for; give one or more words, "a quoted phrase" or a prefix*',
        id="no-words",
    ),
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("name", "arguments", "code", "message"), PROMPT_ERRORS)
def test_prompt_errors_name_what_to_fix_and_the_server_keeps_serving(
    raw: RawClient,
    session: str,
    era: str,
    name: str,
    arguments: object,
    code: int,
    message: str,
) -> None:
    error = get_error(raw, era, session, name, arguments)
    assert (error["code"], error["message"]) == (code, message)
    assert embedded(get(raw, era, session, "summarize_document", {"uri": GUIDE}))


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("uri", "message", "reason"),
    [
        (
            "docshelf://shelf/missing.md",
            "summarize_document: uri names no document: docshelf://shelf/missing.md; "
            "completion/complete offers the shelf's document URIs",
            None,
        ),
        (
            f"{GUIDE}?section=nope",
            f"summarize_document: uri names no document: {GUIDE}?section=nope "
            "(guides/field-guide.md has no section 'nope'; its sections are: field-guide); "
            "completion/complete offers the shelf's document URIs",
            "guides/field-guide.md has no section 'nope'; its sections are: field-guide",
        ),
    ],
    ids=["document", "part"],
)
def test_an_unknown_uri_is_the_eras_resource_not_found(
    raw: RawClient, session: str, era: str, uri: str, message: str, reason: str | None
) -> None:
    error = get_error(raw, era, session, "summarize_document", {"uri": uri})
    assert error["code"] == NOT_FOUND[era]
    assert error["message"] == message
    assert error["data"]["uri"] == uri and error["data"]["argument"] == "uri"
    assert error["data"].get("reason") == reason


# -- completion/complete of a prompt's arguments (server/utilities/completion) ----------------


def complete(
    raw: RawClient,
    era: str,
    session: str,
    prompt: str,
    argument: str,
    value: str,
) -> dict[str, Any]:
    params = {
        "ref": {"type": "ref/prompt", "name": prompt},
        "argument": {"name": argument, "value": value},
    }
    return request(raw, era, session, "completion/complete", params)


def completion(raw: RawClient, era: str, session: str, *args: str) -> dict[str, Any]:
    body = complete(raw, era, session, *args)
    validate_response(era, "CompleteResult", body)
    result: dict[str, Any] = body["result"]["completion"]
    return result


@pytest.mark.parametrize("era", ERAS)
def test_document_arguments_complete_to_document_uris(
    raw: RawClient, session: str, era: str
) -> None:
    assert completion(
        raw, era, session, "summarize_document", "uri", "docshelf://shelf/guides/"
    ) == {
        "values": [GUIDE],
        "total": 1,
        "hasMore": False,
    }
    everything = completion(raw, era, session, "compare_documents", "uri_b", "docsh")
    assert everything["total"] == 9 and everything["hasMore"] is False
    assert GUIDE in everything["values"] and NOTES in everything["values"]
    # Typed percent-encoded, cut inside a character: "Straße" is "Stra%C3%9Fe".
    for typed in ("docshelf://shelf/Stra%C3", "docshelf://shelf/Stra%C3%9", "docshelf://shelf/S"):
        assert completion(raw, era, session, "compare_documents", "uri_a", typed)["values"] == [
            "docshelf://shelf/Stra%C3%9Fe%20plan.md"
        ]
    assert completion(raw, era, session, "summarize_document", "uri", "file:///") == {
        "values": [],
        "total": 0,
        "hasMore": False,
    }


@pytest.mark.parametrize("era", ERAS)
def test_path_prefix_completes_to_folders_and_question_to_nothing(
    raw: RawClient, session: str, era: str
) -> None:
    top = completion(raw, era, session, "answer_from_shelf", "path_prefix", "")
    assert top == {
        "values": [
            "Straße plan.md",
            "data.json",
            "guides/",
            "notes.txt",
            "page.html",
            "papers/",
            "table.csv",
        ],
        "total": 7,
        "hasMore": False,
    }
    assert completion(raw, era, session, "answer_from_shelf", "path_prefix", "pa")["values"] == [
        "page.html",
        "papers/",
    ]
    assert completion(raw, era, session, "answer_from_shelf", "question", "how") == {
        "values": [],
        "total": 0,
        "hasMore": False,
    }


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("prompt", "argument", "message"),
    [
        (
            "nope",
            "uri",
            "completion/complete: unknown prompt 'nope'; this server has answer_from_shelf, "
            "compare_documents, summarize_document",
        ),
        (
            "summarize_document",
            "path",
            "completion/complete: the prompt 'summarize_document' has no argument 'path' "
            "(it has uri)",
        ),
    ],
)
def test_completing_an_unknown_prompt_or_argument_is_32602(
    raw: RawClient, session: str, era: str, prompt: str, argument: str, message: str
) -> None:
    body = complete(raw, era, session, prompt, argument, "")
    validate_error(era, body)
    assert body["error"]["code"] == -32602 and body["error"]["message"] == message


# -- the read cap: parts, not whole books ------------------------------------------------------


def handbook() -> str:
    """A long Markdown document: one title over many sections of about 1.3 KB each."""
    body = "Every section says the same about the handbook's subject, at length. " * 18
    sections = "".join(
        f"## Section {n}\n\n{page_mark(n)} {body}\n\n" for n in range(1, HANDBOOK_SECTIONS + 1)
    )
    return f"# Handbook\n\nWhat this handbook is for.\n\n{sections}"


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawClient]:
    """A server whose reads hold at most CAP (30 KiB), over a 120-page PDF (about 130 KB of
    Markdown) and a 52 KB Markdown handbook; its lists are pages of two."""
    base = tmp_path_factory.mktemp("capped")
    shelf = base / "shelf"
    shelf.mkdir()
    (shelf / "book.pdf").write_bytes(long_pdf(BOOK_PAGES))
    (shelf / "handbook.md").write_text(handbook())
    (shelf / "note.md").write_text("# A note\n\nShort enough to embed whole.\n")
    env = child_env(DOCSHELF_MAX_READ_MB=CAP_MB)
    with serve(shelf, base / "data", "--page-size", "2", env=env) as running:
        client = RawClient(running.url)
        yield client
        client.close()


def embedded_size(result: dict[str, Any]) -> int:
    return sum(len(resource["text"].encode()) for resource in embedded(result))


def pages_of(uri: str) -> tuple[int, int]:
    first, _, last = uri.partition("?pages=")[2].partition("-")
    return int(first), int(last or first)


def test_prompts_list_is_paged_by_the_page_size(capped: RawClient) -> None:
    """basic/utilities/pagination: the second page follows the cursor of the first."""
    first = capped.modern("prompts/list").json()
    validate_response(MODERN, "ListPromptsResult", first)
    assert [p["name"] for p in first["result"]["prompts"]] == [
        "answer_from_shelf",
        "compare_documents",
    ]
    cursor = first["result"]["nextCursor"]
    second = capped.modern("prompts/list", {"cursor": cursor}).json()
    validate_response(MODERN, "ListPromptsResult", second)
    assert [p["name"] for p in second["result"]["prompts"]] == ["summarize_document"]
    assert "nextCursor" not in second["result"]


@pytest.mark.parametrize("era", ERAS)
def test_summarize_a_long_pdf_embeds_its_first_pages_and_names_the_rest(
    capped: RawClient, era: str
) -> None:
    session = capped.initialize() if era == LEGACY else ""
    result = get(capped, era, session, "summarize_document", {"uri": BOOK})
    instructions, left_out = texts(result)
    assert "It is too long to embed whole (" in instructions
    assert "this prompt embeds at most 30.7 KB, DOCSHELF_MAX_READ_MB" in instructions
    assert embedded_size(result) <= CAP
    # Page ranges from page 1, in order, each at most 50 pages, without a gap.
    ranges = [pages_of(resource["uri"]) for resource in embedded(result)]
    assert ranges[0][0] == 1
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ranges))
    last = ranges[-1][1]
    assert 10 < last < BOOK_PAGES, "the budget holds some pages, not the book"
    text = "".join(resource["text"] for resource in embedded(result))
    assert page_mark(1) in text and page_mark(last) in text and page_mark(last + 1) not in text
    # What is left out is named by URI, from the next page to the end, 50 pages at most each.
    lines = left_out.splitlines()
    assert lines[0] == (
        "Not embedded in this prompt (read any of these with resources/read or the "
        "read_document tool if you need it):"
    )
    assert lines[2] == "over the budget of this prompt (30.7 KB, DOCSHELF_MAX_READ_MB):"
    named = [line.removeprefix("- ") for line in lines[3:]]
    spans = [pages_of(uri) for uri in named]
    assert spans[0][0] == last + 1 and spans[-1][1] == BOOK_PAGES
    assert all(b - a < 50 for a, b in spans)
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(spans))
    # ... each in a range one read can return (as a model would read it: read_document).
    for uri in named:
        params = {"name": "read_document", "arguments": {"uri": uri, "format": "markdown"}}
        read = capped.modern("tools/call", params, headers={"Mcp-Name": "read_document"}).json()
        validate_response(MODERN, "CallToolResult", read)
        [block] = read["result"]["content"]
        assert page_mark(pages_of(uri)[0]) in block["resource"]["text"]


@pytest.mark.parametrize("era", ERAS)
def test_summarize_a_long_markdown_file_embeds_its_sections_in_order(
    capped: RawClient, era: str
) -> None:
    """The title's section is the whole file, over the cap: its sub-sections are embedded
    instead, as many as fit, and the title's section is named as embedded only through them."""
    session = capped.initialize() if era == LEGACY else ""
    result = get(capped, era, session, "summarize_document", {"uri": HANDBOOK})
    assert embedded_size(result) <= CAP
    uris = [resource["uri"] for resource in embedded(result)]
    count = len(uris)
    assert uris == [f"{HANDBOOK}?section=section-{n}" for n in range(1, count + 1)]
    assert 5 < count < HANDBOOK_SECTIONS
    left_out = texts(result)[-1]
    assert (
        "embedded through its sub-sections only (its text before them is not):\n"
        f"- {HANDBOOK}?section=handbook\n"
    ) in left_out
    assert left_out.endswith(
        "\n".join(
            f"- {HANDBOOK}?section=section-{n}" for n in range(count + 1, HANDBOOK_SECTIONS + 1)
        )
    )


def test_a_section_of_a_markdown_file_over_the_cap_can_be_read(capped: RawClient) -> None:
    """The defect: a part is cut from its document's whole original, and a Markdown file over
    DOCSHELF_MAX_READ_MB could not even be read to cut it (-32603 "Cannot read …: 52… bytes
    is over the limit of 31457"), though only the part, far smaller, is returned."""
    uri = f"{HANDBOOK}?section=section-3"
    body = capped.modern("resources/read", {"uri": uri}).json()
    validate_response(MODERN, "ReadResourceResult", body)
    markdown = next(c for c in body["result"]["contents"] if c["mimeType"] == "text/markdown")
    assert markdown["text"].startswith(f"## Section 3\n\n{page_mark(3)} ")
    # The whole file is still over the cap for one read, as before.
    whole = capped.modern("resources/read", {"uri": HANDBOOK}).json()
    validate_error(MODERN, whole)
    assert whole["error"]["message"].startswith(f"Every format of {HANDBOOK} is over the ")


def test_compare_shares_the_cap_and_embeds_the_short_document_whole(capped: RawClient) -> None:
    note = "docshelf://shelf/note.md"
    result = get(capped, MODERN, "", "compare_documents", {"uri_a": BOOK, "uri_b": note})
    resources = embedded(result)
    assert resources[-1]["uri"] == note, "B comes after A, whole"
    assert all(r["uri"].startswith(f"{BOOK}?pages=") for r in resources[:-1])
    assert embedded_size(result) <= CAP
    # The note took little: the book had more than half the cap.
    assert embedded_size(result) - len(resources[-1]["text"].encode()) > CAP // 2
    assert "shared between them" in texts(result)[0]


def test_answer_from_shelf_stays_within_the_cap(capped: RawClient) -> None:
    result = get(capped, MODERN, "", "answer_from_shelf", {"question": "shelf reader"})
    assert embedded(result) and embedded_size(result) <= CAP
    assert all("?pages=" in r["uri"] or "?section=" in r["uri"] for r in embedded(result))


# -- documents still being converted -----------------------------------------------------------


def test_a_document_still_converting_is_a_clear_error_and_pending_hits_are_named(
    tmp_path: Path,
) -> None:
    """A read converts a pending document ahead of the queue, for DOCSHELF_READ_WAIT (here
    none): past that, the prompt says it is still being converted (-32603, data.reason
    pending, as resources/read says for a part); a search hit on a pending document is named
    as pending, not waited for."""
    shelf, data = tmp_path / "shelf", tmp_path / "data"
    shelf.mkdir()
    (shelf / "book.pdf").write_bytes(long_pdf(60))
    (shelf / "orchard.md").write_text("# Orchard\n\nApples and pears.\n")
    catalogued_only(shelf, data)
    env = child_env(DOCSHELF_READ_WAIT="0")
    with serve(shelf, data, "--no-index", env=env, formats_built=False) as running:
        client = RawClient(running.url)
        body = request(
            client,
            MODERN,
            "",
            "prompts/get",
            {
                "name": "summarize_document",
                "arguments": {"uri": BOOK},
            },
        )
        validate_error(MODERN, body)
        assert body["error"] == {
            "code": -32603,
            "message": f"summarize_document: {BOOK} is still being converted to be embedded "
            "in a prompt; retry in a few seconds, or subscribe to it to hear when it is ready",
            "data": {"uri": BOOK, "reason": "pending", "argument": "uri"},
        }
        result = get(client, MODERN, "", "answer_from_shelf", {"question": "orchard"})
        assert embedded(result) == []
        assert texts(result) == [
            "Answer this question from the documents of the shelf:\n\norchard\n\nA search of "
            "the shelf for 'orchard' found 1 match, but none of them could be embedded here "
            "(the list below says why). Say so plainly rather than answer from general "
            "knowledge.\n\nThe search did not read everything: 2 documents are still waiting "
            "for conversion: until then a search finds them by title and path only; search "
            "again shortly.",
            "Not embedded in this prompt (read any of these with resources/read or the "
            "read_document tool if you need it):\n\nstill being converted; it can be read "
            "once it is ready:\n- docshelf://shelf/orchard.md",
        ]
        client.close()
