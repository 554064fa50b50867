"""Folders as listable resources (SEP-2093, issue 28 item 1), over real HTTP in both eras.

A client that declares ``dev.docshelf/sep-2093`` (``capabilities.extensions``, or
``experimental`` in 2025-11-25) gets the shelves' root folders from ``resources/list``
and a ``capabilities`` object on every Resource; any other client keeps the flat list
and no such field. ``resources/list {uri}``, reads and metadata of a folder work for
every client. Every response is validated against its era's ``schema.json``, and the
SEP-2093 fields against the SEP's own TypeScript (tests/support/sep2093.py).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.bench_folders import add_documents
from docshelf.app.mcp.context import MODERN as MODERN_ERA
from docshelf.app.mcp.context import RequestContext
from docshelf.app.mcp.cursor import decode_cursor, encode_cursor
from docshelf.app.mcp.params import ListResourcesParams, UriParams
from docshelf.app.mcp.wire import McpError
from docshelf.app.runtime import Runtime
from docshelf.app.settings import Settings
from tests.support import sep2093
from tests.support.paths import FIXTURE_PDF
from tests.support.schema import validate, validate_error, validate_response
from tests.support.sdk import folders_extension, http_client, raw_folder_list, raw_read
from tests.support.servers import (
    CLIENT_INFO,
    LEGACY,
    MODERN,
    NOT_FOUND,
    RawClient,
    RunningServer,
    modern_meta,
    serve,
)
from tests.support.shelves import write_tree

ERAS = [LEGACY, MODERN]
A_TEXT = "# A\n\nThe letter A.\n"
ROOT = "docshelf://shelf/"
GUIDES = "docshelf://shelf/guides/"
# The shelf's root, child by child, in the order the index keeps them (by name, bytewise,
# a folder's name followed by "/"): an upper-case S first, a space before a dot, "-"
# before "/" before "0".
ROOT_CHILDREN = [
    "Straße/",
    "a b.md",
    "a.md",
    "guides-old.md",
    "guides/",
    "guides0.md",
    "many/",
    "notes.txt",
    "papers/",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    base = tmp_path_factory.mktemp("folders")
    shelf = base / "shelf"
    files = {
        "a b.md": "# Spaced\n",
        "a.md": A_TEXT,
        "guides-old.md": "# Old guides\n",
        "guides0.md": "# Guides zero\n",
        "notes.txt": "Plain notes.\n",
        "Straße/plan.md": "# Plan\n",
        "guides/field-guide.md": "# Field guide\n\n## Filing\n\nBy week.\n",
        "guides/intro.md": "# Intro\n",
        "guides/deep/deeper/x.md": "# X\n",
        **{f"many/m{n}.md": f"# M{n}\n" for n in range(1, 8)},
    }
    write_tree(shelf, files)
    (shelf / "papers").mkdir()
    shutil.copy(FIXTURE_PDF / "pdflatex-4-pages.pdf", shelf / "papers" / "report.pdf")
    empty = base / "empty"
    empty.mkdir()
    roots = [f"shelf={shelf}", f"empty={empty}"]
    with serve(shelf, base / "data", "--page-size", "3", roots=roots) as running:
        yield running


class Peer:
    """One client of ``era``, declaring ``capabilities``: a 2025 session or 2026 requests."""

    def __init__(self, server: RunningServer, era: str, capabilities: dict | None) -> None:
        self.raw = RawClient(server.url)
        self.era = era
        self.capabilities = capabilities
        self.session = self.raw.initialize(LEGACY, capabilities) if era == LEGACY else None

    def call(self, method: str, params: dict | None = None) -> dict[str, Any]:
        if self.session is not None:
            response = self.raw.legacy(self.session, method, params)
        else:
            response = self.raw.modern(method, params, capabilities=self.capabilities)
        answer: dict[str, Any] = response.json()
        if "error" in answer:
            validate_error(self.era, answer)
        return answer

    def result(self, method: str, params: dict | None, definition: str) -> dict[str, Any]:
        answer = self.call(method, params)
        assert "result" in answer, answer
        validate_response(self.era, definition, answer)
        return answer["result"]

    def check_list_request(self, params: dict[str, Any]) -> None:
        """``resources/list`` as this peer sends it: of its era, with the SEP's params."""
        sent = dict(params)
        if self.session is None:
            sent["_meta"] = modern_meta(self.capabilities)
        request = {"jsonrpc": "2.0", "id": 1, "method": "resources/list", "params": sent}
        validate(self.era, "ListResourcesRequest", request)
        sep2093.validate_sep(sep2093.LIST_PARAMS, sent)

    def children(self, uri: str) -> list[dict[str, Any]]:
        """Every child of the folder ``uri``, following the cursors; each page checked."""
        resources: list[dict[str, Any]] = []
        params: dict[str, Any] = {"uri": uri}
        while True:
            self.check_list_request(params)
            page = self.result("resources/list", params, "ListResourcesResult")
            assert len(page["resources"]) <= 3
            resources.extend(page["resources"])
            if "nextCursor" not in page:
                return resources
            params = {"uri": uri, "cursor": page["nextCursor"]}


@pytest.fixture(params=ERAS)
def opted_in(request: pytest.FixtureRequest, server: RunningServer) -> Iterator[Peer]:
    peer = Peer(server, request.param, sep2093.OPTED_IN)
    yield peer
    peer.raw.close()


@pytest.fixture(params=ERAS)
def plain(request: pytest.FixtureRequest, server: RunningServer) -> Iterator[Peer]:
    peer = Peer(server, request.param, None)
    yield peer
    peer.raw.close()


def key(resource: dict[str, Any], folder: str) -> str:
    """A child's name as ROOT_CHILDREN spells it."""
    return unquote(resource["uri"].removeprefix(folder))


def no_capabilities_anywhere(value: object) -> bool:
    if isinstance(value, dict):
        return "capabilities" not in value and all(map(no_capabilities_anywhere, value.values()))
    if isinstance(value, list):
        return all(map(no_capabilities_anywhere, value))
    return True


# -- the opt-in -------------------------------------------------------------------------------


def test_an_opted_in_client_lists_one_root_folder_per_shelf(opted_in: Peer) -> None:
    """SEP §4 "If omitted, the server returns its default resource list": for a client of
    SEP-2093, the shelves' roots, each listable (§2) and typed as a container (§6)."""
    listed = opted_in.result("resources/list", {}, "ListResourcesResult")
    assert "nextCursor" not in listed
    assert [r["uri"] for r in listed["resources"]] == ["docshelf://empty/", ROOT]
    for resource in listed["resources"]:
        sep2093.validate_sep(sep2093.RESOURCE_WITH_CAPABILITIES, resource)
        assert resource["capabilities"] == {"list": True, "subscribe": True}
        assert resource["mimeType"] == "inode/directory"
        assert "size" not in resource
    assert listed["resources"][1]["name"] == "shelf"


def test_the_2025_experimental_capability_opts_in_too(server: RunningServer) -> None:
    peer = Peer(server, LEGACY, sep2093.OPTED_IN_EXPERIMENTAL)
    listed = peer.result("resources/list", {}, "ListResourcesResult")
    assert [r["uri"] for r in listed["resources"]] == ["docshelf://empty/", ROOT]


@pytest.mark.parametrize("settings", [True, [], "yes"])
def test_a_declaration_that_is_not_an_object_does_not_opt_in(
    server: RunningServer, settings: object
) -> None:
    """2026-07-28 "Extensions": "values are per-extension settings objects"."""
    peer = Peer(server, LEGACY, {"experimental": {sep2093.EXTENSION: settings}})
    listed = peer.result("resources/list", {}, "ListResourcesResult")
    assert ROOT not in [r["uri"] for r in listed["resources"]]


def test_a_client_that_did_not_opt_in_keeps_the_flat_list_and_no_capabilities(
    plain: Peer,
) -> None:
    documents: list[str] = []
    cursor: dict[str, Any] = {}
    while True:
        page = plain.result("resources/list", cursor, "ListResourcesResult")
        assert no_capabilities_anywhere(page)
        documents.extend(r["uri"] for r in page["resources"])
        if "nextCursor" not in page:
            break
        cursor = {"cursor": page["nextCursor"]}
    assert len(documents) == 17 and not any(uri.endswith("/") for uri in documents)
    assert documents == sorted(documents)  # today's list: every document, in URI order
    read = plain.result("resources/read", {"uri": "docshelf://shelf/a.md"}, "ReadResourceResult")
    assert no_capabilities_anywhere(read)
    assert no_capabilities_anywhere(plain.call("resources/metadata", {"uri": GUIDES}))
    assert no_capabilities_anywhere(plain.children(GUIDES))


def test_every_resource_an_opted_in_client_gets_says_what_it_can_do(opted_in: Peer) -> None:
    """SEP §2 "Servers SHOULD set capabilities on all resources": documents and parts are
    not listable, folders are; everything can be subscribed to."""
    document = "docshelf://shelf/guides/field-guide.md"
    part = document + "?section=filing"
    for uri, listable in [(document, False), (part, False), (GUIDES, True)]:
        metadata = opted_in.result("resources/metadata", {"uri": uri}, "Result")["metadata"]
        for resource in metadata:
            validate(opted_in.era, "Resource", resource)
            sep2093.validate_sep(sep2093.RESOURCE_WITH_CAPABILITIES, resource)
            assert resource["capabilities"] == {"list": listable, "subscribe": True}
    for uri in [document, part]:
        read = opted_in.result("resources/read", {"uri": uri}, "ReadResourceResult")
        assert {e["uri"] for e in read["contents"]} == {uri}  # SEP §5, non-listable: same URI
        for entry in read["contents"]:
            assert entry["capabilities"] == {"list": False, "subscribe": True}


# -- resources/list {uri} ---------------------------------------------------------------------


def test_listing_a_folder_gives_its_direct_children_page_by_page(
    opted_in: Peer, plain: Peer
) -> None:
    """SEP §4: "MUST return only resources that are direct children", in pages; any client."""
    for peer in (opted_in, plain):
        children = peer.children(ROOT)
        assert [key(r, ROOT) for r in children] == ROOT_CHILDREN
        for resource in children:
            validate(peer.era, "Resource", resource)
            sep2093.validate_sep(sep2093.RESOURCE, resource)
            assert ("capabilities" in resource) is (peer is opted_in)


def test_a_sub_folder_is_a_child_with_its_own_uri(opted_in: Peer) -> None:
    children = opted_in.children(GUIDES)
    assert [key(r, GUIDES) for r in children] == ["deep/", "field-guide.md", "intro.md"]
    deep = children[0]
    assert deep["uri"] == "docshelf://shelf/guides/deep/"
    assert deep["name"] == "deep" and deep["title"] == "guides/deep"
    assert deep["mimeType"] == "inode/directory" and "size" not in deep
    assert deep["capabilities"] == {"list": True, "subscribe": True}
    assert deep["_meta"] == {"dev.docshelf/folder": {"shelf": "shelf", "path": "guides/deep/"}}
    # A document is the Resource the flat list has for it.
    assert children[1]["name"] == "guides/field-guide.md"
    assert children[1]["capabilities"] == {"list": False, "subscribe": True}
    assert [key(r, deep["uri"]) for r in opted_in.children(deep["uri"])] == ["deeper/"]
    straße = "docshelf://shelf/Stra%C3%9Fe/"
    assert [r["uri"] for r in opted_in.children(straße)] == [straße + "plan.md"]


def test_listing_a_document_says_only_folders_can_be_listed(opted_in: Peer) -> None:
    """SEP §4: "If the target resource ... does not have capabilities.list, the server
    SHOULD return an error"."""
    answer = opted_in.call("resources/list", {"uri": "docshelf://shelf/a.md"})
    assert answer["error"] == {
        "code": -32602,
        "message": "resources/list: docshelf://shelf/a.md cannot be listed: only folders can "
        '(URIs ending in "/", with capabilities.list true, such as docshelf://SHELF/); '
        "read a document with resources/read",
        "data": {"uri": "docshelf://shelf/a.md"},
    }


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        (
            "docshelf://shelf/nope/",
            "no document lies below docshelf://shelf/nope/; list docshelf://shelf/ to see "
            "the shelf's folders",
        ),
        ("docshelf://nosuch/", "there is no shelf 'nosuch'; the shelves are empty, shelf"),
        (
            "docshelf://shelf/gu%69des/",
            "docshelf://shelf/gu%69des/ is not a folder URI this server makes "
            "(docshelf://SHELF/ or docshelf://SHELF/PATH/, each path segment percent-encoded "
            "as in the documents' URIs)",
        ),
        (
            "docshelf://shelf/guides/../",
            "docshelf://shelf/guides/../ is not a folder URI this server makes "
            "(docshelf://SHELF/ or docshelf://SHELF/PATH/, each path segment percent-encoded "
            "as in the documents' URIs)",
        ),
    ],
)
def test_a_folder_that_does_not_exist_is_the_eras_resource_not_found(
    plain: Peer, uri: str, message: str
) -> None:
    """2025-11-25 server/resources "Error Handling": -32002; 2026-07-28: -32602. The same
    for a list, a read, a metadata request; and the server goes on serving."""
    for method in ("resources/list", "resources/read", "resources/metadata"):
        answer = plain.call(method, {"uri": uri})
        assert answer["error"] == {
            "code": NOT_FOUND[plain.era],
            "message": f"Resource not found: {message}",
            "data": {"uri": uri},
        }
    assert plain.children(GUIDES)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"uri": 7},
            "resources/list: params.uri must be the non-empty URI of a folder to list (one "
            'ending in "/", such as docshelf://SHELF/), or left out',
        ),
        (
            {"uri": ""},
            "resources/list: params.uri must be the non-empty URI of a folder to list (one "
            'ending in "/", such as docshelf://SHELF/), or left out',
        ),
        (
            {"uri": GUIDES, "cursor": "bm90IG91cnM"},
            "Invalid cursor: cursor was not issued by this server",
        ),
        (
            {"uri": "docshelf://shelf/\ud800/"},
            "params.uri is not valid Unicode text (a lone surrogate at index 17)",
        ),
    ],
)
def test_bad_list_params_are_invalid_params(plain: Peer, params: dict, message: str) -> None:
    answer = plain.call("resources/list", params)
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"] == message
    assert plain.children(GUIDES)


def test_a_cursor_continues_only_the_listing_that_made_it(opted_in: Peer) -> None:
    page = opted_in.result("resources/list", {"uri": ROOT}, "ListResourcesResult")
    answer = opted_in.call("resources/list", {"uri": GUIDES, "cursor": page["nextCursor"]})
    assert answer["error"] == {
        "code": -32602,
        "message": "Invalid cursor: it does not continue the listing of "
        "docshelf://shelf/guides/; start again without a cursor",
    }


# -- reading a folder, its metadata -------------------------------------------------------------


def test_reading_a_folder_returns_a_card_for_each_child_of_its_first_page(opted_in: Peer) -> None:
    """SEP §5 "For Listable Resources": children with their own URIs and metadata, not
    guaranteed complete; ``_meta`` names where resources/list carries on."""
    read = opted_in.result("resources/read", {"uri": ROOT}, "ReadResourceResult")
    contents = read["contents"]
    assert [key(e, ROOT) for e in contents] == ROOT_CHILDREN[:3]
    for entry in contents:
        sep2093.validate_sep(sep2093.RESOURCE_WITH_CAPABILITIES, entry)
        assert entry["mimeType"] == "text/markdown" and "size" not in entry
    folder, document = contents[0], contents[2]
    assert folder["capabilities"] == {"list": True, "subscribe": True}
    assert folder["text"] == (
        "## Straße/\n\n- URI: docshelf://shelf/Stra%C3%9Fe/\n- Folder: Straße/\n"
        "- 1 document lies below it; list its children with resources/list "
        '{"uri": "docshelf://shelf/Stra%C3%9Fe/"}\n'
    )
    assert folder["_meta"]["dev.docshelf/folder"]["documents"] == 1
    assert document["capabilities"] == {"list": False, "subscribe": True}
    assert document["annotations"]["lastModified"].endswith("Z")
    lines = document["text"].splitlines()
    assert lines[:6] == [
        "## A",
        "",
        "- URI: docshelf://shelf/a.md",
        "- Path: a.md",
        "- Type: text/markdown",
        f"- Size: {len(A_TEXT)} bytes",
    ]
    assert lines[-1] == f"- Modified: {document['annotations']['lastModified']}"
    assert read["_meta"]["dev.docshelf/folder"] == {"shelf": "shelf", "path": ""}
    cursor = read["_meta"]["dev.docshelf/nextCursor"]
    following = opted_in.result(
        "resources/list", {"uri": ROOT, "cursor": cursor}, "ListResourcesResult"
    )
    assert [key(r, ROOT) for r in following["resources"]] == ROOT_CHILDREN[3:6]


def test_a_document_card_says_its_pages_and_a_folder_read_ends_without_a_cursor(
    plain: Peer,
) -> None:
    read = plain.result("resources/read", {"uri": "docshelf://shelf/papers/"}, "ReadResourceResult")
    (card,) = read["contents"]
    assert card["uri"] == "docshelf://shelf/papers/report.pdf"
    assert "- Type: application/pdf" in card["text"].splitlines()
    assert "- Pages: 4" in card["text"].splitlines()
    assert "dev.docshelf/nextCursor" not in read["_meta"]
    assert no_capabilities_anywhere(read)


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    """A runtime in this process over a shelf catalogued straight into its database:
    1,001 documents in ``notes/``, a few beside."""
    base = tmp_path_factory.mktemp("in-process")
    (base / "big").mkdir()
    running = Runtime(Settings(shelves=[str(base / "big")], data_dir=base / "data"))
    running.open()
    paths = [f"notes/{n:04d}.md" for n in range(1_001)] + ["a b/c.md", "notes.md", "z.md"]
    add_documents(running.database, "big", paths)
    running.readiness.catalogued.set()
    yield running
    running.close()


IN_PROCESS = RequestContext(MODERN_ERA, MODERN, folders=True)


def test_a_folder_below_which_more_than_1000_documents_lie_says_more_than(
    runtime: Runtime,
) -> None:
    """Documents below a folder are counted up to 1,000 (a count reads an index entry per
    document): a read's card and ``_meta`` say "more than" past that."""
    folders = runtime.kernel.folders
    contents = folders.read(IN_PROCESS, UriParams("docshelf://big/"))["contents"]
    (card,) = [entry for entry in contents if entry["uri"] == "docshelf://big/notes/"]
    assert card["_meta"]["dev.docshelf/folder"] == {
        "shelf": "big",
        "path": "notes/",
        "documents": 1_000,
        "documentsAtLeast": True,
    }
    assert "- More than 1,000 documents lie below it; list its children" in card["text"]
    metadata = folders.metadata(IN_PROCESS, UriParams("docshelf://big/notes/"))
    assert metadata["metadata"][0]["_meta"] == card["_meta"]


NOTES = "docshelf://big/notes/"


@settings(max_examples=150, deadline=None)
@given(
    cursor=st.one_of(
        st.text(max_size=40),
        st.text(max_size=40).map(encode_cursor),
        st.text(max_size=20).map(lambda rest: encode_cursor(NOTES + rest)),
        st.integers(0, 1_000).map(lambda n: encode_cursor(f"{NOTES}{n:04d}.md")),
    )
)
def test_any_cursor_continues_its_folder_or_is_invalid_params(
    runtime: Runtime, cursor: str
) -> None:
    """basic/utilities/pagination: "Invalid cursors SHOULD result in an error with code
    -32602"; a cursor this folder's listing could have made continues after its child."""
    try:
        page = runtime.kernel.folders.list_resources(IN_PROCESS, ListResourcesParams(cursor, NOTES))
    except McpError as error:
        assert error.code == -32602 and error.message.startswith("Invalid cursor: ")
        return
    after = unquote(decode_cursor(cursor).removeprefix(NOTES))
    assert all(unquote(r["uri"].removeprefix(NOTES)) > after for r in page["resources"])


def test_an_empty_shelf_reads_as_one_card_never_empty_contents(opted_in: Peer) -> None:
    """2026-07-28 server/resources: "Servers MUST NOT return an empty contents array"
    (it would read as a resource that does not exist)."""
    read = opted_in.result("resources/read", {"uri": "docshelf://empty/"}, "ReadResourceResult")
    assert read["contents"] == [
        {
            "uri": "docshelf://empty/",
            "name": "empty",
            "title": "Shelf empty",
            "mimeType": "text/markdown",
            "_meta": {"dev.docshelf/folder": {"shelf": "empty", "path": ""}},
            "text": "## Shelf empty\n\nNo documents here yet.\n",
            "capabilities": {"list": True, "subscribe": True},
        }
    ]
    assert opted_in.children("docshelf://empty/") == []


def test_a_folders_metadata_is_its_resource_with_the_documents_below(opted_in: Peer) -> None:
    """SEP §3 ``resources/metadata``: the folder's own Resource."""
    (resource,) = opted_in.result(
        "resources/metadata", {"uri": "docshelf://shelf/many/"}, "Result"
    )["metadata"]
    validate(opted_in.era, "Resource", resource)
    assert resource == {
        "uri": "docshelf://shelf/many/",
        "name": "many",
        "title": "many",
        "mimeType": "inode/directory",
        "_meta": {"dev.docshelf/folder": {"shelf": "shelf", "path": "many/", "documents": 7}},
        "capabilities": {"list": True, "subscribe": True},
    }


def test_subscribing_to_a_folder_that_does_not_exist_is_32002(server: RunningServer) -> None:
    peer = Peer(server, LEGACY, sep2093.OPTED_IN)
    assert peer.result("resources/subscribe", {"uri": GUIDES}, "Result") == {}
    answer = peer.call("resources/subscribe", {"uri": "docshelf://shelf/nope/"})
    assert answer["error"]["code"] == -32002


# -- the official SDK as the peer ---------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_the_sdk_client_browses_folders_once_it_declares_the_extension(
    server: RunningServer, era: str
) -> None:
    async with http_client(server.url, era, extensions=[folders_extension()]) as client:
        roots = await client.list_resources()
        assert [r.uri for r in roots.resources] == ["docshelf://empty/", ROOT]
        page = await raw_folder_list(client, GUIDES)
        validate_response(era, "ListResourcesResult", {"jsonrpc": "2.0", "id": 1, "result": page})
        assert page["resources"][0]["uri"] == "docshelf://shelf/guides/deep/"
        read = await raw_read(client, GUIDES)
        assert {e["capabilities"]["list"] for e in read["contents"]} == {True, False}
        typed = await client.read_resource(GUIDES)
        assert len({c.uri for c in typed.contents}) == 3  # the SDK takes the children in
    async with http_client(server.url, era) as client:
        flat = await client.list_resources()
        assert ROOT not in [r.uri for r in flat.resources]


@pytest.mark.parametrize("era", ERAS)
def test_the_server_advertises_the_extension_with_empty_settings(
    server: RunningServer, era: str
) -> None:
    """2026-07-28 "Extensions": servers advertise theirs under ``capabilities.extensions``,
    in ``server/discover`` and (2025-11-25) the ``initialize`` result."""
    raw = RawClient(server.url)
    if era == MODERN:
        response = raw.modern("server/discover").json()
        validate_response(MODERN, "DiscoverResult", response)
    else:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": CLIENT_INFO},
        }
        response = raw.post(body).json()
        validate_response(LEGACY, "InitializeResult", response)
    raw.close()
    assert response["result"]["capabilities"]["extensions"][sep2093.EXTENSION] == {}


def test_what_the_opt_in_shapes_is_never_cached_for_other_clients(server: RunningServer) -> None:
    """2026-07-28 server/utilities/caching: a cache keys on the method and params, not on
    the client's capabilities, so an answer the opt-in shaped (root folders, capabilities)
    is ``private`` and stale at once; other clients' answers keep their hints."""
    opted_in = Peer(server, MODERN, sep2093.OPTED_IN)
    plain = Peer(server, MODERN, None)
    for peer, hints in [(opted_in, (0, "private")), (plain, (60_000, "public"))]:
        for params in [{}, {"uri": GUIDES}]:
            listed = peer.result("resources/list", params, "ListResourcesResult")
            assert (listed["ttlMs"], listed["cacheScope"]) == hints
    read = opted_in.result("resources/read", {"uri": GUIDES}, "ReadResourceResult")
    assert (read["ttlMs"], read["cacheScope"]) == (0, "private")
