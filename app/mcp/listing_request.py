"""``list_documents``'s arguments read into one request, and its cursors (issue 28).

Every argument a model can get wrong is checked here, with a message that says what to
send instead (the tool returns it as a result with ``isError: true``). The cursor
carries the position after the page's last row (:mod:`storage.listing`: its sort value
and tie-breaker, keyset, never an offset), the order it belongs to and a fingerprint of
the filters, so that a cursor passed with another order or other filters is refused
with a message rather than answered with a page of some other listing.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from docshelf.app.mcp.cursor import InvalidCursor, decode_payload, encode_payload
from docshelf.app.mcp.toolkit import Arguments, ToolInputError, storable
from docshelf.converters.families import FAMILIES, NAMED_TYPES, family_named
from docshelf.storage.listing import ListingFilter, Position, Sort, TypeFilter

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
ARGUMENTS = frozenset({"shelf", "path_prefix", "type", "modified_after", "sort", "limit", "cursor"})
SORTS = tuple(sort.value for sort in Sort)

# RFC 6838 §4.2 restricted names: a type, or a type and a subtype.
_NAME = r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}"
_MIME_TYPE = re.compile(rf"{_NAME}/{_NAME}")
_MIME_PREFIX = re.compile(rf"{_NAME}/")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# What a BIGINT holds: nanoseconds since the epoch from 1677 to 2262, any size, any id.
_NS_LOW, _NS_HIGH = -(2**63), 2**63 - 1
# How much of a wrong value an error message repeats.
_SHOWN = 60

TYPE_HELP = (
    "a format family ("
    + ", ".join(family.name for family in FAMILIES)
    + "), a MIME type such as application/pdf, or a MIME prefix such as image/"
)
MODIFIED_HELP = "an ISO 8601 date or date-time, such as 2026-03-01 or 2026-03-01T09:30:00Z"


def _shown(value: str) -> str:
    return repr(value if len(value) <= _SHOWN else value[:_SHOWN] + "…")


def parse_type(value: str) -> tuple[str, TypeFilter]:
    """The ``type`` argument: its normal spelling and the types it lists.

    A word is a family (:mod:`converters.families`, "images" as "image"); a MIME type
    matches exactly, parameters aside (``text/plain; charset=utf-8`` is ``text/plain``);
    a type ending in "/" matches every subtype.
    """
    spelled = value.strip().lower()
    if "/" not in spelled:
        family = family_named(spelled)
        if family is None:
            raise ToolInputError(f"type must be {TYPE_HELP}; got {_shown(value)}")
        excluded = NAMED_TYPES if family.prefix else frozenset()
        return family.name, TypeFilter(family.mime_types, family.prefix, excluded)
    mime = spelled.split(";", 1)[0].strip()
    if _MIME_PREFIX.fullmatch(mime):
        return mime, TypeFilter(prefix=mime)
    if _MIME_TYPE.fullmatch(mime):
        return mime, TypeFilter(frozenset({mime}))
    raise ToolInputError(f"type must be {TYPE_HELP}; got {_shown(value)}")


def parse_modified_after(value: str) -> int:
    """The ``modified_after`` argument as nanoseconds since the epoch (an mtime's unit).

    A date is its first moment; a date-time without an offset is UTC (as every time
    docshelf shows is).
    """
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ToolInputError(
            f"modified_after must be {MODIFIED_HELP}; got {_shown(value)}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    nanoseconds = (moment - _EPOCH) // timedelta(microseconds=1) * 1000
    return max(_NS_LOW, min(nanoseconds, _NS_HIGH))


@dataclass(frozen=True, slots=True)
class ListingRequest:
    """One ``list_documents`` call, checked: which documents, in which order, from where."""

    where: ListingFilter
    type: str | None  # the type argument as :func:`parse_type` spells it
    sort: Sort
    limit: int
    after: Position | None  # None: the first page

    @property
    def fingerprint(self) -> str:
        """The filters a cursor belongs to (its order is in the cursor as itself)."""
        where = self.where
        filters = [where.shelf, where.path_prefix or None, self.type, where.modified_after_ns]
        text = json.dumps(filters, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def cursor_after(self, position: Position) -> str:
        """The cursor of the page that starts after ``position``."""
        return encode_payload(
            {"sort": self.sort.value, "at": list(position), "q": self.fingerprint}
        )


def parse_request(arguments: Mapping[str, Any], shelves: Collection[str]) -> ListingRequest:
    """The arguments of a ``list_documents`` call; :class:`ToolInputError` says what is wrong."""
    args = Arguments(arguments, ARGUMENTS)
    args.check()
    type_name, types = None, None
    if (value := args.string("type")) is not None:
        type_name, types = parse_type(value)
    after_ns = None
    if (value := args.string("modified_after")) is not None:
        after_ns = parse_modified_after(value)
    where = ListingFilter(args.shelf(shelves), args.string("path_prefix"), types, after_ns)
    sort = Sort(args.choice("sort", SORTS, Sort.PATH.value))
    limit = args.integer("limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    request = ListingRequest(where, type_name, sort, limit, None)
    cursor = args.string("cursor")
    if cursor is None:
        return request
    return ListingRequest(where, type_name, sort, limit, _position(cursor, request))


def _position(cursor: str, request: ListingRequest) -> Position:
    """Where the page ``cursor`` names starts, if it continues ``request``'s listing."""
    try:
        payload = decode_payload(cursor)
    except InvalidCursor:
        payload = {}
    sort, at = payload.get("sort"), payload.get("at")
    if (
        set(payload) != {"v", "sort", "at", "q"}
        or sort not in SORTS
        or not isinstance(at, list)
        or not _valid(sort, at)
    ):
        raise ToolInputError(
            "cursor is not one this tool gave; leave it out to list from the first page"
        )
    if sort != request.sort.value:
        raise ToolInputError(
            f"cursor continues a listing sorted by {sort}; pass sort={sort} with it, "
            "or leave cursor out to start over"
        )
    if payload["q"] != request.fingerprint:
        raise ToolInputError(
            "cursor continues a listing with other filters; pass the same shelf, "
            "path_prefix, type and modified_after with it, or leave cursor out to start over"
        )
    return (at[0], at[1])


def _valid(sort: str, at: list[Any]) -> bool:
    """Whether ``at`` is a position in ``sort`` order a database can compare: (shelf, path)
    as text, or two integers a BIGINT holds. A cursor is not signed: its contents are the
    client's, and must not reach a query they would fail."""
    if len(at) != 2:
        return False
    if sort == Sort.PATH.value:
        return all(isinstance(value, str) and storable(value) for value in at)
    return all(
        isinstance(value, int) and not isinstance(value, bool) and _NS_LOW <= value <= _NS_HIGH
        for value in at
    )
