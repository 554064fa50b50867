"""Resource URIs (DESIGN D3): stable, canonical, and never outside their shelf."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.storage.uris import (
    InvalidUri,
    build_uri,
    folder_uri,
    folders_above,
    parse_folder_uri,
    shelf_name_for,
)
from tests.support.servers import RawClient

# Any name a file system allows, backslashes and control characters included (issue 16.5).
segment = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1
).filter(lambda s: s not in (".", ".."))
paths = st.lists(segment, min_size=1, max_size=5).map("/".join)
shelves = st.from_regex(r"[a-z0-9](?:[a-z0-9._-]{0,20}[a-z0-9])?", fullmatch=True)


def segments_of(uri: str, shelf: str) -> list[str]:
    """The path segments ``uri`` names on ``shelf``, decoded as RFC 3986 §3.3 reads them."""
    assert uri.startswith(f"docshelf://{shelf}/")
    return [
        unquote(s, errors="strict") for s in uri.removeprefix(f"docshelf://{shelf}/").split("/")
    ]


@given(shelves, paths)
def test_a_uri_names_its_path_and_nothing_else(shelf: str, path: str) -> None:
    """Any file name, read back from its URI segment by segment, is itself: no name
    becomes a slash, a dot segment, a query or a fragment on the way."""
    uri = build_uri(shelf, path)
    assert uri.isascii() and uri.isprintable() and " " not in uri
    assert "?" not in uri and "#" not in uri  # a "?" starts a part's query (document_of)
    assert segments_of(uri, shelf) == path.split("/")


@pytest.mark.parametrize("path", ["..", "a/../b", ".", "a/./b", "", "a//b", "a/", "/etc/passwd"])
def test_dot_and_empty_segments_have_no_uri(path: str) -> None:
    with pytest.raises(InvalidUri):
        build_uri("docs", path)


# Files of the sample shelf (tests/support/shelves.py) the session's server serves.
NOTES = "docshelf://shelf/notes.txt"
GUIDE = "docshelf://shelf/guides/field-guide.md"
PLAN = "docshelf://shelf/Stra%C3%9Fe%20plan.md"


@pytest.mark.parametrize(
    ("canonical", "other"),
    [
        (NOTES, "docshelf://shelf/guides/../notes.txt"),
        (NOTES, "docshelf://shelf/./notes.txt"),
        (NOTES, "docshelf://shelf//notes.txt"),
        (NOTES, "docshelf://shelf/%6Eotes.txt"),
        (NOTES, "docshelf://shelf/notes.txt#top"),
        (NOTES, "docshelf://Shelf/notes.txt"),
        (GUIDE, "docshelf://shelf/guides%2Ffield-guide.md"),
        (PLAN, "docshelf://shelf/Stra%c3%9fe%20plan.md"),
        (PLAN, "docshelf://shelf/Straße plan.md"),
    ],
)
def test_only_the_canonical_uri_of_a_file_finds_it(
    raw: RawClient, canonical: str, other: str
) -> None:
    """The server never parses a URI: it looks the exact string up in the index, where
    only what :func:`build_uri` made for a file on the shelf is. Any other spelling of a
    served file — dot segments, an encoded slash, other percent-encoding, another case —
    is not found, so none can reach past the shelf either."""
    found = raw.modern("resources/read", {"uri": canonical}).json()
    assert "result" in found, found
    answer = raw.modern("resources/read", {"uri": other}).json()
    assert answer["error"]["code"] == -32602, answer


def test_non_ascii_names_are_percent_encoded_per_segment() -> None:
    assert build_uri("docs", "Straße plan.md") == "docshelf://docs/Stra%C3%9Fe%20plan.md"
    assert build_uri("docs", "a b/c:d@e.md") == "docshelf://docs/a%20b/c:d@e.md"


def test_backslashes_and_control_characters_are_percent_encoded() -> None:
    assert build_uri("docs", "a\\b.md") == "docshelf://docs/a%5Cb.md"
    assert build_uri("docs", "new\nline\t.md") == "docshelf://docs/new%0Aline%09.md"


def test_a_name_that_is_not_utf8_has_no_uri() -> None:
    undecodable = b"caf\xe9.md".decode("utf-8", "surrogateescape")
    with pytest.raises(InvalidUri, match=r"caf\\\\xe9.md' is not valid UTF-8"):
        build_uri("docs", undecodable)


def test_shelf_names_are_derived_from_folder_names() -> None:
    assert shelf_name_for("My Docs") == "my-docs"
    assert shelf_name_for("...") == "shelf"
    assert shelf_name_for("Reports_2026") == "reports_2026"


# -- folders (SEP-2093): docshelf://SHELF/PATH/ -----------------------------------------------


@given(shelves, paths)
def test_a_folder_uri_is_the_prefix_of_its_files_uris_and_reads_back(shelf: str, path: str) -> None:
    """A folder's URI is what its files' URIs share up to the folder's slash, and it is the
    one spelling parse_folder_uri takes back: to the folder's shelf and path prefix."""
    folder = folder_uri(shelf, path)
    assert build_uri(shelf, path + "/notes.md").startswith(folder)
    assert folder.endswith("/") and folder.isascii() and folder.isprintable()
    assert parse_folder_uri(folder) == (shelf, path + "/")
    assert list(folders_above(build_uri(shelf, path + "/notes.md")))[-1] == folder


@given(shelves)
def test_the_root_folder_is_the_shelf_and_a_slash(shelf: str) -> None:
    assert folder_uri(shelf, "") == f"docshelf://{shelf}/"
    assert parse_folder_uri(f"docshelf://{shelf}/") == (shelf, "")


@given(st.text(max_size=60))
def test_any_string_is_a_canonical_folder_uri_or_invalid(text: str) -> None:
    """Never another exception, and nothing but the canonical spelling is taken."""
    try:
        shelf, prefix = parse_folder_uri(text)
    except InvalidUri:
        return
    assert folder_uri(shelf, prefix.removesuffix("/")) == text


@given(shelves, paths, st.sampled_from(["%2F", "%2f", "/./", "//", "/../", "%41"]))
def test_other_spellings_of_a_folder_are_not_folders(shelf: str, path: str, odd: str) -> None:
    folder = folder_uri(shelf, path)
    spelled = folder[:-1] + odd + "x/" if odd != "%41" else folder + "%41/"
    with pytest.raises(InvalidUri):
        parse_folder_uri(spelled)


@pytest.mark.parametrize(
    "uri",
    [
        "docshelf://shelf/notes.txt",  # a document
        "docshelf://shelf/guides/field-guide.md?section=x/",  # a part
        "docshelf://Shelf/",
        "docshelf://shelf",
        "file:///shelf/",
        "docshelf://shelf/gu%69des/",  # an unreserved letter escaped
        "docshelf://shelf/Stra%c3%9fe/",  # lower-case escapes
        "docshelf://shelf/Straße/",  # not encoded
        "docshelf://shelf/%FF/",  # not UTF-8
        "docshelf://shelf/" + "a/" * 1100,  # longer than any URI the index holds
    ],
)
def test_what_is_not_a_folder_uri(uri: str) -> None:
    with pytest.raises(InvalidUri):
        parse_folder_uri(uri)


def test_the_folders_above_a_document_or_part_start_at_the_root() -> None:
    assert list(folders_above("docshelf://s/a/b%2Fc/d.md?pages=2")) == [
        "docshelf://s/",
        "docshelf://s/a/",
        "docshelf://s/a/b%2Fc/",
    ]
    assert list(folders_above("docshelf://s/top.md")) == ["docshelf://s/"]
