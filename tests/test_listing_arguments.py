"""``list_documents``'s argument parser and cursors (issue 28), property by property.

Whatever a model sends, the parser answers with a request or with a
:class:`ToolInputError` whose message says what to send instead — never another
exception, which would reach the client as an internal error. A cursor it issued
leads back to the same position; one it did not issue, or one passed with another
order or other filters, is refused with its own message.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from docshelf.app.mcp.cursor import encode_payload
from docshelf.app.mcp.listing_request import (
    ARGUMENTS,
    DEFAULT_LIMIT,
    MAX_LIMIT,
    ListingRequest,
    parse_modified_after,
    parse_request,
    parse_type,
)
from docshelf.app.mcp.toolkit import ToolInputError
from docshelf.converters.families import FAMILIES, FAMILY_BY_NAME, NAMED_TYPES
from docshelf.storage.listing import Sort, TypeFilter

SHELVES = ("docs", "notes")
EAST_2 = timezone(timedelta(hours=2))
TYPE_ERROR = (
    "type must be a format family (pdf, word, slides, spreadsheet, odt, rtf, ebook, mail, "
    "markup, markdown, notebook, feed, html, json, text, archive, image, audio, video), a "
    "MIME type such as application/pdf, or a MIME prefix such as image/; got "
)
MODIFIED_ERROR = (
    "modified_after must be an ISO 8601 date or date-time, such as 2026-03-01 or "
    "2026-03-01T09:30:00Z; got "
)
FOREIGN_CURSOR = "cursor is not one this tool gave; leave it out to list from the first page"
UNSTORABLE = "{name} holds a character no document name or text can: NUL or an unpaired surrogate"
OTHER_FILTERS = (
    "cursor continues a listing with other filters; pass the same shelf, path_prefix, type "
    "and modified_after with it, or leave cursor out to start over"
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=5,
)


# --------------------------------------------------------------------------- #
# type
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_every_family_is_found_by_its_name_in_any_case_and_number(family: Any) -> None:
    spellings = {family.name, family.name.upper(), f"  {family.name} "}
    spellings.add(family.name.removesuffix("s") if family.name.endswith("s") else family.name + "s")
    for spelled in spellings:
        name, types = parse_type(spelled)
        assert name == family.name
        assert types.mime_types == family.mime_types and types.prefix == family.prefix
        assert types.excluded == (NAMED_TYPES if family.prefix else frozenset())


@pytest.mark.parametrize(
    ("value", "spelled", "types"),
    [
        ("application/pdf", "application/pdf", TypeFilter(frozenset({"application/pdf"}))),
        ("Text/Plain; charset=utf-8", "text/plain", TypeFilter(frozenset({"text/plain"}))),
        ("image/", "image/", TypeFilter(prefix="image/")),
        ("application/vnd.ms-excel", "application/vnd.ms-excel", None),
    ],
)
def test_a_mime_type_matches_exactly_and_a_prefix_every_subtype(
    value: str, spelled: str, types: TypeFilter | None
) -> None:
    name, parsed = parse_type(value)
    assert name == spelled
    assert parsed == (types or TypeFilter(frozenset({spelled})))


@given(st.text(max_size=80))
@example("documents")
@example("pdf/x/y")
@example("/pdf")
@example("image")
def test_any_type_is_a_filter_or_an_error_naming_the_choices(value: str) -> None:
    try:
        name, types = parse_type(value)
    except ToolInputError as error:
        shown = value if len(value) <= 60 else value[:60] + "…"
        assert str(error) == TYPE_ERROR + repr(shown)
        return
    assert name in FAMILY_BY_NAME or "/" in name
    assert types.mime_types or types.prefix


# --------------------------------------------------------------------------- #
# modified_after
# --------------------------------------------------------------------------- #


@given(st.datetimes(timezones=st.none() | st.just(UTC) | st.timezones()))
def test_an_iso_date_time_is_read_to_the_microsecond(moment: datetime) -> None:
    nanoseconds = parse_modified_after(moment.isoformat())
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    exact = (aware - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1) * 1000
    assert nanoseconds == max(-(2**63), min(exact, 2**63 - 1))


@pytest.mark.parametrize(
    ("value", "moment"),
    [
        ("2026-03-01", datetime(2026, 3, 1, tzinfo=UTC)),  # a date: its first moment, UTC
        ("2026-03-01T09:30:00Z", datetime(2026, 3, 1, 9, 30, tzinfo=UTC)),
        (
            "2026-03-01T09:30+02:00",
            datetime(2026, 3, 1, 9, 30, tzinfo=timezone(timedelta(hours=2))),
        ),
        (" 20260301T0930Z ", datetime(2026, 3, 1, 9, 30, tzinfo=UTC)),
    ],
)
def test_dates_and_offsets(value: str, moment: datetime) -> None:
    assert parse_modified_after(value) == int(moment.timestamp()) * 1_000_000_000


@given(st.text(max_size=40))
@example("yesterday")
@example("2026-02-30")
@example("2026-03-01T24:00")
def test_anything_else_is_refused_with_an_example_of_what_works(value: str) -> None:
    try:
        parse_modified_after(value)
    except ToolInputError as error:
        assert str(error) == MODIFIED_ERROR + repr(value)
        return
    datetime.fromisoformat(value.strip())  # accepted: it was ISO 8601


# --------------------------------------------------------------------------- #
# The whole call
# --------------------------------------------------------------------------- #


@given(
    st.dictionaries(
        st.sampled_from(sorted(ARGUMENTS)) | st.text(max_size=8), json_values, max_size=6
    )
)
def test_any_arguments_make_a_request_or_a_message(arguments: dict[str, Any]) -> None:
    try:
        request = parse_request(arguments, SHELVES)
    except ToolInputError as error:
        assert str(error)
        return
    assert 1 <= request.limit <= MAX_LIMIT
    assert request.where.shelf in (None, *SHELVES)
    assert request.sort.value == arguments.get("sort", "path")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"sort": "date"}, "sort must be one of path, modified, size"),
        ({"limit": 0}, f"limit must be an integer from 1 to {MAX_LIMIT}"),
        ({"limit": 201}, f"limit must be an integer from 1 to {MAX_LIMIT}"),
        ({"limit": "10"}, f"limit must be an integer from 1 to {MAX_LIMIT}"),
        ({"shelf": "attic"}, "there is no shelf 'attic'; the shelves are: docs, notes"),
        ({"type": 3}, "type must be a non-empty string"),
        ({"path_prefix": "a\x00b"}, UNSTORABLE.format(name="path_prefix")),
        ({"shelf": "\udc80"}, UNSTORABLE.format(name="shelf")),
        (
            {"query": "x"},
            "unknown argument query; this tool takes cursor, limit, "
            "modified_after, path_prefix, shelf, sort, type",
        ),
    ],
)
def test_each_mistake_has_its_message(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolInputError) as raised:
        parse_request(arguments, SHELVES)
    assert str(raised.value) == message


def test_defaults() -> None:
    request = parse_request({}, SHELVES)
    assert (request.sort, request.limit, request.after, request.type) == (
        Sort.PATH,
        DEFAULT_LIMIT,
        None,
        None,
    )


# --------------------------------------------------------------------------- #
# Cursors
# --------------------------------------------------------------------------- #

# What a database can compare: no NUL, no unpaired surrogate.
storable_text = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
filters = st.fixed_dictionaries(
    {},
    optional={
        "shelf": st.sampled_from(SHELVES),
        "path_prefix": st.text(storable_text, max_size=10),
        "type": st.sampled_from(["pdf", "images", "application/pdf", "text/"]),
        "modified_after": st.sampled_from(["2026-01-01", "2026-01-01T10:00:00Z"]),
    },
)
big = st.integers(min_value=-(2**63), max_value=2**63 - 1)


def position_for(sort: Sort, data: st.DataObject) -> tuple[Any, Any]:
    if sort is Sort.PATH:
        return (data.draw(st.sampled_from(SHELVES)), data.draw(st.text(storable_text, max_size=30)))
    return (data.draw(big), data.draw(big))


@given(filters, st.sampled_from(list(Sort)), st.data())
def test_a_cursor_leads_back_to_its_position(
    arguments: dict[str, str], sort: Sort, data: st.DataObject
) -> None:
    arguments = {**arguments, "sort": sort.value}
    request = parse_request(arguments, SHELVES)
    position = position_for(sort, data)
    cursor = request.cursor_after(position)
    again = parse_request({**arguments, "cursor": cursor}, SHELVES)
    assert again.after == position
    assert again.where == request.where and again.sort == request.sort


@given(filters, st.sampled_from(list(Sort)), st.sampled_from(list(Sort)), st.data())
def test_a_cursor_passed_with_another_order_says_which(
    arguments: dict[str, str], sort: Sort, other: Sort, data: st.DataObject
) -> None:
    request = parse_request({**arguments, "sort": sort.value}, SHELVES)
    cursor = request.cursor_after(position_for(sort, data))
    if other is sort:
        return
    with pytest.raises(ToolInputError) as raised:
        parse_request({**arguments, "sort": other.value, "cursor": cursor}, SHELVES)
    assert str(raised.value) == (
        f"cursor continues a listing sorted by {sort.value}; pass sort={sort.value} with it, "
        "or leave cursor out to start over"
    )


@given(filters, filters, st.data())
def test_a_cursor_passed_with_other_filters_is_refused(
    first: dict[str, str], second: dict[str, str], data: st.DataObject
) -> None:
    one, two = parse_request(first, SHELVES), parse_request(second, SHELVES)
    cursor = one.cursor_after(position_for(Sort.PATH, data))
    if one.fingerprint == two.fingerprint:
        assert parse_request({**second, "cursor": cursor}, SHELVES).after is not None
        return
    with pytest.raises(ToolInputError) as raised:
        parse_request({**second, "cursor": cursor}, SHELVES)
    assert str(raised.value) == OTHER_FILTERS


@given(st.text(max_size=60) | st.from_regex(r"ey[A-Za-z0-9_-]{10,80}", fullmatch=True))
def test_a_cursor_this_tool_did_not_issue_is_refused(cursor: str) -> None:
    with pytest.raises(ToolInputError) as raised:
        parse_request({"cursor": cursor}, SHELVES)
    assert str(raised.value) in (FOREIGN_CURSOR, UNSTORABLE.format(name="cursor"))


@pytest.mark.parametrize(
    "fields",
    [
        {"after": "docshelf://docs/a.md"},  # a resources/list cursor
        {"sort": "path", "at": ["docs"], "q": ""},
        {"sort": "size", "at": ["docs", "a.md"], "q": ""},
        {"sort": "size", "at": [2**63, 1], "q": ""},  # more than a BIGINT holds
        {"sort": "size", "at": [True, 1], "q": ""},
        {"sort": "path", "at": ["docs", "a\x00"], "q": ""},  # no database compares a NUL
        {"sort": "path", "at": ["docs", "\ud800"], "q": ""},  # nor an unpaired surrogate
        {"sort": "name", "at": ["docs", "a.md"], "q": ""},
        {"sort": "path", "at": ["docs", "a.md"], "q": "", "extra": 1},
    ],
)
def test_a_cursor_with_fields_out_of_place_is_refused(fields: dict[str, Any]) -> None:
    request = parse_request({}, SHELVES)
    fields = {**fields, "q": request.fingerprint} if "q" in fields else fields
    with pytest.raises(ToolInputError) as raised:
        parse_request({"cursor": encode_payload(fields)}, SHELVES)
    assert str(raised.value) == FOREIGN_CURSOR


def test_the_fingerprint_ignores_how_a_filter_was_spelled() -> None:
    spelled = [
        parse_request({"type": "PDF"}, SHELVES),
        parse_request({"type": " pdfs "}, SHELVES),
        parse_request({"type": "pdf", "path_prefix": ""}, SHELVES),
    ]
    assert len({request.fingerprint for request in spelled}) == 1
    assert isinstance(spelled[0], ListingRequest)
