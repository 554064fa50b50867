"""Resource URIs (DESIGN D3): stable, canonical, and never outside their shelf."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.storage.uris import InvalidUri, build_uri, parse_uri, shelf_name_for

# Any name a file system allows, backslashes and control characters included (issue 16.5).
segment = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1
).filter(lambda s: s not in (".", ".."))
paths = st.lists(segment, min_size=1, max_size=5).map("/".join)
shelves = st.from_regex(r"[a-z0-9](?:[a-z0-9._-]{0,20}[a-z0-9])?", fullmatch=True)


@given(shelves, paths)
def test_uri_round_trips_for_any_path(shelf: str, path: str) -> None:
    uri = build_uri(shelf, path)
    assert uri.startswith(f"docshelf://{shelf}/")
    assert uri.isascii() and " " not in uri
    address = parse_uri(uri)
    assert (address.shelf, address.path) == (shelf, path)


@given(st.text())
def test_parse_uri_accepts_only_canonical_uris(text: str) -> None:
    try:
        address = parse_uri(text)
    except InvalidUri:
        return
    assert address.uri == text


@pytest.mark.parametrize(
    "uri",
    [
        "docshelf://docs/../etc/passwd",
        "docshelf://docs/a/%2E%2E/b",
        "docshelf://docs/%2e%2e",
        "docshelf://docs/a%2Fb",
        "docshelf://docs//etc/passwd",
        "docshelf://docs/a%00b",
        "docshelf://docs/",
        "docshelf://docs",
        "docshelf://Docs/a.md",
        "file:///etc/passwd",
        "docshelf://docs/a.md?x=1",
        "docshelf://docs/a%20b.md#frag",
        "docshelf://docs/%ff.md",
        "docshelf://docs/a b.md",
    ],
)
def test_traversal_and_non_canonical_uris_are_refused(uri: str) -> None:
    with pytest.raises(InvalidUri):
        parse_uri(uri)


def test_non_ascii_names_are_percent_encoded_per_segment() -> None:
    assert build_uri("docs", "Straße plan.md") == "docshelf://docs/Stra%C3%9Fe%20plan.md"
    assert build_uri("docs", "a b/c:d@e.md") == "docshelf://docs/a%20b/c:d@e.md"


def test_backslashes_and_control_characters_are_percent_encoded() -> None:
    assert build_uri("docs", "a\\b.md") == "docshelf://docs/a%5Cb.md"
    assert build_uri("docs", "new\nline\t.md") == "docshelf://docs/new%0Aline%09.md"
    assert parse_uri("docshelf://docs/a%5Cb.md").path == "a\\b.md"


def test_a_name_that_is_not_utf8_has_no_uri() -> None:
    undecodable = b"caf\xe9.md".decode("utf-8", "surrogateescape")
    with pytest.raises(InvalidUri, match=r"caf\\\\xe9.md' is not valid UTF-8"):
        build_uri("docs", undecodable)


def test_shelf_names_are_derived_from_folder_names() -> None:
    assert shelf_name_for("My Docs") == "my-docs"
    assert shelf_name_for("...") == "shelf"
    assert shelf_name_for("Reports_2026") == "reports_2026"
