"""Roots as shelves: ``docshelf stdio`` started with no shelf serves its client's roots.

2025-11-25 client/roots: a client that declares ``roots`` is asked ``roots/list``
after ``notifications/initialized`` and again at ``notifications/roots/list_changed``.
Real ``docshelf stdio`` processes over real folders, driven by the official SDK client
(its ``list_roots_callback`` and ``send_roots_list_changed``) or line by line where
the test must see the server's own request or its log; every message checked against
the 2025-11-25 schema. The parsers (root URIs, shelf names) get property tests.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.client import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from docshelf.app.mcp.roots import RootRefused, folder_of, shelf_names
from docshelf.storage.uris import is_valid_shelf_name
from tests.support.permissions import ordinary_permissions
from tests.support.schema import validate, validate_error, validate_response
from tests.support.sdk import RAW_RESULT, roots_client
from tests.support.servers import LEGACY, MODERN, run_docshelf
from tests.support.stdio import RawStdio, raw_stdio

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

WAIT = 30  # seconds; a catalog pass of these folders takes well under one
ROOTS = {"roots": {"listChanged": True}}


def folder(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


@pytest.fixture
def two_folders(tmp_path: Path) -> tuple[Path, Path]:
    notes = folder(tmp_path / "work" / "notes", {"todo.md": "# Todo\n\nwater the plants\n"})
    papers = folder(tmp_path / "My Papers", {"draft.txt": "A draft about lichens.\n"})
    return notes, papers


# -- the SDK client as the peer ---------------------------------------------------------------


class Roots:
    """What the client gives as roots, changeable while connected, and how often asked."""

    def __init__(self, *folders: Path) -> None:
        self.uris = [f.as_uri() for f in folders]
        self.asked = 0

    async def __call__(self, context: object) -> types.ListRootsResult:
        self.asked += 1
        roots = [types.Root(uri=uri) for uri in self.uris]  # type: ignore[arg-type]
        return types.ListRootsResult(roots=roots)


class Heard:
    """The server's notifications, as the SDK hands them over."""

    def __init__(self) -> None:
        self.list_changed = 0
        self.updated: list[str] = []

    async def __call__(self, message: object) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            self.list_changed += 1
        elif isinstance(message, types.ResourceUpdatedNotification):
            self.updated.append(str(message.params.uri))


async def raw(client: Client, request: Any, result: str) -> dict[str, Any]:
    """A request's result exactly as sent, checked against the 2025-11-25 schema."""
    answer = await client.session.send_request(request, RAW_RESULT)
    validate(LEGACY, result, answer)
    return answer


async def uris(client: Client) -> set[str]:
    listed = await raw(client, types.ListResourcesRequest(), "ListResourcesResult")
    return {r["uri"] for r in listed["resources"]}


async def found(client: Client, query: str) -> set[str]:
    """The documents search_documents finds for ``query``."""
    result = await client.call_tool("search_documents", {"query": query})
    assert result.structured_content is not None
    return {hit["documentUri"] for hit in result.structured_content["hits"]}


async def listed_by_tool(client: Client) -> set[str]:
    """The documents list_documents lists (its first page)."""
    result = await client.call_tool("list_documents", {})
    assert result.structured_content is not None
    return {document["uri"] for document in result.structured_content["documents"]}


async def until(check: Callable[[], Awaitable[bool]]) -> None:
    """Wait until ``check()`` holds (a change is caught up with in well under a second)."""
    with anyio.fail_after(WAIT):
        while not await check():
            await anyio.sleep(0.1)


async def changed_roots(client: Client, heard: Heard, expected: set[str]) -> None:
    """Tell the server the roots changed; the list becomes ``expected``, and the server
    says so (``notifications/resources/list_changed``)."""
    told = heard.list_changed
    await client.send_roots_list_changed()

    async def caught_up() -> bool:
        return heard.list_changed > told and await uris(client) == expected

    await until(caught_up)


async def test_roots_are_shelves_and_follow_a_root_added_and_removed_live(
    tmp_path: Path, two_folders: tuple[Path, Path]
) -> None:
    notes, papers = two_folders
    roots, heard = Roots(notes), Heard()
    async with roots_client(
        str(tmp_path / "data"), list_roots_callback=roots, message_handler=heard
    ) as client:
        # The first list waits for the roots' first catalog pass: nothing to list again.
        assert await uris(client) == {"docshelf://notes/todo.md"}

        roots.uris.append(papers.as_uri())
        both = {"docshelf://notes/todo.md", "docshelf://my-papers/draft.txt"}
        await changed_roots(client, heard, both)
        templates = await raw(
            client, types.ListResourceTemplatesRequest(), "ListResourceTemplatesResult"
        )
        assert [t["name"] for t in templates["resourceTemplates"]] == ["my-papers", "notes"]
        read = await client.read_resource("docshelf://my-papers/draft.txt")
        assert read.contents[0].text == "A draft about lichens.\n"  # type: ignore[union-attr]

        async def todo_found() -> bool:  # once converted, its words are searchable
            return await found(client, "water plants") == {"docshelf://notes/todo.md"}

        await until(todo_found)

        # Gone like a deleted file: unlisted, unreadable, unfound, its subscribers told.
        with pytest.warns(MCPDeprecationWarning):
            await client.subscribe_resource("docshelf://notes/todo.md")
        roots.uris.remove(notes.as_uri())
        await changed_roots(client, heard, {"docshelf://my-papers/draft.txt"})
        with pytest.raises(MCPError) as caught:
            await client.read_resource("docshelf://notes/todo.md")
        assert caught.value.error.code == -32002
        assert await found(client, "water plants") == set()
        assert await listed_by_tool(client) == {"docshelf://my-papers/draft.txt"}

        async def subscriber_told() -> bool:
            return heard.updated == ["docshelf://notes/todo.md"]

        await until(subscriber_told)

        # Back again: the same URIs, and the file written meanwhile found by its pass.
        (notes / "later.md").write_text("# Later\n")
        roots.uris.append(notes.as_uri())
        await changed_roots(client, heard, {*both, "docshelf://notes/later.md"})

        # A root is watched like any shelf.
        (papers / "new.txt").write_text("written while served\n")
        everything = {*both, "docshelf://notes/later.md", "docshelf://my-papers/new.txt"}

        async def new_file_listed() -> bool:
            return await uris(client) == everything

        await until(new_file_listed)
    assert roots.asked == 4


async def test_with_a_shelf_given_roots_are_never_asked(
    tmp_path: Path, two_folders: tuple[Path, Path]
) -> None:
    notes, papers = two_folders
    roots = Roots(papers)
    async with roots_client(
        str(tmp_path / "data"), "--root", str(notes), list_roots_callback=roots
    ) as client:
        assert await uris(client) == {"docshelf://notes/todo.md"}
        await client.send_roots_list_changed()
        await client.send_ping()  # answered after the notification was taken in
        assert await uris(client) == {"docshelf://notes/todo.md"}
    assert roots.asked == 0


@pytest.mark.slow  # two more processes; shelf_names' property tests hold the rule itself
async def test_the_same_folders_get_the_same_names_in_any_order(tmp_path: Path) -> None:
    # Two roots whose folders have the same name: the one whose path sorts first keeps it.
    first = folder(tmp_path / "a" / "docs", {"one.txt": "1\n"})
    second = folder(tmp_path / "b" / "docs", {"two.txt": "2\n"})
    seen = []
    for order in ((first, second), (second, first)):
        async with roots_client(
            str(tmp_path / "data"), list_roots_callback=Roots(*order)
        ) as client:
            seen.append(await uris(client))
    assert seen[0] == seen[1]
    assert "docshelf://docs/one.txt" in seen[0]
    [other] = seen[0] - {"docshelf://docs/one.txt"}
    assert re.fullmatch(r"docshelf://docs-[0-9a-f]{6}/two\.txt", other)


@pytest.mark.slow  # one more process; the line-by-line test below sends the same error
async def test_a_client_error_to_roots_list_leaves_an_empty_server_serving(tmp_path: Path) -> None:
    async def refuse(context: object) -> types.ErrorData:
        return types.ErrorData(code=-32603, message="no workspace is open")

    async with roots_client(str(tmp_path / "data"), list_roots_callback=refuse) as client:
        with anyio.fail_after(5):  # the first list does not wait for roots that will not come
            assert await uris(client) == set()
        await raw(client, types.ListResourceTemplatesRequest(), "ListResourceTemplatesResult")


@pytest.mark.slow  # one more process; the line-by-line test below covers it with the log
async def test_a_client_without_roots_gets_an_empty_server_that_says_how_to_give_a_shelf(
    tmp_path: Path,
) -> None:
    async with roots_client(str(tmp_path / "data")) as client:
        instructions = client.instructions or ""
        with anyio.fail_after(5):
            assert await uris(client) == set()
    assert "A client that gives no roots gets no documents" in instructions
    assert "--root DIR" in instructions


def test_a_replica_with_no_shelf_is_refused_at_start(tmp_path: Path) -> None:
    # A replica serves what another process indexes: it cannot follow roots, which it
    # would have to index.
    done = run_docshelf("stdio", "--no-index", "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 2
    assert "docshelf: no shelf to serve: pass --root DIR (or set DOCSHELF_SHELVES)" in done.stderr


# -- line by line: the server's own requests, and its log -------------------------------------


def answer_roots(stdio: RawStdio, roots: list[dict[str, Any]]) -> dict[str, Any]:
    """Answer the server's next request, which must be a valid roots/list; the request."""
    request = stdio.server_request()
    validate(LEGACY, "ListRootsRequest", request)
    response = {"jsonrpc": "2.0", "id": request["id"], "result": {"roots": roots}}
    validate(LEGACY, "JSONRPCResultResponse", response)
    validate(LEGACY, "ListRootsResult", response["result"])
    stdio.send(response)
    return request


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[Path]:
    """A folder its owner cannot read (the child drops root's overrides to see it so)."""
    path = folder(tmp_path / "locked", {"b.txt": "b\n"})
    path.chmod(0)
    yield path
    path.chmod(0o755)


def test_roots_list_follows_initialized_bad_roots_and_errors_are_logged_and_skipped(
    tmp_path: Path, locked: Path
) -> None:
    good = folder(tmp_path / "good", {"a.txt": "a\n"})
    missing = (tmp_path / "missing").as_uri()
    with raw_stdio(
        "--data-dir", str(tmp_path / "data"), "--no-watch", preexec_fn=ordinary_permissions()
    ) as stdio:
        validate_response(LEGACY, "InitializeResult", stdio.initialize(ROOTS))
        first = answer_roots(
            stdio,
            [
                {"uri": good.as_uri(), "name": "Good"},
                {"uri": "https://example.com/docs"},
                {"uri": missing},
                {"uri": (good / "a.txt").as_uri()},
                {"uri": "file://fileserver/share/docs"},
                {"uri": locked.as_uri()},
            ],
        )
        listed = stdio.legacy("resources/list")
        validate_response(LEGACY, "ListResourcesResult", listed)
        assert [r["uri"] for r in listed["result"]["resources"]] == ["docshelf://good/a.txt"]

        # Answers nobody waits for: made up, or one answered already.
        for stray in ("docshelf-99", 7, first["id"]):
            stdio.send({"jsonrpc": "2.0", "id": stray, "result": {"roots": []}})

        # The roots changed, and the client fails to list them: the shelves stay.
        stdio.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
        second = stdio.server_request()
        validate(LEGACY, "ListRootsRequest", second)
        assert second["id"] != first["id"]
        error = {"jsonrpc": "2.0", "id": second["id"], "error": {"code": -32601, "message": "no"}}
        validate_error(LEGACY, error)
        stdio.send(error)
        assert stdio.legacy("resources/list")["result"] == listed["result"]
        stdio.assert_serving()
        strays = ("'docshelf-99'", "7", repr(first["id"]))
        stdio.log_with(
            *(
                f"root {uri!r} is not served: {reason}"
                for uri, reason in (
                    ("https://example.com/docs", "it is not a file:// URI"),
                    (missing, "it does not exist"),
                    (
                        (good / "a.txt").as_uri(),
                        "it is not a folder (docshelf serves folders, not files)",
                    ),
                    (
                        "file://fileserver/share/docs",
                        "it names the host 'fileserver': only local folders",
                    ),
                    (
                        locked.as_uri(),
                        f"it cannot be read by uid {os.getuid()}; make the shelf readable",
                    ),
                )
            ),
            *(f"the client sent a response with id {s}, which no request of ours" for s in strays),
            "roots not followed: the client answered roots/list with error -32601: no; "
            "the shelves stay as they were (good)",
        )


def test_a_client_without_roots_is_never_asked_and_told_how_to_give_a_shelf(
    tmp_path: Path,
) -> None:
    with raw_stdio("--data-dir", str(tmp_path / "data"), "--no-watch") as stdio:
        # 2026-07-28 has no initialize and so no roots: answered at once, with nothing.
        modern = stdio.modern("resources/list")
        validate_response(MODERN, "ListResourcesResult", modern)
        assert modern["result"]["resources"] == []

        initialized = stdio.initialize({})
        validate_response(LEGACY, "InitializeResult", initialized)
        stdio.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
        ping = stdio.legacy("ping")  # the next message is its answer: no roots/list came
        validate_response(LEGACY, "EmptyResult", ping)
        listed = stdio.legacy("resources/list")
        validate_response(LEGACY, "ListResourcesResult", listed)
        stdio.log_with(
            "no shelf was given and the client declared no roots capability",
            "notifications/roots/list_changed but declared no roots capability: ignored",
        )
    assert "--root DIR" in initialized["result"]["instructions"]
    assert listed["result"]["resources"] == []


# -- the parsers: root URIs and shelf names ---------------------------------------------------

SEGMENT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1
).filter(lambda s: s not in (".", ".."))
ABSOLUTE = st.lists(SEGMENT, min_size=1, max_size=5).map(lambda parts: Path("/", *parts))


@given(ABSOLUTE)
def test_a_file_uri_names_the_folder_it_was_made_from(path: Path) -> None:
    assert folder_of(path.as_uri()) == path
    assert folder_of(path.as_uri().replace("file://", "file://localhost", 1)) == path


@given(
    st.one_of(st.text(), st.integers(), st.none(), st.builds(lambda p: "file://" + p, st.text()))
)
def test_folder_of_refuses_what_is_not_a_local_file_uri_in_one_line(uri: object) -> None:
    try:
        path = folder_of(uri)
    except RootRefused as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert isinstance(uri, str) and path.is_absolute()


NAMES = st.text(string.ascii_letters + string.digits + " ._-", min_size=1, max_size=12)
FOLDERS = st.lists(
    st.lists(NAMES, min_size=1, max_size=3).map(lambda parts: Path("/", *parts)),
    max_size=8,
    unique=True,
)


@given(FOLDERS, st.randoms(use_true_random=False))
def test_shelf_names_are_valid_unique_and_do_not_depend_on_the_order(
    folders: list[Path], random: Any
) -> None:
    names = shelf_names(folders, {})
    assert sorted(names.values()) == sorted(folders)
    assert all(is_valid_shelf_name(name) for name in names)
    shuffled = list(folders)
    random.shuffle(shuffled)
    assert shelf_names(shuffled, {}) == names


@given(FOLDERS, FOLDERS)
def test_a_served_folder_keeps_its_name_while_others_come_and_go(
    served: list[Path], more: list[Path]
) -> None:
    names = shelf_names(served, {})
    again = shelf_names([*served, *(f for f in more if f not in served)], names)
    assert {name: again[name] for name in names} == names


def test_a_folder_name_becomes_a_shelf_name() -> None:
    names = shelf_names([Path("/home/me/My Papers"), Path("/srv/Notes 2026")], {})
    assert names == {"my-papers": Path("/home/me/My Papers"), "notes-2026": Path("/srv/Notes 2026")}
    assert folder_of("file:///home/me/My%20Papers") == Path("/home/me/My Papers")
