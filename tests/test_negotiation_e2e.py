"""Content negotiation end to end: the official SDK client declares feature tags, docshelf
orders and selects each document's representations.

SEP "Content Negotiation Extension" (``io.modelcontextprotocol/content-negotiation``, draft
v0.9.2), DESIGN D5. Every test drives ``mcp.Client`` against a real ``docshelf`` process in both
eras: 2026-07-28 (the settings ride in every request's ``_meta`` client capabilities) and
2025-11-25 (the settings are declared once, in ``initialize``), over Streamable HTTP, and for the
agent case over stdio too.

What the SEP promises is asserted literally (JSON first, Markdown first, default order, no
error). The complete order and selection are checked against the pure policy
(``app.negotiation.negotiate``, unit-tested on its own in ``tests/test_negotiation*.py``)
applied to the variants the server returned, so these tests prove the wiring, not the policy
again. Every result received is validated against the era's schema.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client import advertise
from mcp.client.caching import CacheConfig, InMemoryResponseCacheStore
from mcp.shared.exceptions import MCPError

from docshelf.app.negotiation import DEFAULT_BINARY_CAP, Role, Variant, negotiate
from docshelf.app.negotiation_features import EXTENSION_ID, parse_features
from docshelf.converters.formats import ROLE_BY_MIME_TYPE, is_textual
from tests.support.schema import validate
from tests.support.sdk import (
    CONTENT_NEGOTIATION,
    content_negotiation,
    http_client,
    raw_metadata,
    raw_read,
    raw_result,
    stdio_client,
)
from tests.support.servers import (
    LEGACY,
    MODERN,
    RunningServer,
    child_env,
    serve,
)
from tests.support.shelves import make_shelf

pytestmark = pytest.mark.anyio

ERAS = [MODERN, LEGACY]
NOT_FOUND = {MODERN: -32602, LEGACY: -32002}
OMITTED = "dev.docshelf/omitted"

MARKDOWN_DOC = "docshelf://shelf/guides/field-guide.md"
PDF_DOC = "docshelf://shelf/papers/pdflatex-4-pages.pdf"
ENCRYPTED_PDF = "docshelf://shelf/papers/libreoffice-writer-password.pdf"  # original only
HTML_DOC = "docshelf://shelf/page.html"  # has a variant of every role
DOCS = [MARKDOWN_DOC, PDF_DOC]
ORIGINAL = {  # uri -> (path on the shelf, MIME type of the original)
    MARKDOWN_DOC: ("guides/field-guide.md", "text/markdown"),
    PDF_DOC: ("papers/pdflatex-4-pages.pdf", "application/pdf"),
    ENCRYPTED_PDF: ("papers/libreoffice-writer-password.pdf", "application/pdf"),
    HTML_DOC: ("page.html", "text/html"),
}
# The server's default, DEFAULT_ORDER = original, Markdown, text, JSON, PDF, for these documents.
DEFAULT_TYPES = {
    MARKDOWN_DOC: ["text/markdown", "text/plain", "application/json", "application/pdf"],
    PDF_DOC: ["application/pdf", "text/markdown", "text/plain", "application/json"],
}

AGENT_JSON = ["agent", "format=json"]
# The SEP's Test Case 4 tags, its "Risk 2: Tag Injection" example, a non-string, an overlong tag.
INVALID_TAGS: list[Any] = ["@#$%", "format==json", "format=\n", 42, "x" * 500]
# Every registry tag and a vendor one: none of them may open anything.
EVERY_TAG = [
    "agent",
    "human",
    "mcp-capable",
    "!interactive",
    "sampling",
    "elicitation",
    "roots",
    "tasks",
    "verbosity=verbose",
    "format=json",
    "x-acme-admin",
]
OUTSIDE_THE_SHELF = [
    "docshelf://shelf/../../etc/passwd",
    "docshelf://shelf/%2E%2E/x",
    "file:///etc/passwd",
    "docshelf://other/notes.txt",
    "docshelf://shelf/.hidden.md",  # on disk, ignored by the shelf
]
TINY_CAP_MB = "0.001"
TINY_CAP = int(float(TINY_CAP_MB) * 1024 * 1024)  # as app.runtime computes it


# --------------------------------------------------------------------------- #
# Fixtures and helpers
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def capped_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """``docshelf serve`` whose binary cap (``DOCSHELF_BINARY_CAP_MB``) is about 1 KiB, so
    every PDF, original or rendered, is over it."""
    base = tmp_path_factory.mktemp("capped")
    shelf = make_shelf(base / "shelf")
    env = child_env(DOCSHELF_BINARY_CAP_MB=TINY_CAP_MB)
    with serve(shelf, base / "data", env=env) as server:
        yield server


def client(server: RunningServer, era: str, features: list[Any] | None = None) -> Client:
    """An SDK client declaring ``features`` (``None``: not declaring the extension at all)."""
    extensions = None if features is None else [content_negotiation(features)]
    return http_client(server.url, era, extensions=extensions)


def settings(features: list[Any] | None) -> dict[str, Any] | None:
    return None if features is None else {"version": "1.0", "features": features}


async def read(client: Client, era: str, uri: str) -> dict[str, Any]:
    """``resources/read`` as sent, validated, every entry a representation of ``uri``."""
    result = await raw_read(client, uri)
    validate(era, "ReadResourceResult", result)
    assert result["contents"], "a read is never empty"
    for entry in result["contents"]:
        assert entry["uri"] == uri
        data = base64.b64decode(entry["blob"]) if "blob" in entry else entry["text"].encode()
        assert entry["size"] == len(data)
    return result


async def metadata(client: Client, era: str, uri: str) -> dict[str, Any]:
    """``resources/metadata`` as sent, every entry validated as a Resource."""
    result = await raw_metadata(client, uri)
    for resource in result["metadata"]:
        validate(era, "Resource", resource)
    return result


async def list_pages(client: Client, era: str) -> list[dict[str, Any]]:
    """Every ``resources/list`` page, as sent."""
    pages: list[dict[str, Any]] = []
    cursor = None
    while True:
        request = types.ListResourcesRequest(params=types.PaginatedRequestParams(cursor=cursor))
        page = await raw_result(client, request)
        validate(era, "ListResourcesResult", page)
        pages.append(page)
        cursor = page.get("nextCursor")
        if cursor is None:
            return pages


def types_of(entries: list[dict[str, Any]]) -> list[str]:
    return [entry["mimeType"] for entry in entries]


def omitted(result: dict[str, Any]) -> list[dict[str, str]]:
    return result.get("_meta", {}).get(OMITTED, [])


def policy(
    uri: str,
    entries: list[dict[str, Any]],
    features: list[Any] | None,
    binary_cap: int = DEFAULT_BINARY_CAP,
) -> tuple[list[str], list[str]]:
    """(kept, left out) MIME types, in order, that the pure policy picks for ``entries`` (a
    document's representations as the server returned them, in any order)."""
    original_type = ORIGINAL[uri][1]
    variants = [
        Variant(
            e["mimeType"],
            Role.ORIGINAL if e["mimeType"] == original_type else ROLE_BY_MIME_TYPE[e["mimeType"]],
            e["size"],
            not is_textual(e["mimeType"]),
        )
        for e in entries
    ]
    declared = settings(features)
    capabilities = {} if declared is None else {"extensions": {EXTENSION_ID: declared}}
    selection = negotiate(variants, parse_features(capabilities), binary_cap=binary_cap)
    return [v.mime_type for v in selection.variants], [o.mime_type for o in selection.omitted]


def negotiation_sentence(instructions: str | None) -> str:
    """The one sentence of the ``initialize`` instructions about content negotiation."""
    assert instructions is not None
    assert instructions.count("Content negotiation:") == 1, instructions
    sentence = instructions[instructions.index("Content negotiation:") :]
    assert sentence.endswith("."), sentence
    assert ". " not in sentence.rstrip("."), f"more than one sentence: {sentence!r}"
    return sentence


async def assert_agent_json_first(client: Client, era: str, shelf: Path) -> None:
    for uri in DOCS:
        result = await read(client, era, uri)
        listed = await metadata(client, era, uri)
        order = types_of(result["contents"])
        assert order[0] == "application/json", (uri, order)
        assert order == policy(uri, result["contents"], AGENT_JSON)[0]
        assert sorted(order) == sorted(DEFAULT_TYPES[uri]), "reordered, nothing left out"
        assert omitted(result) == []
        assert types_of(listed["metadata"]) == order, "metadata follows the read's order"
        assert [m["size"] for m in listed["metadata"]] == [c["size"] for c in result["contents"]]
        document = json.loads(result["contents"][0]["text"])
        assert document["schema"] == "docshelf.document/v1"
        if uri == PDF_DOC:
            assert document["page_count"] == 4
        else:
            assert document["title"] == "Field Guide"
    original = (shelf / ORIGINAL[MARKDOWN_DOC][0]).read_text()
    markdown = await read(client, era, MARKDOWN_DOC)
    assert markdown["contents"][1]["text"] == original, "the original stands in for Markdown"


# --------------------------------------------------------------------------- #
# SEP Test Case 1: agent + format=json
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("era", ERAS)
async def test_case_1_agent_requesting_json_gets_json_first(
    shelf_server: RunningServer, era: str
) -> None:
    """SEP "Testing Content Negotiation", Test Case 1:

        Client features: ["agent", "format=json"]
        Expected: structuredContent with JSON object, empty content[]

    and the registry: `agent` "Client is an AI agent (not human) | ... enable structured
    responses"; `format=json` "Prefer JSON/structured output". For a resource, docshelf's
    structured form is its application/json variant: first in ``resources/read`` and, in the
    same order, in ``resources/metadata``; it parses as JSON.
    """
    async with client(shelf_server, era, AGENT_JSON) as agent:
        await assert_agent_json_first(agent, era, shelf_server.shelf)


@pytest.mark.parametrize(("mode", "era"), [(MODERN, MODERN), ("legacy", LEGACY)])
async def test_case_1_agent_requesting_json_gets_json_first_over_stdio(
    indexed_shelf: tuple[Path, Path], mode: str, era: str
) -> None:
    """SEP Test Case 1 over stdio: ``Client features: ["agent", "format=json"]`` → JSON first.

    "Parse Features: Extract and validate feature tags ... Store in Session Context: Keep
    parsed features available for all subsequent requests ... Vary Resource Content: Apply
    feature rules to resource reads" (SEP "Expected Behavior: Negotiating Server").
    """
    shelf, data = indexed_shelf
    extensions = [content_negotiation(AGENT_JSON)]
    with anyio.fail_after(60):
        async with stdio_client(str(shelf), str(data), mode=mode, extensions=extensions) as agent:
            await assert_agent_json_first(agent, era, shelf)
            if era == LEGACY:
                assert "JSON first" in negotiation_sentence(agent.session.instructions)


# --------------------------------------------------------------------------- #
# SEP Test Case 2: human (+ format=markdown)
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("features", [["human", "format=markdown"], ["human"]], ids=str)
@pytest.mark.parametrize("era", ERAS)
async def test_case_2_human_requesting_markdown_gets_markdown_first(
    shelf_server: RunningServer, era: str, features: list[str]
) -> None:
    """SEP "Testing Content Negotiation", Test Case 2:

        Client features: ["human", "format=markdown"]
        Expected: content[] with markdown text, structuredContent empty

    and the registry: `human` "Client is a human with UI rendering | Use markdown";
    `format=markdown` "Prefer markdown". Markdown comes first, then the document as a human
    would view it (the original PDF, or the PDF rendering of a Markdown file), then the rest in
    the policy's order; ``resources/metadata`` follows the same order.
    """
    async with client(shelf_server, era, features) as human:
        for uri in DOCS:
            result = await read(human, era, uri)
            listed = await metadata(human, era, uri)
            order = types_of(result["contents"])
            assert order[:2] == ["text/markdown", "application/pdf"], (uri, order)
            assert order == policy(uri, result["contents"], features)[0]
            assert sorted(order) == sorted(DEFAULT_TYPES[uri])
            assert omitted(result) == []
            assert types_of(listed["metadata"]) == order
            # Markdown: a heading, front matter, or a PDF's page marker (issue 26, class 9).
            opening = ("#", "---", "<!-- page 1 -->")
            assert result["contents"][0]["text"].lstrip().startswith(opening)
        pdf = await read(human, era, PDF_DOC)
    assert pdf["contents"][1]["size"] == (shelf_server.shelf / ORIGINAL[PDF_DOC][0]).stat().st_size


# --------------------------------------------------------------------------- #
# SEP Test Case 3: legacy client (no negotiation)
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("era", ERAS)
async def test_case_3_legacy_client_gets_the_server_default_byte_for_byte(
    shelf_server: RunningServer, era: str
) -> None:
    """SEP "Testing Content Negotiation", Test Case 3:

        Client features: [] (not declared)
        Expected: Server default format (backwards compatible)

    and the Abstract: "servers without it behave identically to today's protocol; clients
    without it work unchanged with any server". A client without the extension, one declaring
    it with an empty feature list and one declaring it without ``features`` get the same
    results, byte for byte; that result is the server default (original, Markdown, text, JSON,
    PDF) with the original's bytes as on disk and nothing left out.
    """
    declarations: list[list[Any] | None] = [None, []]
    results: dict[str, list[dict[str, Any]]] = {uri: [] for uri in DOCS}
    metadatas: dict[str, list[dict[str, Any]]] = {uri: [] for uri in DOCS}
    for features in declarations:
        async with client(shelf_server, era, features) as legacy:
            for uri in DOCS:
                results[uri].append(await read(legacy, era, uri))
                metadatas[uri].append(await metadata(legacy, era, uri))
    no_features_key = [advertise(CONTENT_NEGOTIATION, {"version": "1.0"})]
    async with http_client(shelf_server.url, era, extensions=no_features_key) as legacy:
        for uri in DOCS:
            results[uri].append(await read(legacy, era, uri))
            metadatas[uri].append(await metadata(legacy, era, uri))

    for uri in DOCS:
        undeclared, *declared = results[uri]
        for other in declared:
            assert other == undeclared, f"{uri}: an empty declaration changed the result"
        assert all(m == metadatas[uri][0] for m in metadatas[uri])
        assert types_of(undeclared["contents"]) == DEFAULT_TYPES[uri]
        assert types_of(undeclared["contents"]) == policy(uri, undeclared["contents"], None)[0]
        assert types_of(metadatas[uri][0]["metadata"]) == DEFAULT_TYPES[uri]
        assert omitted(undeclared) == []
        path, _ = ORIGINAL[uri]
        original = undeclared["contents"][0]
        on_disk = (shelf_server.shelf / path).read_bytes()
        if "blob" in original:
            assert base64.b64decode(original["blob"]) == on_disk
        else:
            assert original["text"].encode() == on_disk


# --------------------------------------------------------------------------- #
# SEP Test Case 4: invalid feature syntax
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize(
    "declared",
    [
        {"version": "1.0", "features": INVALID_TAGS},
        {"version": "1.0", "features": "format=json"},  # not a list
        {"version": 1, "features": {"format": "json"}},  # wrong types throughout
        {"version": "1.0", "features": ["sampling", "!interactive", "mcp-capable", "x-acme=1"]},
    ],
    ids=["invalid-tags", "features-not-a-list", "wrong-types", "only-unsupported-tags"],
)
@pytest.mark.parametrize("era", ERAS)
async def test_case_4_invalid_feature_syntax_is_ignored_with_defaults(
    shelf_server: RunningServer, era: str, declared: dict[str, Any]
) -> None:
    """SEP "Testing Content Negotiation", Test Case 4:

        Client features: ["@#$%", "format==json"]
        Server behavior: Log warning, ignore invalid tags, use defaults

    "Risk 2: Tag Injection ... Example: Client sends `features: ["format=\\n"]` ... Invalid tags
    SHOULD be ignored, not cause error"; and (docshelf's requirement 7) "If a client declares
    unsupported features, servers MUST respond with default content". No error; the results
    equal those of a client that declared nothing; nothing the client sent is echoed in the
    ``initialize`` instructions.
    """
    extensions = [advertise(CONTENT_NEGOTIATION, declared)]
    async with http_client(shelf_server.url, era, extensions=extensions) as odd:
        got = {uri: (await read(odd, era, uri), await metadata(odd, era, uri)) for uri in DOCS}
        instructions = odd.session.instructions
    async with client(shelf_server, era) as plain:
        want = {uri: (await read(plain, era, uri), await metadata(plain, era, uri)) for uri in DOCS}
    assert got == want
    for uri in DOCS:
        assert types_of(got[uri][0]["contents"]) == DEFAULT_TYPES[uri]
    if era == LEGACY:
        sentence = negotiation_sentence(instructions)
        assert "default order" in sentence
        for junk in ("@#$%", "==", "x" * 40, "42", "x-acme"):
            assert junk not in sentence


@pytest.mark.parametrize("era", ERAS)
async def test_case_4_invalid_tags_do_not_hide_valid_ones(
    shelf_server: RunningServer, era: str
) -> None:
    """SEP Test Case 4, "ignore invalid tags": only the invalid ones. With ``"agent"`` and
    ``"format=json"`` among the SEP's invalid tags the result is Test Case 1's, byte for byte.
    """
    async with client(shelf_server, era, [*INVALID_TAGS[:3], "agent", *INVALID_TAGS[3:]]) as odd:
        mixed = [await read(odd, era, uri) for uri in DOCS]
    async with client(shelf_server, era, [*INVALID_TAGS, *AGENT_JSON]) as odd:
        mixed_json = [await read(odd, era, uri) for uri in DOCS]
    async with client(shelf_server, era, ["agent"]) as agent:
        clean = [await read(agent, era, uri) for uri in DOCS]
    async with client(shelf_server, era, AGENT_JSON) as agent:
        clean_json = [await read(agent, era, uri) for uri in DOCS]
    assert mixed == clean
    assert mixed_json == clean_json
    assert all(types_of(r["contents"])[0] == "application/json" for r in mixed_json)


# --------------------------------------------------------------------------- #
# 2026-07-28 caching hints of negotiated results
# --------------------------------------------------------------------------- #


async def test_negotiated_reads_are_not_served_to_other_clients_from_a_shared_cache(
    shelf_server: RunningServer,
) -> None:
    """SEP Test Case 2 ("human" → "content[] with markdown text") must hold for a client whose
    SDK caches responses as 2026-07-28 allows: a ``cacheScope: "public"`` result "does not contain
    user-specific data. Any client, shared gateway, or caching proxy **MAY** store and serve the
    cached response to any user" (server/utilities/caching). So a read shaped by one client's
    features must not be labelled so that a cache may hand it to a client that declared others.
    Two SDK clients, different users (partitions) over one shared store: the agent reads first,
    then the human.
    """
    store = InMemoryResponseCacheStore()
    orders: dict[str, list[str]] = {}
    for user, features in (("agent", AGENT_JSON), ("human", ["human"])):
        cache = CacheConfig(store=store, partition=user, share_public=True)
        extensions = [content_negotiation(features)]
        async with Client(shelf_server.url, mode=MODERN, cache=cache, extensions=extensions) as c:
            result = await c.read_resource(MARKDOWN_DOC)
        orders[user] = [entry.mime_type or "" for entry in result.contents]
    assert orders["agent"][0] == "application/json"
    assert orders["human"][0] == "text/markdown", f"the human got the agent's read: {orders}"


# --------------------------------------------------------------------------- #
# verbosity=
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("era", ERAS)
async def test_verbosity_compact_returns_exactly_one_entry(
    capped_server: RunningServer, era: str
) -> None:
    """Registry: `verbosity=compact` "Prefer concise output | Minimize explanatory text; omit
    examples". For a resource: exactly one ``contents[]`` entry (the best available), and the
    rest named in result ``_meta["dev.docshelf/omitted"]`` with a reason; ``resources/metadata``
    agrees.
    """
    features = ["verbosity=compact"]
    async with client(capped_server, era) as plain:
        every = {uri: await read(plain, era, uri) for uri in DOCS}
    async with client(capped_server, era, features) as compact:
        for uri in DOCS:
            result = await read(compact, era, uri)
            listed = await metadata(compact, era, uri)
            kept, left_out = policy(uri, every[uri]["contents"], features, TINY_CAP)
            assert len(result["contents"]) == 1
            assert types_of(result["contents"]) == kept
            assert (
                result["contents"][0]
                == every[uri]["contents"][types_of(every[uri]["contents"]).index(kept[0])]
            )
            assert types_of(omitted(result)) == left_out
            assert sorted(kept + left_out) == sorted(DEFAULT_TYPES[uri])
            assert all(o["reason"] for o in omitted(result))
            assert types_of(listed["metadata"]) == kept
            assert omitted(listed) == omitted(result)


@pytest.mark.parametrize("features", [["verbosity=standard"], ["agent"]], ids=str)
@pytest.mark.parametrize("era", ERAS)
async def test_verbosity_standard_leaves_out_binaries_over_the_cap_with_the_reason(
    capped_server: RunningServer, era: str, features: list[str]
) -> None:
    """Registry: `verbosity=standard` "Default verbosity (balance)". Standard is the default
    once a client acts through the extension (so ``["agent"]`` alone behaves the same): binary
    variants over the server's cap (``DOCSHELF_BINARY_CAP_MB``) are left out and listed in result
    ``_meta["dev.docshelf/omitted"]`` with the reason; a document whose only variant is such a
    binary still comes back whole (a read is never empty).
    """
    async with client(capped_server, era) as plain:
        every = {uri: await read(plain, era, uri) for uri in [*DOCS, ENCRYPTED_PDF]}
    async with client(capped_server, era, features) as standard:
        for uri in DOCS:
            result = await read(standard, era, uri)
            listed = await metadata(standard, era, uri)
            kept, left_out = policy(uri, every[uri]["contents"], features, TINY_CAP)
            assert types_of(result["contents"]) == kept
            assert left_out == ["application/pdf"], "every PDF is over the cap"
            assert "application/pdf" not in types_of(result["contents"])
            assert all("blob" not in c or c["size"] <= TINY_CAP for c in result["contents"])
            assert types_of(omitted(result)) == left_out
            (reason,) = (o["reason"] for o in omitted(result))
            assert "cap" in reason and "verbosity=verbose" in reason
            assert types_of(listed["metadata"]) == kept
            assert omitted(listed) == omitted(result)
        lone = await read(standard, era, ENCRYPTED_PDF)
    assert lone["contents"] == every[ENCRYPTED_PDF]["contents"]
    assert types_of(lone["contents"]) == ["application/pdf"]
    assert lone["contents"][0]["size"] > TINY_CAP


@pytest.mark.parametrize("era", ERAS)
async def test_verbosity_verbose_returns_every_variant(
    capped_server: RunningServer, era: str
) -> None:
    """Registry: `verbosity=verbose` "Prefer detailed output | Include rationale, examples,
    edge cases". Every variant comes back, binaries over the cap included, nothing omitted:
    the same result, byte for byte, as for a client that did not negotiate at all.
    """
    async with client(capped_server, era, ["verbosity=verbose"]) as verbose:
        got = {uri: await read(verbose, era, uri) for uri in DOCS}
    async with client(capped_server, era) as plain:
        want = {uri: await read(plain, era, uri) for uri in DOCS}
    assert {uri: r["contents"] for uri, r in got.items()} == {
        uri: r["contents"] for uri, r in want.items()
    }
    for uri in DOCS:
        assert types_of(got[uri]["contents"]) == DEFAULT_TYPES[uri]
        assert omitted(got[uri]) == []
        assert any(c["size"] > TINY_CAP for c in got[uri]["contents"] if "blob" in c)


# --------------------------------------------------------------------------- #
# Advertising and describing the negotiation
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("era", ERAS)
async def test_server_advertises_the_extension_with_empty_settings(
    shelf_server: RunningServer, era: str
) -> None:
    """SEP "Server Extension Settings": "Servers implementing this extension MAY declare support
    via the `extensions` field in `ServerCapabilities`. An empty settings object indicates
    support" — ``"extensions": {"io.modelcontextprotocol/content-negotiation": {}}``, in
    ``server/discover`` (2026-07-28) and in the ``initialize`` result (2025-11-25).
    """
    async with client(shelf_server, era, AGENT_JSON) as agent:
        if era == MODERN:
            result = await agent.session.send_discover(MODERN)
            validate(MODERN, "DiscoverResult", result)
        else:
            initialized = agent.session.initialize_result
            assert initialized is not None
            result = initialized.model_dump(by_alias=True, exclude_none=True, mode="json")
            validate(LEGACY, "InitializeResult", result)
    assert result["capabilities"]["extensions"][CONTENT_NEGOTIATION] == {}


@pytest.mark.parametrize(
    ("features", "says"),
    [
        (None, "did not declare the extension"),
        ([], "no features declared"),
        (AGENT_JSON, "JSON first"),
        (["human", "format=markdown"], "Markdown first"),
        (["verbosity=compact"], "only the first"),
    ],
    ids=["undeclared", "empty", "agent-json", "human-markdown", "compact"],
)
async def test_initialize_instructions_say_in_one_sentence_what_was_negotiated(
    shelf_server: RunningServer, features: list[str] | None, says: str
) -> None:
    """SEP "Expected Behavior: Negotiating Server": "Log Negotiations: Debug log showing which
    features client requested"; docshelf also tells the client, in one sentence of the 2025-11-25
    ``initialize`` result's ``instructions``. For agent + format=json the order it announces is
    the order a read of a document with every kind of variant returns.
    """
    async with client(shelf_server, LEGACY, features) as legacy:
        sentence = negotiation_sentence(legacy.session.instructions)
        page = await read(legacy, LEGACY, HTML_DOC)
    assert says in sentence
    if features == AGENT_JSON:
        names = {
            "text/html": "the original",
            "text/markdown": "Markdown",
            "text/plain": "text",
            "application/json": "JSON",
            "application/pdf": "PDF",
        }
        first, *rest = (names[t] for t in types_of(page["contents"]))
        assert f"{first} first, then {', '.join(rest[:-1])} and {rest[-1]}" in sentence


# --------------------------------------------------------------------------- #
# SEP requirement 3: features never change access
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("era", ERAS)
async def test_features_are_never_authorization(shelf_server: RunningServer, era: str) -> None:
    """SEP "Risk 1: Feature Tag Spoofing": "Feature tags are for **content shape only**, not
    access control ... Authorization remains the sole mechanism for access decisions"; "Risk 4":
    "Feature tags MUST NOT be used for: Authentication ... Authorization (use access control
    lists)". With every tag declared: a URI that does not exist is still not found (-32602 in
    2026-07-28, -32002 in 2025-11-25), a path outside the shelf is still refused with the same
    error a plain client gets, and ``resources/list`` / ``resources/templates/list`` are
    identical with and without tags.
    """
    missing = ["docshelf://shelf/nope.md", *OUTSIDE_THE_SHELF]
    errors: dict[str, list[tuple[int, str, Any]]] = {}
    listings: dict[str, Any] = {}
    for label, features in (("plain", None), ("tagged", EVERY_TAG)):
        async with client(shelf_server, era, features) as peer:
            errors[label] = []
            for uri in missing:
                for call in (raw_read, raw_metadata):
                    with pytest.raises(MCPError) as caught:
                        await call(peer, uri)
                    error = caught.value.error
                    errors[label].append((error.code, error.message, error.data))
            templates = await raw_result(peer, types.ListResourceTemplatesRequest())
            validate(era, "ListResourceTemplatesResult", templates)
            listings[label] = (await list_pages(peer, era), templates)
    assert errors["tagged"] == errors["plain"]
    assert {code for code, _, _ in errors["tagged"]} == {NOT_FOUND[era]}
    assert listings["tagged"] == listings["plain"]
    listed = [r["uri"] for page in listings["tagged"][0] for r in page["resources"]]
    assert MARKDOWN_DOC in listed
    assert "docshelf://shelf/.hidden.md" not in listed


async def test_negotiated_reads_are_never_reusable_from_a_cache(
    shelf_server: RunningServer,
) -> None:
    """Caching "Cache Key": a cached response is identified by the method and its params; the
    client's features are neither, so a read they shaped is immediately stale (``ttlMs: 0``)
    and no read is ever ``public`` (one client's order must not reach another)."""
    uri = "docshelf://shelf/guides/field-guide.md"
    async with client(shelf_server, MODERN) as plain:
        default = await read(plain, MODERN, uri)
    async with client(shelf_server, MODERN, AGENT_JSON) as agent:
        shaped = await read(agent, MODERN, uri)
    assert (default["ttlMs"], default["cacheScope"]) == (60_000, "private")
    assert (shaped["ttlMs"], shaped["cacheScope"]) == (0, "private")
