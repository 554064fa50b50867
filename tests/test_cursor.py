"""Opaque pagination cursors (2026-07-28 server/utilities/pagination)."""

from __future__ import annotations

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
