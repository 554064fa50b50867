"""Opaque pagination cursors (2026-07-28 server/utilities/pagination)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docshelf.app.mcp.cursor import InvalidCursor, decode_cursor, encode_cursor


@given(st.text())
def test_cursor_round_trips(after: str) -> None:
    assert decode_cursor(encode_cursor(after)) == after


@given(st.one_of(st.text(), st.binary(), st.integers(), st.none(), st.lists(st.text())))
def test_decode_never_raises_anything_but_invalid_cursor(value: object) -> None:
    try:
        after = decode_cursor(value)
    except InvalidCursor:
        return
    assert encode_cursor(after) == value


@pytest.mark.parametrize("cursor", ["", "abc", "eyJ2IjoyLCJhZnRlciI6IngifQ", "!!!!", "e30"])
def test_foreign_cursors_are_invalid(cursor: str) -> None:
    with pytest.raises(InvalidCursor):
        decode_cursor(cursor)


@pytest.mark.parametrize(
    "payload",
    [b"[" * 5_000 + b"]" * 5_000, b'{"v":1,"after":' + b"[" * 5_000],
    ids=["deep-array", "deep-after"],
)
def test_a_cursor_holding_deeply_nested_json_is_invalid_not_a_recursion_error(
    payload: bytes,
) -> None:
    cursor = base64.urlsafe_b64encode(payload).decode().rstrip("=")
    with pytest.raises(InvalidCursor):
        decode_cursor(cursor)
